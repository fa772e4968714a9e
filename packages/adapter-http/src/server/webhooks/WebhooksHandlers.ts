/** Handlers of the webhooks group: thin calls into the core's webhook use-cases. */
import {
  createWebhook,
  type CurrentCaller,
  type CursorKey,
  CurrentWebhookSettings,
  deleteWebhook,
  type EventOutbox,
  getWebhook,
  type HostResolver,
  type IdGenerator,
  listWebhookDeliveries,
  listWebhookEvents,
  listWebhooks,
  type UnitOfWork,
  updateWebhook,
  type WebhookRepository
} from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../../api/Api.ts"

type Services = WebhookRepository | UnitOfWork | EventOutbox | IdGenerator | HostResolver | CursorKey

export const WebhooksHandlers = HttpApiBuilder.group(AdminApi, "webhooks", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Services>()
  const settings = yield* CurrentWebhookSettings
  const run = <A, E>(effect: Effect.Effect<A, E, Services | CurrentCaller>) =>
    effect.pipe(Effect.provide(services), Effect.provideService(CurrentWebhookSettings, settings))
  return handlers
    .handle("listEvents", () => listWebhookEvents)
    .handle("create", ({ payload }) => run(createWebhook(payload)))
    .handle("list", ({ query }) => run(listWebhooks(query)))
    .handle("get", ({ params }) => run(getWebhook(params.id)))
    .handle("update", ({ params, payload }) => run(updateWebhook(params.id, payload)))
    .handle("delete", ({ params }) => run(deleteWebhook(params.id)))
    .handle("listDeliveries", ({ params, query }) => run(listWebhookDeliveries(params.id, query)))
}))
