/**
 * `GET /u/{token}` and `POST /u/{token}` (shared DECISIONS §17; docs/EMAILS.md "Unsubscribe"): the page every review
 * email's unsubscribe link opens, for the customer, not an API client. No key: the token is the credential, so these
 * routes sit outside the secret-key API (like `/docs` and `/health`) and are never charged to an organization's
 * rate limit. GET shows a confirmation with one button; POST, from that button or from a mail client's one-click
 * unsubscribe (RFC 8058, body `List-Unsubscribe=One-Click`, which is not read: any POST to a live token opts out),
 * records the opt-out. Any token that is not a live one answers the same 404 page, saying nothing more.
 */
import { Catalog } from "@feedback/core"
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { escapeHtml, htmlPage, layout } from "../HostedPage.ts"

export const UNSUBSCRIBE_ROUTES = [["GET", "/u/:token"], ["POST", "/u/:token"]] as const

const from = (state: Catalog.UnsubscribeState) =>
  state.organizationName === "" ? "this shop" : escapeHtml(state.organizationName)
const address = (state: Catalog.UnsubscribeState) =>
  state.maskedEmail === "" ? "" : ` for ${escapeHtml(state.maskedEmail)}`

export const confirmPage = (state: Catalog.UnsubscribeState) =>
  layout(
    "Unsubscribe from review emails",
    `<h1>Unsubscribe from review emails?</h1>
<p>You will no longer get emails from ${from(state)} asking you to review your orders${address(state)}.</p>
<form method="post">
<button type="submit">Unsubscribe</button>
</form>`
  )

export const donePage = (state: Catalog.UnsubscribeState) =>
  layout(
    "You are unsubscribed",
    `<h1>You are unsubscribed</h1>
<p>${from(state)} will no longer email you${address(state)} to ask for reviews.</p>
<p>You can close this page.</p>`
  )

export const notFoundPage = layout(
  "Link not valid",
  `<h1>This link is not valid</h1>
<p>The unsubscribe link may be incomplete: open it from the email again, or copy the whole address.</p>`
)

const html = (body: string, status: number) => htmlPage(body, status)

/** The two routes, over the `Unsubscribes` service captured once when they are built. */
export const UnsubscribeRoutes = Layer.unwrap(Effect.gen(function*() {
  const unsubscribes = yield* Catalog.Unsubscribes
  const token = Effect.map(HttpRouter.params, (params) => params["token"] ?? "")
  const answer = (
    effect: Effect.Effect<Catalog.UnsubscribeState, unknown>,
    page: (state: Catalog.UnsubscribeState) => string
  ) =>
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
