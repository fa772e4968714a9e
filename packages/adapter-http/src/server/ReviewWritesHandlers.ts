/** Handlers of the review write side: each calls its core use-case with the store services captured at build time. */
import { type EventOutbox, type IdGenerator, type OrganizationRepository, type ReviewWriteRepository, ReviewWrites, type UnitOfWork } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../api/Api.ts"

export const ReviewWritesHandlers = HttpApiBuilder.group(AdminApi, "reviewWrites", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<ReviewWriteRepository | OrganizationRepository | UnitOfWork | EventOutbox | IdGenerator>()
  return handlers
    .handle("bulkUpdate", ({ payload, query }) => ReviewWrites.bulkUpdateReviews(query, payload).pipe(Effect.provide(services)))
    .handle("import", ({ payload }) => ReviewWrites.importReviews(payload).pipe(Effect.provide(services)))
    .handle("update", ({ params, payload }) => ReviewWrites.updateReview(params.id, payload).pipe(Effect.provide(services)))
    .handle("delete", ({ params, payload }) => ReviewWrites.deleteReview(params.id, payload).pipe(Effect.provide(services)))
    .handle("createResponse", ({ params, payload }) => ReviewWrites.createReply(params.id, payload).pipe(Effect.provide(services)))
    .handle("updateResponse", ({ params, payload }) => ReviewWrites.updateReply(params.id, payload).pipe(Effect.provide(services)))
    .handle("deleteResponse", ({ params }) => ReviewWrites.deleteReply(params.id).pipe(Effect.provide(services)))
}))
