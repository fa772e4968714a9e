/**
 * `GET /u/{token}` and `POST /u/{token}` (shared DECISIONS §17; docs/EMAILS.md "Unsubscribe"): the page every review
 * email's unsubscribe link opens, for the customer, not an API client. No key: the token is the credential, so these
 * routes sit outside the secret-key API (like `/docs` and `/health`) and are never charged to an organization's
 * rate limit. GET shows a confirmation with one button; POST, from that button or from a mail client's one-click
 * unsubscribe (RFC 8058, body `List-Unsubscribe=One-Click`, which is not read: any POST to a live token opts out),
 * records the opt-out. Any token that is not a live one answers the same 404 page, saying nothing more.
 */
import { type UnsubscribeState, Unsubscribes } from "@feedback/core"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"

export const UNSUBSCRIBE_ROUTES = [["GET", "/u/:token"], ["POST", "/u/:token"]] as const

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/**
 * The page's headers: never cached or indexed, no referrer (the URL is the credential), nothing loaded or framed, and
 * the form may post only to this origin.
 */
const pageHeaders = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-robots-tag": "noindex, nofollow",
  "x-content-type-options": "nosniff",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

const layout = (title: string, body: string) =>
  `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{margin:0;background:#f4f5f7;color:#1f2933;font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
main{max-width:30rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px}
h1{font-size:1.5rem;line-height:1.3;margin:0 0 1rem}
p{margin:0 0 1rem}
button{font:inherit;font-weight:600;color:#fff;background:#1f6feb;border:0;border-radius:6px;padding:.75rem 1.5rem;cursor:pointer}
button:focus-visible{outline:3px solid #0b3d91;outline-offset:2px}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`

const from = (state: UnsubscribeState) =>
  state.organizationName === "" ? "this shop" : escapeHtml(state.organizationName)
const address = (state: UnsubscribeState) => state.maskedEmail === "" ? "" : ` for ${escapeHtml(state.maskedEmail)}`

export const confirmPage = (state: UnsubscribeState) =>
  layout(
    "Unsubscribe from review emails",
    `<h1>Unsubscribe from review emails?</h1>
<p>You will no longer get emails from ${from(state)} asking you to review your orders${address(state)}.</p>
<form method="post">
<button type="submit">Unsubscribe</button>
</form>`
  )

export const donePage = (state: UnsubscribeState) =>
  layout(
    "You are unsubscribed",
    `<h1 role="status">You are unsubscribed</h1>
<p>${from(state)} will no longer email you${address(state)} to ask for reviews.</p>
<p>You can close this page.</p>`
  )

export const notFoundPage = layout(
  "Link not valid",
  `<h1>This link is not valid</h1>
<p>The unsubscribe link may be incomplete: open it from the email again, or copy the whole address.</p>`
)

const html = (body: string, status: number) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers: pageHeaders })

/** The two routes, over the `Unsubscribes` service captured once when they are built. */
export const UnsubscribeRoutes = Layer.unwrap(Effect.gen(function*() {
  const unsubscribes = yield* Unsubscribes
  const token = Effect.map(HttpRouter.params, (params) => params["token"] ?? "")
  const answer = (effect: Effect.Effect<UnsubscribeState, unknown>, page: (state: UnsubscribeState) => string) =>
    Effect.match(effect, {
      onFailure: () => html(notFoundPage, 404),
      onSuccess: (state) => html(page(state), 200)
    })
  return Layer.mergeAll(
    HttpRouter.add(
      "GET",
      "/u/:token",
      Effect.flatMap(token, (t) => answer(unsubscribes.describe(t), (s) => s.optedOut ? donePage(s) : confirmPage(s)))
    ),
    HttpRouter.add("POST", "/u/:token", Effect.flatMap(token, (t) => answer(unsubscribes.unsubscribe(t), donePage)))
  )
}))
