/**
 * The storefront API (docs/DECISIONS.md §55, shared §18): what a storefront widget reads with a publishable key, given as
 * the query parameter `apiPublishableKey` or the header `X-Publishable-Key`. Published content only, in shapes with
 * no personal field; every answer is cacheable (`ETag`, `Cache-Control: public, max-age=60`, 304 on a matching
 * `If-None-Match`). Secret keys are refused here, and publishable keys everywhere else.
 */
import { Kernel, Storefront } from "@feedback/core"
import { Result, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse, UnauthorizedResponse } from "../ErrorResponses.ts"
import { queryParameter, sortParam } from "../ListParams.ts"
import { StorefrontAuth } from "../Security.ts"
import { doc } from "../Describe.ts"

const wholeNumber = (name: string, min: number, max: number, description: string, fallback?: number) =>
  queryParameter(Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max })), {
    document: {
      type: "integer",
      minimum: min,
      maximum: max,
      ...(fallback === undefined ? {} : { default: fallback }),
      description
    },
    parse: (raw) => {
      const n = /^\d{1,6}$/.test(raw) ? Number(raw) : Number.NaN
      return n >= min && n <= max
        ? Result.succeed(n)
        : Result.fail(Kernel.InvalidRequest.single(`query.${name}`, `must be a whole number from ${min} to ${max}`))
    },
    format: String
  })

const limit = wholeNumber(
  "limit",
  1,
  Storefront.storefrontLimits.maxLimit,
  `Records to return, 1 to ${Storefront.storefrontLimits.maxLimit} (default ${Storefront.storefrontLimits.defaultLimit}).`,
  Storefront.storefrontLimits.defaultLimit
)
const cursor = Schema.optionalKey(
  Schema.String.check(Schema.isMaxLength(2_000)).annotate({
    description: "The previous page's `nextCursor`; only valid with the same product, sort and rating."
  })
)
/** The key may come in the query (spec: Authentication 6); declared here so strict query parsing accepts it. */
const apiPublishableKey = Schema.optionalKey(
  Schema.String.check(Schema.isMaxLength(200)).annotate({
    description: "The publishable key (`pk_…`), when it is not sent as the `X-Publishable-Key` header."
  })
)
/** A signed customer call's three parameters (docs/STOREFRONT.md): all or none. */
const signedCustomer = {
  customerEmail: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(320)).annotate({
      description: "Signed customer calls: the customer's email, as signed."
    })
  ),
  timestamp: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(20)).annotate({
      description: "Signed customer calls: Unix seconds when the merchant's backend signed."
    })
  ),
  signature: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(128)).annotate({
      description:
        "Signed customer calls: lowercase hex HMAC-SHA256 of `{apiPublishableKey}\\n{customerEmail}\\n{timestamp}` keyed with the key's signing secret."
    })
  )
}
const surveyParams = {
  token: Schema.String.check(Schema.isMinLength(22), Schema.isMaxLength(64), Schema.isPattern(/^[A-Za-z0-9_-]+$/))
    .annotate({ description: "The survey's token, from its `/r/{token}` link." })
}
const productParams = {
  productIdOrSlug: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(500)).annotate({
    description: "The product's id or its slug."
  })
}

export class StorefrontApi extends HttpApiGroup.make("storefront")
  .add(
    HttpApiEndpoint.get("productReviews", "/storefront/products/:productIdOrSlug/reviews", {
      params: productParams,
      query: {
        apiPublishableKey,
        limit,
        cursor,
        sort: sortParam(Storefront.storefrontReviewSorts, "-createdAt"),
        rating: wholeNumber(
          "rating",
          1,
          5,
          "Only reviews of this many stars (a rating counts for the nearest whole star, halves up)."
        )
      },
      success: Storefront.StorefrontReviewPage,
      error: [NotFoundResponse, InvalidRequestResponse]
    }).annotateMerge(doc(
      "List a product's published reviews",
      "Published reviews of the product, newest first by default, a page at a time (`nextCursor`). Each names its author as first name and last initial (\"Ada L.\") or \"Anonymous\" and carries the merchant's reply only when it is published. Nothing personal (email, IP address, fingerprint, user agent, metadata) is ever answered."
    )),
    HttpApiEndpoint.get("ratings", "/storefront/ratings", {
      query: {
        apiPublishableKey,
        products: Schema.String.check(Schema.isMaxLength(60_000)).annotate({
          description: `Up to ${Storefront.MAX_RATINGS_PRODUCTS} product ids or slugs, comma-separated.`
        })
      },
      success: Storefront.ProductRatingList,
      error: InvalidRequestResponse
    }).annotateMerge(doc(
      "Get products' ratings",
      `The published review count, average rating and histogram by star of up to ${Storefront.MAX_RATINGS_PRODUCTS} products at once, in the order asked; products not found are left out. Exact at every moment: the stats change in the transaction of every review change.`
    )),
    HttpApiEndpoint.get("productQuestions", "/storefront/products/:productIdOrSlug/questions", {
      params: productParams,
      query: { apiPublishableKey, limit, cursor },
      success: Storefront.StorefrontQuestionPage,
      error: [NotFoundResponse, InvalidRequestResponse]
    }).annotateMerge(doc(
      "List a product's published questions",
      "Published questions of the product, newest first, each with its published answers oldest first. The asker's email is never answered."
    )),
    HttpApiEndpoint.post("askQuestion", "/storefront/questions", {
      query: { apiPublishableKey },
      payload: Storefront.StorefrontQuestionSubmission,
      success: Storefront.StorefrontSubmitted.pipe(HttpApiSchema.status(202)),
      error: InvalidRequestResponse
    }).annotateMerge(doc(
      "Ask a question about a product",
      "A shopper's question (`productId` or `productSlug`, exactly one). It arrives unpublished in the merchant's moderation queue with `source: \"widget\"` and fires `productQuestion.created`; with `askerEmail` the asker is emailed when it is answered (unless `notifyByEmail: false`). Spends the submissions bucket of the key and client address."
    )),
    HttpApiEndpoint.post("answerQuestion", "/storefront/questions/:id/answers", {
      params: { id: Kernel.ProductQuestionId },
      query: { apiPublishableKey },
      payload: Storefront.StorefrontAnswerSubmission,
      success: Storefront.StorefrontSubmitted.pipe(HttpApiSchema.status(202)),
      error: [NotFoundResponse, InvalidRequestResponse]
    }).annotateMerge(doc(
      "Answer a published question",
      "A shopper's answer (`authorType: \"customer\"`), unpublished until the merchant publishes it; fires `productQuestionAnswer.created`. Only published questions take answers: any other id is a 404. `email`, when given, links the answer to that customer if one exists; it is never shown."
    )),
    HttpApiEndpoint.post("submitReview", "/storefront/reviews", {
      query: { apiPublishableKey, ...signedCustomer },
      payload: Storefront.StorefrontReviewSubmission,
      success: Storefront.StorefrontReviewSubmitted.pipe(HttpApiSchema.status(202)),
      error: [InvalidRequestResponse, UnauthorizedResponse]
    }).annotateMerge(doc(
      "Submit a review",
      "A shopper's review of one product (`productId` or `productSlug`, exactly one), recorded with where it came from (client address, user agent, `fingerprint`, seconds since `formRenderedAt`) for the customer of `email` (created when new). The arrival rules flag duplicates, address and fingerprint collisions and forms sent too fast; an unflagged review is published at once only when the review settings publish automatically (`published` says which). Fires `review.created`. Signed for a customer (`customerEmail`, `timestamp`, `signature`), `email` may be left out and the review is from a verified buyer when that customer has an order, not cancelled, with the product; a bad or stale signature is a 401. Spends the submissions bucket of the key and client address."
    )),
    HttpApiEndpoint.get("survey", "/storefront/surveys/:token", {
      params: surveyParams,
      query: { apiPublishableKey },
      success: Storefront.StorefrontSurvey,
      error: [NotFoundResponse, InvalidRequestResponse]
    }).annotateMerge(doc(
      "Get a survey by its token",
      "What the hosted review page (`/r/{token}`) shows: the survey's status and expiry, the customer's first name and the order's products, each saying whether it has its review yet. An unknown or expired token is a 404. Personal: answered `Cache-Control: private, no-store`."
    )),
    HttpApiEndpoint.post("submitSurveyReviews", "/storefront/surveys/:token/reviews", {
      params: surveyParams,
      query: { apiPublishableKey },
      payload: Storefront.SurveyReviewSubmission,
      success: Storefront.SurveyReviewSubmitted.pipe(HttpApiSchema.status(201)),
      error: [NotFoundResponse, InvalidRequestResponse, ConflictResponse]
    }).annotateMerge(doc(
      "Review a survey's products",
      "Reviews of products of the survey's order, from a verified buyer, with the survey's id and the same arrival rules as `POST /storefront/reviews`. A product not in the survey is a 400, one already reviewed through it (or twice in the request) a 409, an unknown or expired token a 404. The survey is `completed` once every product has its review, and sends no more reminders."
    )),
    HttpApiEndpoint.get("customerReviews", "/storefront/customer/reviews", {
      query: { apiPublishableKey, ...signedCustomer, limit, cursor },
      success: Storefront.CustomerReviewPage,
      error: [InvalidRequestResponse, UnauthorizedResponse]
    }).annotateMerge(doc(
      "List the signed customer's reviews",
      "The reviews of the customer a signed call names (`customerEmail`, `timestamp`, `signature`), newest first, pending ones included, each with `published`. Without a valid signature: 401. Personal: answered `Cache-Control: private, no-store`."
    ))
  )
  .middleware(StorefrontAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Storefront",
    description:
      "Public reads for storefront widgets, authenticated with a publishable key (`X-Publishable-Key` or `apiPublishableKey`): published content only, rate limited per key and client address, cacheable."
  }))
{}
