/** Handlers of the review read group. */
import { type CursorKey, getReview, listReviews, type ReviewRepository } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../api/Api.ts"

export const ReviewsReadHandlers = HttpApiBuilder.group(AdminApi, "reviewsRead", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<ReviewRepository | CursorKey>()
  return handlers
    .handle("list", ({ query }) => listReviews(query).pipe(Effect.provide(services)))
    .handle("get", ({ params, query }) => getReview(params.id, query).pipe(Effect.provide(services)))
}))
