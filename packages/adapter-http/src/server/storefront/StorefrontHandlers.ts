/**
 * Handlers of the storefront reads: one call into `StorefrontReads` each, answered as cacheable JSON (`HttpCaching.ts`:
 * `ETag`, `Cache-Control`, 304 on a matching `If-None-Match`).
 */
import { Storefront } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"
import { trustedEncoder } from "../TrustedEncoder.ts"
import { tagParameters } from "./CacheableReads.ts"
import { cacheableRead, personalJson } from "./HttpCaching.ts"

const encodeReviews = trustedEncoder(Storefront.StorefrontReviewPage)
const encodeRatings = trustedEncoder(Storefront.ProductRatingList)
const encodeQuestions = trustedEncoder(Storefront.StorefrontQuestionPage)
const encodeSurvey = trustedEncoder(Storefront.StorefrontSurvey)
const encodeCustomerReviews = trustedEncoder(Storefront.CustomerReviewPage)

/** What a submission's request says of its origin besides the client address: the user agent and a signed customer. */
const contextOf = (
  request: { readonly headers: Readonly<Record<string, string | undefined>> },
  signed: { readonly customerEmail?: string; readonly timestamp?: string; readonly signature?: string }
) => ({ userAgent: request.headers["user-agent"], signed })

export const StorefrontHandlers = HttpApiBuilder.group(
  AdminApi,
  "storefront",
  Effect.fn(function*(handlers) {
    const reads = yield* Storefront.StorefrontReads
    const submissions = yield* Storefront.StorefrontSubmissions
    const shopperReviews = yield* Storefront.StorefrontReviews
    return handlers
      // Each tag names every parameter the read takes, in a fixed order (docs/DECISIONS.md §70), as the gate does.
      .handle("productReviews", ({ params, query, request }) =>
        cacheableRead(
          reads.contentTag("productReviews", tagParameters.productReviews({ params, query })),
          request.headers["if-none-match"],
          Effect.map(
            reads.productReviews(params.productIdOrSlug, query),
            (page) => JSON.stringify(encodeReviews(page))
          )
        ))
      .handle("ratings", ({ query, request }) =>
        cacheableRead(
          reads.contentTag("ratings", tagParameters.ratings({ query })),
          request.headers["if-none-match"],
          Effect.map(reads.ratings(query.products), (list) => JSON.stringify(encodeRatings(list)))
        ))
      .handle("productQuestions", ({ params, query, request }) =>
        cacheableRead(
          reads.contentTag("productQuestions", tagParameters.productQuestions({ params, query })),
          request.headers["if-none-match"],
          Effect.map(
            reads.productQuestions(params.productIdOrSlug, query),
            (page) => JSON.stringify(encodeQuestions(page))
          )
        ))
      .handle("askQuestion", ({ payload }) => submissions.askQuestion(payload))
      .handle("answerQuestion", ({ params, payload }) => submissions.answerQuestion(params.id, payload))
      .handle(
        "submitReview",
        ({ payload, query, request }) => shopperReviews.submitReview(payload, contextOf(request, query))
      )
      .handle(
        "survey",
        ({ params }) =>
          Effect.map(
            shopperReviews.survey(params.token),
            (survey) => personalJson(JSON.stringify(encodeSurvey(survey)))
          )
      )
      .handle(
        "submitSurveyReviews",
        ({ params, payload, request }) =>
          shopperReviews.submitSurveyReviews(params.token, payload, contextOf(request, {}))
      )
      .handle("customerReviews", ({ query }) =>
        Effect.map(
          shopperReviews.customerReviews(query, query),
          (page) => personalJson(JSON.stringify(encodeCustomerReviews(page)))
        ))
  })
).pipe(capturingOnly(Storefront.StorefrontReads, Storefront.StorefrontSubmissions, Storefront.StorefrontReviews))
