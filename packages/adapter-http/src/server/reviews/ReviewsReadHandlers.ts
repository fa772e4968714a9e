/** Handlers of the review read group: one call into the `Reviews` service per endpoint. */
import { Reviews } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"

export const ReviewsReadHandlers = HttpApiBuilder.group(AdminApi, "reviewsRead", Effect.fn(function*(handlers) {
  const reviews = yield* Reviews
  return handlers
    .handle("list", ({ query }) => reviews.list(query))
    .handle("get", ({ params, query }) => reviews.get(params.id, query))
}))
