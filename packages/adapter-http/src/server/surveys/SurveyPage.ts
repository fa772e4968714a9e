/**
 * `GET /r/{token}` (shared DECISIONS §17, §19; docs/DECISIONS.md §60): the page a review-request email's `survey.url` opens, the survey's
 * review form (one rating per product of the order). It needs no storefront: the page is the API's own, and the
 * widget on it calls the survey endpoints on the same origin with the token, under the organization's newest
 * publishable key, which the page finds from the token (the link names no organization). Any token that is not a
 * live survey's (malformed, unknown, or of an organization with no publishable key) answers the same 404 page as the
 * unsubscribe links; the widget says so itself when the survey expired since.
 */
import { StorefrontRecordRepository, SurveyRepository } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { escapeHtml, htmlPage, layout } from "../HostedPage.ts"

export const SURVEY_PAGE_ROUTES = [["GET", "/r/:token"]] as const

/** The survey link's token: 22..64 characters of `[A-Za-z0-9_-]` (shared DECISIONS §17). */
const wellFormedToken = /^[A-Za-z0-9_-]{22,64}$/

export const surveyPage = (token: string, key: string) =>
  layout(
    "Review your order",
    `<div data-feedback-widget="survey" data-token="${escapeHtml(token)}"></div>
<noscript><h1>Review your order</h1><p>This form needs JavaScript. Turn it on for this page and reload it.</p></noscript>`,
    // Relative: the page works wherever the API is mounted (a path prefix included).
    { after: `<script src="../storefront/embed.js" data-key="${escapeHtml(key)}" async></script>` }
  )

export const surveyNotFoundPage = layout(
  "Link not valid",
  `<h1>This link is not valid</h1>
<p>The review link may be incomplete or too old: open it from the email again, or copy the whole address.</p>`
)

export const SurveyPageRoute = Layer.unwrap(Effect.gen(function*() {
  const surveys = yield* SurveyRepository
  const keys = yield* StorefrontRecordRepository
  const keyFor = (token: string) =>
    Effect.flatMap(
      surveys.organizationOfToken(token),
      Option.match({
        onNone: () => Effect.succeed(Option.none<string>()),
        onSome: (organizationId) => Effect.map(keys.newestPublishableKey(organizationId), Option.map((k) => k.key))
      })
    )
  return HttpRouter.add(
    "GET",
    "/r/:token",
    Effect.gen(function*() {
      const token = (yield* HttpRouter.params)["token"] ?? ""
      // A malformed token is refused before the store is read.
      const key = wellFormedToken.test(token) ? yield* keyFor(token) : Option.none<string>()
      return Option.isSome(key) ? htmlPage(surveyPage(token, key.value), 200) : htmlPage(surveyNotFoundPage, 404)
    })
  )
}))
