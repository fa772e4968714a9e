/** Handlers of the webhooks group: one call into the `Webhooks` service per endpoint. */
import { Webhooks } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"

export const WebhooksHandlers = HttpApiBuilder.group(
  AdminApi,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks.Webhooks
    return handlers
      .handle("listEvents", () => webhooks.listEvents())
      .handle("create", ({ payload }) => webhooks.create(payload))
      .handle("list", ({ query }) => webhooks.list(query))
      .handle("get", ({ params }) => webhooks.get(params.id))
      .handle("update", ({ params, payload }) => webhooks.update(params.id, payload))
      .handle("delete", ({ params }) => webhooks.delete(params.id))
      .handle("listDeliveries", ({ params, query }) => webhooks.listDeliveries(params.id, query))
      .handle("rotateSecret", ({ params, payload }) => webhooks.rotateSecret(params.id, payload))
      .handle("redeliver", ({ params }) => webhooks.redeliver(params.id, params.deliveryId))
      .handle("ping", ({ params }) => webhooks.ping(params.id))
      .handle("feed", ({ query }) => webhooks.feed(query))
  })
).pipe(capturingOnly(Webhooks.Webhooks))
