/**
 * `GET /r/{token}` and `POST /r/{token}` (shared DECISIONS §17, §19; docs/DECISIONS.md §60): the page a review-request
 * email's `survey.url` opens, the survey's review form (one rating per product of the order). It needs no storefront:
 * the token is the credential (like `/u/{token}`), so these routes sit outside the keyed APIs and are never charged to
 * a rate limit. An organization with a publishable key gets the widget's survey form, calling the survey endpoints
 * under its newest key; one with none (shared §18 keeps those endpoints keyed) gets the same form rendered here,
 * posted back here, and submitted through the same use-case (`StorefrontReviews.submitSurveyReviews`). Any token that
 * is not a live survey's (malformed, unknown, expired) answers the same 404 page as the unsubscribe links.
 */
import { Kernel, Organizations, Storefront, Surveys } from "@feedback/core"
import { Effect, Layer, Option, Schema } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { escapeHtml, htmlPage, layout } from "../HostedPage.ts"
import { clientAddressOf, parseTrustProxy } from "../storefront/ClientAddress.ts"

export const SURVEY_PAGE_ROUTES = [["GET", "/r/:token"], ["POST", "/r/:token"]] as const

/** The survey link's token: 22..64 characters of `[A-Za-z0-9_-]` (shared DECISIONS §17). */
const wellFormedToken = /^[A-Za-z0-9_-]{22,64}$/

/** A form body larger than this is refused unread: a survey holds at most a few products' texts. */
const MAX_FORM_BYTES = 256 * 1024

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

export const surveyThanksPage = layout(
  "Thank you",
  `<h1>Thank you for your review</h1>
<p>Your review was sent. You can close this page.</p>`
)

const surveyClosedPage = layout(
  "Survey closed",
  `<h1>This survey is closed</h1>
<p>It no longer takes reviews. You can close this page.</p>`
)

const formStyle = `fieldset{border:1px solid #d9dde3;border-radius:6px;margin:0 0 1.5rem;padding:1rem}
legend{font-weight:600;padding:0 .25rem}
label{display:block;margin:.5rem 0 .25rem}
.stars label{display:inline-block;margin:0 1rem 0 .25rem}
input[type=text],textarea{box-sizing:border-box;width:100%;font:inherit;padding:.5rem;border:1px solid #9aa5b1;border-radius:4px}
.errors{border:2px solid #b42318;border-radius:6px;padding:1rem;margin:0 0 1.5rem}`

/** What the customer typed, to show again beside the errors. */
type Entered = Readonly<Record<string, string>>

const value = (entered: Entered, name: string) => escapeHtml(entered[name] ?? "")

/** The server-rendered form: a rating group (1–5) and optional title and text per product not yet reviewed. */
export const surveyFormPage = (
  survey: Storefront.StorefrontSurvey,
  entered: Entered = {},
  errors: ReadonlyArray<string> = []
) => {
  const greeting = survey.customer.firstName === null ? "" : `Hi ${escapeHtml(survey.customer.firstName)}, `
  const products = survey.products.filter((p) => !p.reviewed).map((p, i) => {
    const stars = [1, 2, 3, 4, 5].map((n) =>
      `<input type="radio" id="rating-${i}-${n}" name="rating.${escapeHtml(p.id)}" value="${n}"${
        entered[`rating.${p.id}`] === String(n) ? " checked" : ""
      }><label for="rating-${i}-${n}">${n} star${n === 1 ? "" : "s"}</label>`
    ).join("\n")
    return `<fieldset>
<legend>${escapeHtml(p.title)}</legend>
<div class="stars" role="radiogroup" aria-label="Rating for ${escapeHtml(p.title)}">
${stars}
</div>
<label for="title-${i}">Title (optional)</label>
<input type="text" id="title-${i}" name="title.${escapeHtml(p.id)}" maxlength="200" value="${
      value(entered, `title.${p.id}`)
    }">
<label for="body-${i}">Your review (optional)</label>
<textarea id="body-${i}" name="body.${escapeHtml(p.id)}" rows="4">${value(entered, `body.${p.id}`)}</textarea>
</fieldset>`
  })
  const alert = errors.length === 0 ? "" : `<div class="errors" role="alert">
<p>Please check the form:</p>
<ul>
${errors.map((e) => `<li>${escapeHtml(e)}</li>`).join("\n")}
</ul>
</div>`
  return layout(
    "Review your order",
    `<h1>Review your order</h1>
${alert}
<p>${greeting}how did you like what you bought? Rate at least one product.</p>
<form method="post">
${products.join("\n")}
<label for="authorName">Your name as shown with the review (optional)</label>
<input type="text" id="authorName" name="authorName" maxlength="100" value="${value(entered, "authorName")}">
<input type="hidden" name="formRenderedAt" value="${value(entered, "formRenderedAt")}">
<p><button type="submit">Send my review</button></p>
</form>`,
    { head: formStyle }
  )
}

