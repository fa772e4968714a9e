/**
 * Storage of webhooks, their deliveries and the dispatcher's state. The rules (who gets which event, what is sent,
 * when a delivery counts as interrupted) live in `Webhooks.ts` and `WebhookDispatcher.ts`; a store only keeps rows
 * and makes the few operations below atomic, which is what makes delivery at most once:
 *
 * - `takeUndispatchedEvents` hands each outbox event to exactly one caller, even with several processes on one
 *   database, and (run in the same unit of work as `insertDeliveries`) the fan-out of an event happens once.
 * - `claimDeliveries` moves pending deliveries to `in_flight` for one dispatcher before any POST, so no two
 *   dispatchers ever send the same delivery, and a crash leaves a visible in-flight row rather than a resend.
 * - `failInterrupted` turns the in-flight rows of dispatchers that stopped heart-beating into failures.
 * - `releaseDeliveries` hands claimed deliveries a stopping dispatcher never POSTed back to pending.
 */
import { Context, type Effect, type Option } from "effect"
import type { DomainEvent } from "../kernel/EventOutbox.ts"
import type { OrganizationId, WebhookDeliveryId, WebhookId } from "../kernel/Ids.ts"
import type { NewestFirstPageRequest, NewestFirstPosition } from "../kernel/NewestFirstPage.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import type { WebhookDeliveryRecord, WebhookRecord } from "./Webhook.ts"

export type WebhookListPosition = NewestFirstPosition
export type WebhookPageRequest = NewestFirstPageRequest

/** A delivery a dispatcher has claimed, with what it needs to send it (read at claim time). */
export interface ClaimedDelivery {
  readonly delivery: WebhookDeliveryRecord
  readonly url: string
  readonly hmacSecret: string | null
  /** The replaced secret while a rotation's overlap may still be running; the dispatcher checks the time. */
  readonly previousSecret: { readonly hmacSecret: string; readonly expiresAt: Timestamp } | null
}

export interface ClaimRequest {
  readonly dispatcherId: string
  readonly at: Timestamp
  /** Deliveries to claim at most. */
  readonly limit: number
  /** A webhook with this many deliveries in flight (by any dispatcher) gets no more until one finishes. */
  readonly perWebhookLimit: number
  /**
   * An organization with this many deliveries in flight (by any dispatcher) gets no more until one finishes; the
   * claim takes organizations in turn (each one's oldest first, then each one's next), never oldest first across
   * all (docs/FAIRNESS.md). Absent: no limit per organization.
   */
  readonly perOrganizationLimit?: number | undefined
  /**
   * Outcomes of this dispatcher's deliveries, recorded in the same write as the claim (as `completeDeliveries`
   * would: only its own in-flight rows). Whether this same claim already sees them as finished (for
   * `perWebhookLimit` and the order of their records) is the store's choice; the next claim does.
   */
  readonly completed?: ReadonlyArray<CompletedDelivery> | undefined
}

export interface DeliveryOutcome {
  readonly status: "delivered" | "failed"
  readonly responseStatus: number | null
  readonly error: string | null
  readonly durationMs: number | null
}

/** One outcome of a batch (`completeDeliveries`). */
export interface CompletedDelivery {
  readonly organizationId: OrganizationId
  readonly id: WebhookDeliveryId
  readonly outcome: DeliveryOutcome
}

export class WebhookRepository extends Context.Service<WebhookRepository, {
  readonly insert: (webhook: WebhookRecord) => Effect.Effect<void>
  /** Replaces the stored record of the same organization and id. */
  readonly update: (webhook: WebhookRecord) => Effect.Effect<void>
  /** Deletes the webhook and its deliveries; false when there was none. */
  readonly remove: (organizationId: OrganizationId, id: WebhookId) => Effect.Effect<boolean>
  readonly findById: (organizationId: OrganizationId, id: WebhookId) => Effect.Effect<Option.Option<WebhookRecord>>
  /** Newest first by (createdAt, id). */
  readonly list: (
    organizationId: OrganizationId,
    page: WebhookPageRequest
  ) => Effect.Effect<ReadonlyArray<WebhookRecord>>
  /** Deliveries of one webhook, newest first by (createdAt, id). */
  readonly listDeliveries: (
    organizationId: OrganizationId,
    webhookId: WebhookId,
    page: WebhookPageRequest
  ) => Effect.Effect<ReadonlyArray<WebhookDeliveryRecord>>
  /** One delivery of the webhook, or none. */
  readonly findDelivery: (
    organizationId: OrganizationId,
    webhookId: WebhookId,
    id: WebhookDeliveryId
  ) => Effect.Effect<Option.Option<WebhookDeliveryRecord>>

