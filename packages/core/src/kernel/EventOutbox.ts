/**
 * The domain event outbox. Use-cases record `{event, data}` inside their unit of work, so an event exists exactly
 * when the change it announces committed. Delivery (webhooks) reads the outbox after commit, off the request path.
 */
import { Context, Effect, Schema } from "effect"
import { DomainEventId, OrganizationId } from "./Ids.ts"
import { type IdGenerator, nextIdFrom } from "./IdGenerator.ts"
import { now, Timestamp } from "./Timestamp.ts"

export const DomainEvent = Schema.Struct({
  id: DomainEventId,
  organizationId: OrganizationId,
  event: Schema.String,
  /** The record the event concerns, already encoded in the shape the API returns it. */
  data: Schema.Unknown,
  occurredAt: Timestamp
})
export type DomainEvent = typeof DomainEvent.Type

export class EventOutbox extends Context.Service<EventOutbox, {
  /** Appends an event; must run inside the unit of work of the change it announces. */
  readonly append: (event: DomainEvent) => Effect.Effect<void>
  /** Appends several events in order with one write (bulk operations such as imports); same rules as `append`. */
  readonly appendAll: (events: ReadonlyArray<DomainEvent>) => Effect.Effect<void>
  /** Events of an organization in the order they were recorded (for tests and diagnostics). */
  readonly listForOrganization: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<DomainEvent>>
  /**
   * Privacy (docs/DECISIONS.md §17): sets `fields` to null in the data of the organization's events about one record
   * (named `<resource>.*`, `data.id` = `recordId`) and in the bodies of their webhook deliveries, whose bytes stay
   * as they were otherwise (`redactDeliveryBody`). Runs in the unit of work of the deletion that asks for it.
   */
  readonly redact: (organizationId: OrganizationId, redaction: Redaction) => Effect.Effect<void>
  /**
   * The event feed (docs/DECISIONS.md §17): the organization's committed events after `after`, oldest first, at most
   * `limit`, only those named in `events` when given. A position is final: no event ever appears before a position
   * already handed out (PostgreSQL orders by committing transaction, then by recording order).
   */
  readonly feed: (organizationId: OrganizationId, request: FeedRequest) => Effect.Effect<ReadonlyArray<FeedEntry>>
  /**
   * The same feed across every organization (the in-process event stream, docs/DECISIONS.md §65): committed events
   * after `after` in the one order positions define, with the same finality. A position of an organization's feed
   * is a position here too.
   */
  readonly feedAll: (request: FeedRequest) => Effect.Effect<ReadonlyArray<FeedEntry>>
  /** Deletes up to `limit` events recorded before `before` that were already fanned out; how many. */
  readonly purge: (before: Timestamp, limit: number) => Effect.Effect<number>
}>()("feedback/EventOutbox") {}

/** A place in the feed: opaque to the core, ordered by the store. */
export type FeedPosition = string

export interface FeedRequest {
  readonly after: FeedPosition | undefined
  readonly limit: number
  readonly events: ReadonlyArray<string> | undefined
}

export interface FeedEntry {
  readonly position: FeedPosition
  readonly event: DomainEvent
}

export interface Redaction {
  readonly resource: string
  readonly recordId: string
  readonly fields: ReadonlyArray<string>
}

/** Whether an event is about the redaction's record. */
export const isAbout = (event: { readonly event: string; readonly data: unknown }, r: Redaction): boolean =>
  event.event.startsWith(`${r.resource}.`) && typeof event.data === "object" && event.data !== null &&
  (event.data as { readonly id?: unknown }).id === r.recordId

/** The data with each present, non-null field of `fields` set to null; the same object when there is none. */
export const redactData = (data: unknown, fields: ReadonlyArray<string>): unknown => {
  if (typeof data !== "object" || data === null) return data
  const record = data as Record<string, unknown>
  if (!fields.some((f) => record[f] !== undefined && record[f] !== null)) return data
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(record)) out[k] = fields.includes(k) && v !== undefined ? null : v
  return out
}

/**
 * A delivery body with its envelope's `data` redacted. Bodies are `JSON.stringify` of the envelope, so parsing and
 * stringifying again gives the same bytes but for the redacted values (keys keep their order).
 */
export const redactDeliveryBody = (body: string, fields: ReadonlyArray<string>): string => {
  const envelope = JSON.parse(body) as { data?: unknown }
  const data = redactData(envelope.data, fields)
  return data === envelope.data ? body : JSON.stringify({ ...envelope, data })
}

/**
 * Records domain events through one outbox with ids from one generator. A service makes it once, from the outbox
 * and generator it captured at construction, so its use-cases carry neither in their requirements.
 */
export interface EventRecorder {
  /** Records `event` with `data` (a JSON value in the API's shape) for the organization. */
  readonly record: (organizationId: OrganizationId, event: string, data: unknown) => Effect.Effect<void>
  /**
   * Records one event per item for the organization, in order, with a single outbox write (an import of 10,000
   * records must not cost 10,000 round trips).
   */
  readonly recordAll: (
    organizationId: OrganizationId,
    events: ReadonlyArray<{ readonly event: string; readonly data: unknown }>
  ) => Effect.Effect<void>
}

export const makeEventRecorder = (outbox: EventOutbox["Service"], ids: IdGenerator["Service"]): EventRecorder => ({
  record: (organizationId, event, data) =>
    Effect.gen(function*() {
      const id = yield* nextIdFrom<DomainEventId>(ids)
      const occurredAt = yield* now
      yield* outbox.append({ id, organizationId, event, data, occurredAt })
    }),
  recordAll: (organizationId, events) =>
    Effect.gen(function*() {
      if (events.length === 0) return
      const occurredAt = yield* now
      const records: Array<DomainEvent> = []
      for (const e of events) {
        records.push({
          id: yield* nextIdFrom<DomainEventId>(ids),
          organizationId,
          event: e.event,
          data: e.data,
          occurredAt
        })
      }
      yield* outbox.appendAll(records)
    })
})