/**
 * The form's fields as the survey endpoint's body: a review for each product given a rating; a title or text with no
 * rating is an issue of its own rather than silently dropped.
 */
export const submissionOfForm = (survey: Storefront.StorefrontSurvey, entered: Entered) => {
  const issues: Array<string> = []
  // Every product, reviewed ones included: a form sent twice (two tabs) is the use-case's 409, not silently dropped.
  const reviews = survey.products.flatMap((p) => {
    const rating = (entered[`rating.${p.id}`] ?? "").trim()
    const title = (entered[`title.${p.id}`] ?? "").trim()
    const body = (entered[`body.${p.id}`] ?? "").trim()
    if (rating === "") {
      if (title !== "" || body !== "") issues.push(`${p.title}: choose a rating to send this review.`)
      return []
    }
    return [{
      productId: p.id,
      rating: /^[0-9]$/.test(rating) ? Number(rating) : rating,
      ...(title === "" ? {} : { title }),
      ...(body === "" ? {} : { body })
    }]
  })
  if (reviews.length === 0 && issues.length === 0) issues.push("Choose a rating for at least one product.")
  const authorName = (entered["authorName"] ?? "").trim()
  const formRenderedAt = entered["formRenderedAt"] ?? ""
  return {
    issues,
    body: {
      reviews,
      ...(authorName === "" ? {} : { authorName }),
      ...(formRenderedAt === "" ? {} : { formRenderedAt })
    }
  }
}

/** An issue of the survey body in the customer's words: `body.reviews[i]` becomes that product's title. */
const issueText =
  (survey: Storefront.StorefrontSurvey, body: { readonly reviews: ReadonlyArray<{ productId: string }> }) =>
  (issue: { readonly path: string; readonly message: string }) => {
    const match = /^body\.reviews\[(\d+)\]\.?(\w*)/.exec(issue.path)
    if (match === null) return issue.path === "body.authorName" ? `Your name: ${issue.message}` : issue.message
    const productId = body.reviews[Number(match[1])]?.productId
    const title = survey.products.find((p) => p.id === productId)?.title ?? "A product"
    return `${title}${match[2] === "" ? "" : ` (${match[2]})`}: ${issue.message}`
  }

export interface SurveyPageOptions {
  /** `TRUST_PROXY`, as for the storefront routes: which `X-Forwarded-For` hops name the client (provenance). */
  readonly trustProxy?: string | undefined
}

