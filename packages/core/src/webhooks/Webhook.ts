/**
 * Webhooks as the API shows them (docs/DECISIONS.md §7) and as the stores keep them.
 *
 * The stored record carries the HMAC secret, because deliveries are signed server-side; the API view replaces it
 * with `hasSecret`, so no response, event payload or log line ever carries a secret.
 *
 * A delivery is stored with the exact body bytes that were (or will be) POSTed, so the delivery log shows what the
 * receiver got and the signature can be recomputed over it. Internally a delivery is `pending` (never attempted),
 * `in_flight` (claimed by a dispatcher, POST under way) or finished; the API folds `in_flight` into `pending`.
 * What the endpoints accept is in `WebhookRequests.ts`.
 */
import { Schema } from "effect"
import { EventName } from "./EventCatalog.ts"
import { type DomainEventId, OrganizationId, Uuid, WebhookDeliveryId, WebhookId } from "../kernel/Ids.ts"
import { pageOf } from "../kernel/ListQuery.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

/** A registered webhook, as every endpoint returns it. */
export const Webhook = Schema.Struct({
  id: WebhookId,
  url: Schema.String,
  events: Schema.Array(EventName),
  hasSecret: Schema.Boolean,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Webhook" })
export type Webhook = typeof Webhook.Type

/** What the stores keep: the view's fields plus the organization and the secret (null: deliveries are unsigned). */
export interface WebhookRecord {
  readonly id: WebhookId
  readonly organizationId: OrganizationId
  readonly url: string
  readonly events: ReadonlyArray<EventName>
  readonly hmacSecret: string | null
  /**
   * The secret a rotation replaced, still signing beside the new one until `previousSecretExpiresAt`
   * (docs/DECISIONS.md §17); null when there is no overlap.
   */
  readonly previousHmacSecret: string | null
  readonly previousSecretExpiresAt: Timestamp | null
  readonly createdAt: Timestamp
  readonly updatedAt: Timestamp
}

/** The replaced secret of a record as a claim carries it (null when none is kept). */
export const previousSecretOf = (
  r: Pick<WebhookRecord, "previousHmacSecret" | "previousSecretExpiresAt">
): { readonly hmacSecret: string; readonly expiresAt: Timestamp } | null =>
  r.previousHmacSecret === null || r.previousSecretExpiresAt === null
    ? null
    : { hmacSecret: r.previousHmacSecret, expiresAt: r.previousSecretExpiresAt }

export const toWebhook = (r: WebhookRecord): Webhook => ({
  id: r.id,
  url: r.url,
  events: r.events,
  hasSecret: r.hmacSecret !== null,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt
})

/** The body of every delivery (spec: Webhook delivery envelope), in this key order on the wire. */
export const WebhookEnvelope = Schema.Struct({
  event: Schema.String,
  timestamp: Timestamp,
  idempotencyKey: Uuid,
  /**
   * The event this delivers: the same for a redelivery (docs/DECISIONS.md §17); a consumer dedupes on it. Absent
   * only in the logged bodies of deliveries made before envelopes carried it.
   */
  eventId: Schema.optionalKey(Uuid),
  data: Schema.Unknown
})
export type WebhookEnvelope = typeof WebhookEnvelope.Type

export const WebhookDeliveryStatus = Schema.Literals(["pending", "delivered", "failed"])
export type WebhookDeliveryStatus = typeof WebhookDeliveryStatus.Type

/** A row of `GET /webhooks/{id}/events`. */
export const WebhookDelivery = Schema.Struct({
  id: WebhookDeliveryId,
  webhookId: WebhookId,
  event: Schema.String,
  /** The event delivered: a redelivery has its original's. */
  eventId: Uuid,
  /** The delivery this one sends again; null for the first delivery of the event. */
  redeliveryOf: Schema.NullOr(WebhookDeliveryId),
  idempotencyKey: Uuid,
  status: WebhookDeliveryStatus,
  payload: WebhookEnvelope,
  responseStatus: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.NullOr(Schema.Finite),
  createdAt: Timestamp,
  attemptedAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

export type StoredDeliveryStatus = "pending" | "in_flight" | "delivered" | "failed"

export interface WebhookDeliveryRecord {
  readonly id: WebhookDeliveryId
  readonly organizationId: OrganizationId
  readonly webhookId: WebhookId
  /** The domain event delivered; a store holds at most one delivery per (event, webhook). */
  readonly eventId: DomainEventId
  readonly event: string
  readonly idempotencyKey: string
  readonly status: StoredDeliveryStatus
  /** The exact request body. */
  readonly body: string
  readonly responseStatus: number | null
  readonly error: string | null
  readonly durationMs: number | null
  readonly createdAt: Timestamp
  /** When the POST started (set when the delivery is claimed). */
  readonly attemptedAt: Timestamp | null
  /** The dispatcher that claimed it; null while pending. */
  readonly claimedBy: string | null
  /** The delivery this one sends again (a manual redelivery, docs/DECISIONS.md §17); null for the first. */
  readonly redeliveryOf: WebhookDeliveryId | null
  /**
   * The record the event is about (`review/<id>`), whose deliveries to one webhook go out in event order, one at a
   * time (docs/DECISIONS.md §17); null for events without a record id, redeliveries and pings, which are not ordered.
   */
  readonly recordKey: string | null
}

/** What a new delivery is made of; everything else about it starts empty. */
export type NewDelivery = Pick<
  WebhookDeliveryRecord,
  | "id"
  | "organizationId"
  | "webhookId"
  | "eventId"
  | "event"
  | "idempotencyKey"
  | "body"
  | "createdAt"
  | "redeliveryOf"
  | "recordKey"
>

/** A new delivery: pending, never attempted, no outcome and no claimer (fan-out, a test ping, a redelivery). */
export const pendingDelivery = (d: NewDelivery): WebhookDeliveryRecord => ({
  id: d.id,
  organizationId: d.organizationId,
  webhookId: d.webhookId,
  eventId: d.eventId,
  event: d.event,
  idempotencyKey: d.idempotencyKey,
  status: "pending",
  body: d.body,
  responseStatus: null,
  error: null,
  durationMs: null,
  createdAt: d.createdAt,
  attemptedAt: null,
  claimedBy: null,
  redeliveryOf: d.redeliveryOf,
  recordKey: d.recordKey
})

export const toWebhookDelivery = (r: WebhookDeliveryRecord): WebhookDelivery => ({
  id: r.id,
  webhookId: r.webhookId,
  event: r.event,
  eventId: r.eventId,
  redeliveryOf: r.redeliveryOf,
  idempotencyKey: r.idempotencyKey,
  status: r.status === "in_flight" ? "pending" : r.status,
  payload: JSON.parse(r.body) as WebhookEnvelope,
  responseStatus: r.responseStatus,
  error: r.error,
  durationMs: r.durationMs,
  createdAt: r.createdAt,
  attemptedAt: r.attemptedAt
})

export const WebhookList = pageOf(Webhook, "WebhookList")
export type WebhookList = typeof WebhookList.Type

export const WebhookDeliveryList = pageOf(WebhookDelivery, "WebhookDeliveryList")
export type WebhookDeliveryList = typeof WebhookDeliveryList.Type

/**
 * `GET /webhook-events`: every name a webhook may subscribe to (`data`), and the names this deployment emits
 * (`emitted`): the service's own plus those its embedding host records. A subscription to any catalog name is
 * accepted; one to a name outside `emitted` simply never fires here.
 */
export const WebhookEventList = Schema.Struct({ data: Schema.Array(EventName), emitted: Schema.Array(EventName) })
  .annotate({ identifier: "WebhookEventList" })
export type WebhookEventList = typeof WebhookEventList.Type
