/** Handlers of the review write side: one call into the `ReviewWrites` service per endpoint. */
import { Reviews } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"
import { decodeJsonBody } from "../JsonBodyParse.ts"

export const ReviewWritesHandlers = HttpApiBuilder.group(
  AdminApi,
  "reviewWrites",
  Effect.fn(function*(handlers) {
    const writes = yield* Reviews.ReviewWrites
    return handlers
      .handle("bulkUpdate", ({ payload, query }) => writes.bulkUpdate(query, payload))
      // Bulk imports take bodies of up to 32 MiB: parsed without holding the event loop (docs/DECISIONS.md §69).
      .handleRaw("import", () => Effect.flatMap(decodeJsonBody(Reviews.ImportRequest), writes.import))
      .handle("update", ({ params, payload }) => writes.update(params.id, payload))
      .handle("delete", ({ params, payload }) => writes.delete(params.id, payload))
      .handle("createResponse", ({ params, payload }) => writes.createReply(params.id, payload))
      .handle("updateResponse", ({ params, payload }) => writes.updateReply(params.id, payload))
      .handle("deleteResponse", ({ params }) => writes.deleteReply(params.id))
  })
).pipe(capturingOnly(Reviews.ReviewWrites))