export const SurveyPageRoute = (options: SurveyPageOptions = {}) =>
  Layer.unwrap(Effect.gen(function*() {
    const surveys = yield* Surveys.SurveyRepository
    const keys = yield* Organizations.StorefrontRecordRepository
    const organizations = yield* Organizations.Organizations
    const shopperReviews = yield* Storefront.StorefrontReviews
    const trusted = parseTrustProxy(options.trustProxy ?? "")

    const token = Effect.map(HttpRouter.params, (params) => params["token"] ?? "")
    const organizationOf = (t: string) =>
      // A malformed token is refused before the store is read.
      wellFormedToken.test(t) ? surveys.organizationOfToken(t) : Effect.succeed(Option.none())

    /**
     * The survey use-cases as a storefront caller of the token's organization with no key: they read only the
     * organization and the client address (provenance), never the key or its signing secret.
     */
    const asCaller = <A, E, R>(
      organizationId: Parameters<typeof organizations.findOrganization>[0],
      effect: Effect.Effect<A, E, R>
    ) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const organization = yield* organizations.findOrganization(organizationId)
        const clientAddress = clientAddressOf(
          Option.getOrUndefined(request.peerAddress),
          request.headers["x-forwarded-for"],
          trusted
        )
        return yield* Effect.provideService(effect, Storefront.CurrentStorefrontCaller, {
          keyId: "" as Kernel.PublishableKeyId,
          key: "",
          signingSecret: null,
          organization,
          clientAddress
        })
      })

    const notFound = htmlPage(surveyNotFoundPage, 404)

    const get = Effect.gen(function*() {
      const t = yield* token
      const organizationId = yield* organizationOf(t)
      if (Option.isNone(organizationId)) return notFound
      const key = yield* keys.newestPublishableKey(organizationId.value)
      if (Option.isSome(key)) return htmlPage(surveyPage(t, key.value.key), 200)
      return yield* Effect.match(asCaller(organizationId.value, shopperReviews.survey(t)), {
        onFailure: () => notFound,
        onSuccess: (survey) =>
          survey.status === "cancelled"
            ? htmlPage(surveyClosedPage, 200)
            : survey.products.every((p) => p.reviewed)
            ? htmlPage(surveyThanksPage, 200)
            : htmlPage(surveyFormPage(survey, { formRenderedAt: new Date().toISOString() }), 200)
      })
    })

    const post = Effect.gen(function*() {
      const t = yield* token
      const organizationId = yield* organizationOf(t)
      if (Option.isNone(organizationId)) return notFound
      const request = yield* HttpServerRequest.HttpServerRequest
      const found = yield* Effect.option(asCaller(organizationId.value, shopperReviews.survey(t)))
      if (Option.isNone(found)) return notFound
      const survey = found.value
      if (survey.status === "cancelled") return htmlPage(surveyClosedPage, 409)
      const length = Number(request.headers["content-length"] ?? "0")
      const contentType = request.headers["content-type"] ?? ""
      if (!contentType.startsWith("application/x-www-form-urlencoded") || length > MAX_FORM_BYTES) {
        return htmlPage(surveyFormPage(survey, {}, ["The form could not be read; please send it again."]), 400)
      }
      const text = yield* Effect.orElseSucceed(request.text, () => "")
      if (text.length > MAX_FORM_BYTES) {
        return htmlPage(surveyFormPage(survey, {}, ["The form could not be read; please send it again."]), 400)
      }
      const entered: Entered = Object.fromEntries(new URLSearchParams(text))
      const { body, issues } = submissionOfForm(survey, entered)
      const again = (status: number, errors: ReadonlyArray<string>) =>
        htmlPage(surveyFormPage(survey, entered, errors), status)
      if (issues.length > 0) return again(400, issues)
      const submitted = Effect.flatMap(
        Effect.mapError(
          Schema.decodeUnknownEffect(Storefront.SurveyReviewSubmission)(body, { errors: "all" }),
          (error) => Kernel.invalidRequestOfSchema("body", error)
        ),
        (input) =>
          asCaller(
            organizationId.value,
            shopperReviews.submitSurveyReviews(t, input, { userAgent: request.headers["user-agent"], signed: {} })
          )
      )
      return yield* Effect.catch(
        Effect.as(submitted, htmlPage(surveyThanksPage, 200)),
        (error: Kernel.InvalidRequest | Kernel.NotFound | Kernel.Conflict) =>
          Effect.succeed(
            error._tag === "InvalidRequest"
              ? again(400, error.issues.map(issueText(survey, body)))
              : error._tag === "Conflict"
              ? again(409, [error.message])
              : notFound
          )
      )
    })

    return Layer.mergeAll(HttpRouter.add("GET", "/r/:token", get), HttpRouter.add("POST", "/r/:token", post))
  }))
