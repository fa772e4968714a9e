/**
 * Webhooks (docs/DECISIONS.md §7): registration, the event catalog and each webhook's delivery log. Bodies are checked for
 * shape here (strict: an unknown field is a 400); the rules (catalog names, URL and address guard, secret length)
 * are the core's, so an embedding host gets the same answers.
 */
import { Kernel, Webhooks } from "@feedback/core"
import { Result, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { commaSeparated, pageQuery, queryParameter } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

const params = { id: Kernel.WebhookId }

/**
 * `events` of the feed: comma-separated names, read by the feed itself (unknown names are a 400 there). The document
 * lists the catalog's names.
 */
const eventsParam = queryParameter(Schema.String.check(Schema.isMaxLength(10_000)), {
  document: commaSeparated(
    Webhooks.EVENT_NAMES,
    "Only events with these names (comma-separated); omitted: every event."
  ),
  parse: (raw) =>
    raw.length > 10_000
      ? Result.fail(
        Kernel.InvalidRequest.of([{ path: "query.events", message: "Expected a value with a length of at most 10000" }])
      )
      : Result.succeed(raw),
  format: String
})

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("listEvents", "/webhook-events", { success: Webhooks.WebhookEventList })
      .annotateMerge(doc(
        "List webhook event names",
        "Every event name a webhook may subscribe to (`data`) and those this deployment emits (`emitted`)."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.post("create", "/webhooks", {
      payload: Webhooks.CreateWebhook,
      success: Webhooks.Webhook.pipe(HttpApiSchema.status(201)),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Create a webhook",
        "Subscribes an HTTPS URL to event names. With `hmacSecret` every delivery is signed (Standard Webhooks `webhook-signature` and `X-Webhook-Signature`); the secret is never answered back."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.get("list", "/webhooks", {
      query: pageQuery,
      success: Webhooks.WebhookList,
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List webhooks",
        "Your webhooks, newest first, a page at a time."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.get("get", "/webhooks/:id", { params, success: Webhooks.Webhook, error: NotFoundResponse })
      .annotateMerge(doc(
        "Get a webhook",
        "One webhook by id (never its secret)."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.patch("update", "/webhooks/:id", {
      params,
      payload: Webhooks.UpdateWebhook,
      success: Webhooks.Webhook,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Update a webhook",
        "Changes the sent fields only: `events` replaces the subscription wholesale; `hmacSecret` a string replaces the secret at once, `null` removes it (use rotate-secret for an overlap)."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.delete("delete", "/webhooks/:id", { params, success: Webhooks.Webhook, error: NotFoundResponse })
      .annotateMerge(doc(
        "Delete a webhook",
        "Stops deliveries to the webhook and answers it as it was; its delivery log goes with it."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:id/rotate-secret", {
      params,
      payload: Webhooks.RotateWebhookSecret,
      success: Webhooks.Webhook,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Rotate a webhook's secret",
        "Signs with `hmacSecret` from now on. For `overlapSeconds` (default 86,400, at most 604,800) the " +
          "replaced secret still signs too: `webhook-signature` carries both signatures, space-separated, so a " +
          "receiver can switch secrets without rejecting a delivery. `X-Webhook-Signature` uses the new secret."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.post("redeliver", "/webhooks/:id/events/:deliveryId/redeliver", {
      params: { id: Kernel.WebhookId, deliveryId: Kernel.WebhookDeliveryId },
      success: Webhooks.WebhookDelivery.pipe(HttpApiSchema.status(202)),
      error: NotFoundResponse
    })
      .annotateMerge(doc(
        "Redeliver a delivery",
        "Queues the delivery again: a new row with a new `idempotencyKey`, the same `eventId` and payload " +
          "`data`, and `redeliveryOf` naming the original. Nothing is ever resent automatically; this is how to resend."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.post("ping", "/webhooks/:id/ping", {
      params,
      success: Webhooks.WebhookDelivery,
      error: NotFoundResponse
    })
      .annotateMerge(doc(
        "Send a test delivery",
        "Sends event `webhook.ping` with the webhook (without its secret) as `data`, signed like every " +
          "delivery, and answers the finished delivery row (status, response status, error, duration); it is logged " +
          "with the webhook's deliveries. If no dispatcher finishes it within the delivery timeout the row is answered as it stands."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.get("feed", "/events", {
      query: { ...pageQuery, events: eventsParam },
      success: Webhooks.EventFeedPage,
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Read the event feed",
        "Every event of the organization, oldest first, whether or not a webhook subscribed; `events` " +
          "(comma-separated names) narrows it. `nextCursor` is never null: keep it and call again later for what " +
          "happened since. After a receiver was down, catch up here and deduplicate on `id` (a delivery's `eventId`). " +
          "Events are kept at least 30 days."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.get("listDeliveries", "/webhooks/:id/events", {
      params,
      query: pageQuery,
      success: Webhooks.WebhookDeliveryList,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "List a webhook's deliveries",
        "The webhook's delivery log, newest first: each delivery's event, payload, status, response status, error and duration."
      ))
      .pipe(requires("settings:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Webhooks",
    "Signed HTTP POST notifications to your URLs when records change. Deliveries are attempted once, " +
      "never retried; each carries an idempotency key, and `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the " +
      "raw body>` when the webhook has a secret."
  ))
{}
