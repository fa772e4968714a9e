/**
 * `GET /r/{token}` (shared DECISIONS §17, §19): the page a review-request email's `survey.url` opens, the survey's
 * review form (one rating per product of the order). It works with no storefront at all: the page is the API's own,
 * and the widget on it calls the survey endpoints on the same origin, with the token as the only credential. A
 * malformed token answers the same 404 page as the unsubscribe links, without reading anything; a well-formed one
 * gets the form, and the widget says so when the survey behind it is gone or expired (the API's 404).
 */
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { escapeHtml, htmlPage, layout } from "../HostedPage.ts"

export const SURVEY_PAGE_ROUTES = [["GET", "/r/:token"]] as const

/** The survey link's token: 22..64 characters of `[A-Za-z0-9_-]` (shared DECISIONS §17). */
const wellFormedToken = /^[A-Za-z0-9_-]{22,64}$/

export const surveyPage = (token: string) =>
  layout(
    "Review your order",
    `<div data-feedback-widget="survey" data-token="${escapeHtml(token)}"></div>
<noscript><h1>Review your order</h1><p>This form needs JavaScript. Turn it on for this page and reload it.</p></noscript>`,
    // Relative: the page works wherever the API is mounted (a path prefix included).
    { after: `<script src="../storefront/embed.js" async></script>` }
  )

export const surveyNotFoundPage = layout(
  "Link not valid",
  `<h1>This link is not valid</h1>
<p>The review link may be incomplete: open it from the email again, or copy the whole address.</p>`
)

export const SurveyPageRoute = HttpRouter.add(
  "GET",
  "/r/:token",
  Effect.map(HttpRouter.params, (params) => {
    const token = params["token"] ?? ""
    return wellFormedToken.test(token) ? htmlPage(surveyPage(token), 200) : htmlPage(surveyNotFoundPage, 404)
  })
)
