/**
 * The domain event outbox. Use-cases record `{event, data}` inside their unit of work, so an event exists exactly
 * when the change it announces committed. Delivery (webhooks) reads the outbox after commit, off the request path.
 */
import { Context, Effect, Schema } from "effect"
import { DomainEventId, OrganizationId } from "./Ids.ts"
import { nextId, type IdGenerator } from "./IdGenerator.ts"
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

/** Records `event` with `data` (a JSON value in the API's shape) for the organization. */
export const recordEvent = (
  organizationId: OrganizationId,
  event: string,
  data: unknown
): Effect.Effect<void, never, EventOutbox | IdGenerator> =>
  Effect.gen(function*() {
    const outbox = yield* EventOutbox
    const id = yield* nextId<DomainEventId>()
    const occurredAt = yield* now
    yield* outbox.append({ id, organizationId, event, data, occurredAt })
  })

/**
 * Records one event per item for the organization, in order, with a single outbox write (an import of 10,000
 * records must not cost 10,000 round trips).
 */
export const recordEvents = (
  organizationId: OrganizationId,
  events: ReadonlyArray<{ readonly event: string; readonly data: unknown }>
): Effect.Effect<void, never, EventOutbox | IdGenerator> =>
  Effect.gen(function*() {
    if (events.length === 0) return
    const outbox = yield* EventOutbox
    const occurredAt = yield* now
    const records: Array<DomainEvent> = []
    for (const e of events) {
      records.push({ id: yield* nextId<DomainEventId>(), organizationId, event: e.event, data: e.data, occurredAt })
    }
    yield* outbox.appendAll(records)
  })
