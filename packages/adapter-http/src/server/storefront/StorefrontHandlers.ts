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
import { type CacheableRead, tagParameters } from "./CacheableReads.ts"
import { cacheableRead, namesATag, personalJson, taggedRead } from "./HttpCaching.ts"

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
    const tagged = reads.tagged
    /**
     * A cacheable read's answer: tagged by its own first statement when the store can and nothing is known before it
     * (no version from the spend, no tag to compare first: docs/DECISIONS.md §78), else from the version, first.
     */
    const answer = <A, E>(
      route: CacheableRead,
      params: ReadonlyArray<string | number | undefined>,
      ifNoneMatch: string | undefined,
      encode: (value: A) => unknown,
      read: Effect.Effect<A, E, Storefront.CurrentStorefrontCaller>,
      taggedRead_: Effect.Effect<Storefront.Tagged<A>, E, Storefront.CurrentStorefrontCaller> | undefined
    ) =>
      Effect.flatMap(
        Storefront.CurrentStorefrontCaller,
        (caller) =>
          taggedRead_ === undefined || caller.storefrontVersion !== undefined || namesATag(ifNoneMatch)
            ? cacheableRead(
              reads.contentTag(route, params),
              ifNoneMatch,
              Effect.map(read, (value) => JSON.stringify(encode(value)))
            )
            : taggedRead(
              ifNoneMatch,
              Effect.map(taggedRead_, ({ storefrontVersion, value }) => ({
                body: JSON.stringify(encode(value)),
                etag: Storefront.storefrontTag(caller.organization.id, storefrontVersion, route, params)
              }))
            )
      )
    return handlers
      // Each tag names every parameter the read takes, in a fixed order (docs/DECISIONS.md §70), as the gate does.
      .handle("productReviews", ({ params, query, request }) =>
        answer(
          "productReviews",
          tagParameters.productReviews({ params, query }),
          request.headers["if-none-match"],
          encodeReviews,
          reads.productReviews(params.productIdOrSlug, query),
          tagged?.productReviews(params.productIdOrSlug, query)
        ))
      .handle("ratings", ({ query, request }) =>
        answer(
          "ratings",
          tagParameters.ratings({ query }),
          request.headers["if-none-match"],
          encodeRatings,
          reads.ratings(query.products),
          tagged?.ratings(query.products)
        ))
      .handle("productQuestions", ({ params, query, request }) =>
        answer(
          "productQuestions",
          tagParameters.productQuestions({ params, query }),
          request.headers["if-none-match"],
          encodeQuestions,
          reads.productQuestions(params.productIdOrSlug, query),
          tagged?.productQuestions(params.productIdOrSlug, query)
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
