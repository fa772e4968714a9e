/**
 * Handlers of the review read group: one call into the `Reviews` service per endpoint. A page of reviews is encoded
 * by a compiled encoder (`TrustedEncoder.ts`): the schema interpreter cost more than the page statement; and a run
 * of records at a time, so that many large pages at once do not hold the event loop. A list yields before it reads,
 * so its work runs in the scheduler's turns, not in the socket callback that received it (docs/DECISIONS.md §74).
 */
import { Reviews } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { trustedPageResponse } from "../TrustedEncoder.ts"
import { capturingOnly } from "../HandlerGroups.ts"

const pageResponse = trustedPageResponse(Reviews.Review)

export const ReviewsHandlers = HttpApiBuilder.group(
  AdminApi,
  "reviewsRead",
  Effect.fn(function*(handlers) {
    const reviews = yield* Reviews.Reviews
    return handlers
      .handle(
        "list",
        ({ query }) => Effect.yieldNow.pipe(Effect.andThen(reviews.list(query)), Effect.flatMap(pageResponse))
      )
      .handle("get", ({ params, query }) => reviews.get(params.id, query))
  })
).pipe(capturingOnly(Reviews.Reviews))
