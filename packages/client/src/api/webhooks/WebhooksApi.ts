/**
 * Webhooks (docs/DECISIONS.md §7): registration, the event catalog and each webhook's delivery log. Bodies are checked for
 * shape here (strict: an unknown field is a 400); the rules (catalog names, URL and address guard, secret length)
 * are the core's, so an embedding host gets the same answers.
 */
import {
  CreateWebhook,
  EventFeedPage,
  RotateWebhookSecret,
  UpdateWebhook,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryId,
  WebhookDeliveryList,
  WebhookEventList,
  WebhookId,
  WebhookList
} from "@feedback/core"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { pageQuery } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

const params = { id: WebhookId }

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("listEvents", "/webhook-events", { success: WebhookEventList }).pipe(
      requires("settings:read")
    ),
    HttpApiEndpoint.post("create", "/webhooks", {
      payload: CreateWebhook,
      success: Webhook.pipe(HttpApiSchema.status(201)),
      error: InvalidRequestResponse
    }).pipe(requires("settings:write")),
    HttpApiEndpoint.get("list", "/webhooks", {
      query: pageQuery,
      success: WebhookList,
      error: InvalidRequestResponse
    }).pipe(requires("settings:read")),
    HttpApiEndpoint.get("get", "/webhooks/:id", { params, success: Webhook, error: NotFoundResponse }).pipe(
      requires("settings:read")
    ),
    HttpApiEndpoint.patch("update", "/webhooks/:id", {
      params,
      payload: UpdateWebhook,
      success: Webhook,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("settings:write")),
    HttpApiEndpoint.delete("delete", "/webhooks/:id", { params, success: Webhook, error: NotFoundResponse }).pipe(
      requires("settings:write")
    ),
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:id/rotate-secret", {
      params,
      payload: RotateWebhookSecret,
      success: Webhook,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Rotate a webhook's secret",
        description: "Signs with `hmacSecret` from now on. For `overlapSeconds` (default 86,400, at most 604,800) the " +
          "replaced secret still signs too: `webhook-signature` carries both signatures, space-separated, so a " +
          "receiver can switch secrets without rejecting a delivery. `X-Webhook-Signature` uses the new secret."
      }))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.post("redeliver", "/webhooks/:id/events/:deliveryId/redeliver", {
      params: { id: WebhookId, deliveryId: WebhookDeliveryId },
      success: WebhookDelivery.pipe(HttpApiSchema.status(202)),
      error: NotFoundResponse
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Redeliver a delivery",
        description: "Queues the delivery again: a new row with a new `idempotencyKey`, the same `eventId` and payload " +
          "`data`, and `redeliveryOf` naming the original. Nothing is ever resent automatically; this is how to resend."
      }))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.post("ping", "/webhooks/:id/ping", { params, success: WebhookDelivery, error: NotFoundResponse })
      .annotateMerge(OpenApi.annotations({
        summary: "Send a test delivery",
        description: "Sends event `webhook.ping` with the webhook (without its secret) as `data`, signed like every " +
          "delivery, and answers the finished delivery row (status, response status, error, duration); it is logged " +
          "with the webhook's deliveries. If no dispatcher finishes it within the delivery timeout the row is answered as it stands."
      }))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.get("feed", "/events", {
      query: { ...pageQuery, events: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(10_000))) },
      success: EventFeedPage,
      error: InvalidRequestResponse
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Read the event feed",
        description: "Every event of the organization, oldest first, whether or not a webhook subscribed; `events` " +
          "(comma-separated names) narrows it. `nextCursor` is never null: keep it and call again later for what " +
          "happened since. After a receiver was down, catch up here and deduplicate on `id` (a delivery's `eventId`). " +
          "Events are kept at least 30 days."
      }))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.get("listDeliveries", "/webhooks/:id/events", {
      params,
      query: pageQuery,
      success: WebhookDeliveryList,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("settings:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Webhooks",
    description: "Signed HTTP POST notifications to your URLs when records change. Deliveries are attempted once, " +
      "never retried; each carries an idempotency key, and `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the " +
      "raw body>` when the webhook has a secret."
  }))
{}
