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
}>()("feedback/EventOutbox") {}

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
        records.push({ id: yield* nextIdFrom<DomainEventId>(ids), organizationId, event: e.event, data: e.data, occurredAt })
      }
      yield* outbox.appendAll(records)
    })
})
