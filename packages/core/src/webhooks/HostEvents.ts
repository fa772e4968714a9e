/**
 * Events about records an embedding host owns (docs/DECISIONS.md §13). The catalog names loyalty, wishlists
 * and more that this service does not hold; a host that does declares the names it will record
 * (`HostEventNames`) and records them with `HostEvents` inside its own unit of work, so an event exists exactly
 * when the host's change committed, and is delivered to subscribed webhooks like any other.
 *
 *   yield* uow.transaction(Effect.gen(function*() {
 *     yield* saveTransaction(transaction)                         // the host's own write, same transaction
 *     yield* HostEvents.use((h) => h.record(organizationId, "loyaltyTransaction.created", transaction))
 *   }))
 */
import { Context, Effect, Layer } from "effect"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import type { OrganizationId } from "../kernel/Ids.ts"
import { IdGenerator } from "../kernel/IdGenerator.ts"
import { type EventName, isEventName, SERVICE_EVENT_NAMES } from "./EventCatalog.ts"

/** The catalog names the host records; none by default. `GET /webhook-events` reports them as emitted. */
export const HostEventNames = Context.Reference<ReadonlyArray<EventName>>("feedback/HostEventNames", {
  defaultValue: () => []
})

/** A host declaration that names no catalog event, or one the service records itself: a configuration error. */
export const hostEventNamesProblem = (names: ReadonlyArray<string>): string | undefined => {
  const unknown = names.filter((n) => !isEventName(n))
  if (unknown.length > 0) return `not in the event catalog: ${unknown.join(", ")}`
  const own = names.filter((n) => SERVICE_EVENT_NAMES.includes(n as EventName))
  if (own.length > 0) return `recorded by the service itself, not by a host: ${own.join(", ")}`
  return undefined
}

/** Every name this deployment emits: the service's own and the host's, in catalog order. */
export const emittedEventNames = (hostNames: ReadonlyArray<EventName>): ReadonlyArray<EventName> => [
  ...SERVICE_EVENT_NAMES,
  ...hostNames.filter((n) => !SERVICE_EVENT_NAMES.includes(n))
]

export class HostEvents extends Context.Service<HostEvents, {
  /**
   * Records `event` with `data` (the record as the host's API shows it) for the organization; run it inside the
   * unit of work of the change it announces. An undeclared name is a defect: declare it in `HostEventNames`.
   */
  readonly record: (organizationId: OrganizationId, event: EventName, data: unknown) => Effect.Effect<void>
}>()("feedback/HostEvents") {
  static readonly layer = Layer.effect(
    HostEvents,
    Effect.gen(function*() {
      const declared = yield* HostEventNames
      const problem = hostEventNamesProblem(declared)
      if (problem !== undefined) return yield* Effect.die(new Error(`HostEventNames: ${problem}`))
      const allowed = new Set<string>(declared)
      const events = makeEventRecorder(yield* EventOutbox, yield* IdGenerator)
      return HostEvents.of({
        record: (organizationId, event, data) =>
          allowed.has(event)
            ? events.record(organizationId, event, data)
            : Effect.die(
              new Error(`${event} is not declared in HostEventNames (declared: ${declared.join(", ") || "none"})`)
            )
      })
    })
  )
}