  // --- the dispatcher ------------------------------------------------------------------------------------------

  /**
   * Up to `limit` committed outbox events not yet fanned out, now marked as fanned out, taken organizations in turn
   * (each one's oldest first, then each one's next: `fairClaimOrder`), so one organization's backlog never fills a
   * unit while another's event waits (docs/FAIRNESS.md); an organization with `MAX_QUEUED_DELIVERIES_PER_ORGANIZATION`
   * pending deliveries is passed over whole, its events waiting in order. Returned oldest first. Must run inside
   * the unit of work that inserts their deliveries: if it rolls back, the events are handed out again. Events
   * another unit of work is taking at the same time are skipped, never handed out twice.
   */
  readonly takeUndispatchedEvents: (limit: number) => Effect.Effect<ReadonlyArray<DomainEvent>>
  /** Every webhook of these organizations. */
  readonly webhooksOf: (organizationIds: ReadonlyArray<OrganizationId>) => Effect.Effect<ReadonlyArray<WebhookRecord>>
  /**
   * New pending deliveries; a first delivery (`redeliveryOf` null) that repeats an (event, webhook) pair already
   * stored is ignored. Redeliveries and pings are always stored.
   */
  readonly insertDeliveries: (deliveries: ReadonlyArray<WebhookDeliveryRecord>) => Effect.Effect<void>
  /**
   * Atomically moves up to `limit` pending deliveries to `in_flight` for this dispatcher (with `attemptedAt = at`),
   * respecting `perWebhookLimit` and `perOrganizationLimit`, organizations in turn and each one's oldest first
   * (`fairClaimOrder`), and returns them with their webhook's current URL and secret.
   */
  readonly claimDeliveries: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /** Records the outcome of a delivery this dispatcher claimed; false when it is no longer its in-flight row. */
  readonly completeDelivery: (
    dispatcherId: string,
    organizationId: OrganizationId,
    id: WebhookDeliveryId,
    outcome: DeliveryOutcome
  ) => Effect.Effect<boolean>
  /**
   * `completeDelivery` for many deliveries in one write (the dispatcher records the outcomes of the POSTs that
   * finished while it was busy together). Each is recorded only if it is still this dispatcher's in-flight row;
   * returns the ids that were recorded.
   */
  readonly completeDeliveries: (
    dispatcherId: string,
    completed: ReadonlyArray<CompletedDelivery>
  ) => Effect.Effect<ReadonlyArray<WebhookDeliveryId>>
  /**
   * Hands deliveries this dispatcher claimed but never sent back: each that is still its in-flight row becomes
   * pending again, unclaimed and unattempted, as if never claimed. Returns how many. A dispatcher calls it only for
   * deliveries it has not handed to the transport (a stopping dispatcher's claimed-ahead queue).
   */
  readonly releaseDeliveries: (
    dispatcherId: string,
    deliveries: ReadonlyArray<{ readonly organizationId: OrganizationId; readonly id: WebhookDeliveryId }>
  ) => Effect.Effect<number>
  /** Whether any dispatcher (of any process) heart-beat at or after `since`. */
  readonly dispatcherAlive: (since: Timestamp) => Effect.Effect<boolean>
  /** Registers the dispatcher or renews its lease. */
  readonly heartbeat: (dispatcherId: string, at: Timestamp) => Effect.Effect<void>
  /** Forgets a dispatcher that stopped cleanly (after its in-flight deliveries finished). */
  readonly removeDispatcher: (dispatcherId: string) => Effect.Effect<void>
  /**
   * Fails, with `error`, every in-flight delivery whose dispatcher is unknown or last heart-beat before
   * `staleBefore`. Returns how many.
   */
  readonly failInterrupted: (staleBefore: Timestamp, error: string) => Effect.Effect<number>
}>()("feedback/WebhookRepository") {}
