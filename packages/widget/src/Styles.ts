/**
 * The widget's one stylesheet, inside its shadow root: the page's selectors cannot reach in, and `all: initial` on
 * the host (important, which wins over the page's own important rules on the host) stops inherited fonts, colours
 * and spacing from leaking in. Theming goes through CSS custom properties, which do cross the boundary.
 */
export const css = `
:host{all:initial!important;display:block!important;contain:content;
--_accent:var(--feedback-accent,#1f5fbf);--_star:var(--feedback-star,#b25e00);--_star-empty:var(--feedback-star-empty,#c9ced6);
--_text:var(--feedback-text,#1f2933);--_muted:var(--feedback-muted,#52606d);--_bg:var(--feedback-background,#fff);
--_border:var(--feedback-border,#d3d8de);--_radius:var(--feedback-radius,6px);
--_font:var(--feedback-font,system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif);
font:15px/1.5 var(--_font)!important;color:var(--_text)!important;background:var(--_bg)!important;text-align:start!important}
:host([data-feedback-widget=stars]){display:inline-block!important}
*{box-sizing:border-box}
.sr{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.stars{position:relative;display:inline-flex;gap:2px;font-size:1.1em;line-height:1;color:var(--_star-empty);white-space:nowrap;vertical-align:middle}
.stars>span{position:absolute;inset:0 auto 0 0;display:inline-flex;gap:2px;overflow:hidden;color:var(--_star)}
svg{flex:none;display:block}
.inline{display:inline-flex;gap:.4em;align-items:center;color:var(--_muted);font-size:.9em}
h2,h3{margin:0 0 .5em;line-height:1.3;color:var(--_text)}
h2{font-size:1.3em}h3{font-size:1.05em}
section{margin:0 0 1.5em}
.summary{display:flex;flex-wrap:wrap;gap:1em 2em;align-items:flex-start;margin-bottom:1em}
.avg{font-size:2em;font-weight:700;line-height:1}
.hist{list-style:none;margin:0;padding:0;min-width:14em}
.hist button{display:flex;gap:.5em;align-items:center;width:100%;padding:.15em .25em;font:inherit;font-size:.9em;color:var(--_text);background:none;border:0;border-radius:var(--_radius);cursor:pointer;text-align:start}
.hist button[aria-pressed=true]{background:#eef2f7;font-weight:600}
.bar{flex:1;height:.55em;min-width:6em;background:var(--_star-empty);border-radius:1em;overflow:hidden}
.bar span{display:block;height:100%;background:var(--_star)}
.toolbar{display:flex;flex-wrap:wrap;gap:.75em;align-items:center;margin:0 0 1em}
ul.list{list-style:none;margin:0;padding:0}
.item{padding:1em 0;border-top:1px solid var(--_border)}
.item p{margin:.35em 0;white-space:pre-line;overflow-wrap:anywhere}
.meta{color:var(--_muted);font-size:.875em}
.badge{display:inline-block;padding:0 .5em;border-radius:1em;background:#e3f1e8;color:#14532d;font-size:.8em;font-weight:600}
.reply{margin:.5em 0 0 1em;padding:.5em .75em;border-inline-start:3px solid var(--_accent);background:#f5f7fa}
button,.button{font:inherit;font-weight:600;padding:.5em 1em;border-radius:var(--_radius);border:1px solid var(--_accent);background:var(--_bg);color:var(--_accent);cursor:pointer}
button.primary{background:var(--_accent);color:#fff}
button:disabled{opacity:.6;cursor:default}
button:focus-visible,select:focus-visible,input:focus-visible,textarea:focus-visible,a:focus-visible{outline:3px solid var(--_accent);outline-offset:2px}
select,input[type=text],input[type=email],textarea{font:inherit;color:var(--_text);background:var(--_bg);border:1px solid #7b8794;border-radius:var(--_radius);padding:.45em .6em;width:100%}
select{width:auto}
textarea{min-height:6em;resize:vertical}
form{display:grid;gap:.8em;margin:1em 0;padding:1em;border:1px solid var(--_border);border-radius:var(--_radius)}
label,legend{font-weight:600;font-size:.9em}
.field{display:grid;gap:.25em}
fieldset{border:0;margin:0;padding:0;min-width:0}
.rate{display:inline-flex;gap:.1em}
.rate input{position:absolute;opacity:0;width:1px;height:1px}
.rate label{display:block;font-size:1.8em;line-height:1;color:var(--_star-empty);cursor:pointer;padding:0 .05em;border-radius:4px}
.rate label.on{color:var(--_star)}
.rate input:focus-visible+label{outline:3px solid var(--_accent)}
.actions{display:flex;gap:.75em;flex-wrap:wrap}
.error{color:#a61b1b;font-size:.9em;margin:0}
.status{margin:.5em 0;padding:.6em .8em;border-radius:var(--_radius);background:#eef6ee;color:#14532d}
.status:empty{display:none}
.product{display:grid;grid-template-columns:auto 1fr;gap:.5em 1em;align-items:start;padding:1em 0;border-top:1px solid var(--_border)}
.product img{width:64px;height:64px;object-fit:cover;border-radius:var(--_radius)}
.product .field,.product fieldset{grid-column:2}
`
