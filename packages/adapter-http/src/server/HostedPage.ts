/**
 * The pages the API serves to people rather than to API clients (shared DECISIONS §17, §19): `/u/{token}`,
 * `/r/{token}` and `/demo`. One layout and one set of headers, so they look and behave alike: never cached or indexed
 * when the URL is a credential, no referrer, nothing loaded from another origin, never framed.
 */
import { HttpServerResponse } from "effect/http"

export const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/**
 * Headers of a page whose URL carries a token: not cached or indexed, no referrer (the URL is the credential), its
 * own scripts and calls only (the widget, for the survey form), images from anywhere a merchant keeps product photos.
 */
export const tokenPageHeaders = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-robots-tag": "noindex, nofollow",
  "x-content-type-options": "nosniff",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; connect-src 'self'; img-src https: data:; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

export interface LayoutOptions {
  /** A wider page (the demo's product page). */
  readonly wide?: boolean
  /** Markup after `<main>`: the widget's script tag. */
  readonly after?: string
  readonly head?: string
}

export const layout = (title: string, body: string, options: LayoutOptions = {}) =>
  `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{margin:0;background:#f4f5f7;color:#1f2933;font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
main{max-width:${
    options.wide === true ? "60rem" : "34rem"
  };margin:4rem auto;padding:2rem;background:#fff;border-radius:8px}
h1{font-size:1.5rem;line-height:1.3;margin:0 0 1rem}
p{margin:0 0 1rem}
button{font:inherit;font-weight:600;color:#fff;background:#1f5fbf;border:0;border-radius:6px;padding:.75rem 1.5rem;cursor:pointer}
button:focus-visible{outline:3px solid #0b3d91;outline-offset:2px}
${options.head ?? ""}
</style>
</head>
<body>
<main>
${body}
</main>
${options.after ?? ""}
</body>
</html>
`

export const htmlPage = (body: string, status: number, headers: Record<string, string> = tokenPageHeaders) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers })
