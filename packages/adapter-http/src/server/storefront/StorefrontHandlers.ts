/**
 * Handlers of the storefront reads: one call into `StorefrontReads` each, answered as cacheable JSON (`HttpCaching.ts`:
 * `ETag`, `Cache-Control`, 304 on a matching `If-None-Match`).
 */
import {
  ProductRatingList,
  StorefrontQuestionPage,
  StorefrontReads,
  StorefrontReviewPage,
  StorefrontSubmissions
} from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"
import { trustedEncoder } from "../TrustedEncoder.ts"
import { cacheableJson } from "./HttpCaching.ts"

const encodeReviews = trustedEncoder(StorefrontReviewPage)
const encodeRatings = trustedEncoder(ProductRatingList)
const encodeQuestions = trustedEncoder(StorefrontQuestionPage)

export const StorefrontHandlers = HttpApiBuilder.group(
  AdminApi,
  "storefront",
  Effect.fn(function*(handlers) {
    const reads = yield* StorefrontReads
    const submissions = yield* StorefrontSubmissions
    return handlers
      .handle("productReviews", ({ params, query, request }) =>
        Effect.map(
          reads.productReviews(params.productIdOrSlug, query),
          (page) => cacheableJson(JSON.stringify(encodeReviews(page)), request.headers["if-none-match"])
        ))
      .handle("ratings", ({ query, request }) =>
        Effect.map(
          reads.ratings(query.products),
          (list) => cacheableJson(JSON.stringify(encodeRatings(list)), request.headers["if-none-match"])
        ))
      .handle("productQuestions", ({ params, query, request }) =>
        Effect.map(
          reads.productQuestions(params.productIdOrSlug, query),
          (page) => cacheableJson(JSON.stringify(encodeQuestions(page)), request.headers["if-none-match"])
        ))
      .handle("askQuestion", ({ payload }) => submissions.askQuestion(payload))
      .handle("answerQuestion", ({ params, payload }) => submissions.answerQuestion(params.id, payload))
  })
).pipe(capturingOnly(StorefrontReads, StorefrontSubmissions))
