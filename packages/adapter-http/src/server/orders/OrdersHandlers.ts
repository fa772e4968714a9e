/** Handlers of the orders group: one call into the `Orders` service per endpoint. */
import { Orders } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"
import { decodeJsonBody } from "../JsonBodyParse.ts"

export const OrdersHandlers = HttpApiBuilder.group(
  AdminApi,
  "orders",
  Effect.fn(function*(handlers) {
    const orders = yield* Orders.Orders
    return handlers
      .handle("create", ({ payload }) => orders.create(payload))
      .handle("list", ({ query }) => orders.list(query))
      .handleRaw("import", () => Effect.flatMap(decodeJsonBody(Orders.OrderImport), orders.import))
      .handle("bulkUpdate", ({ query, payload }) => orders.bulkUpdate(query, payload))
      .handle("get", ({ params }) => orders.get(params.id))
      .handle("update", ({ params, payload }) => orders.update(params.id, payload))
      .handle("delete", ({ params }) => orders.delete(params.id))
  })
).pipe(capturingOnly(Orders.Orders))
