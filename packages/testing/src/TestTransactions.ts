/**
 * Test-only helpers that run one unit of work, record one event or read an organization's events, over the store in
 * context. Use-case services
 * capture `UnitOfWork`, `EventOutbox` and `IdGenerator` when they are built and never need these; suites and
 * benchmarks that drive the store directly (the outbox, the dispatcher's steps, SQL error mapping) do.
 */
import { Effect } from "effect"
import { Kernel } from "@feedback/core"

/** Runs `effect` as one unit of work of the store in context. */
export const transactional = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Kernel.UnitOfWork> =>
  Kernel.UnitOfWork.use((uow) => uow.transaction(effect))

/** Records one event through the outbox and id generator in context. */
export const recordEvent = (
  organizationId: Kernel.OrganizationId,
  event: string,
  data: unknown
): Effect.Effect<void, never, Kernel.EventOutbox | Kernel.IdGenerator> =>
  Effect.gen(function*() {
    yield* Kernel.makeEventRecorder(yield* Kernel.EventOutbox, yield* Kernel.IdGenerator).record(
      organizationId,
      event,
      data
    )
  })

/** The events recorded for `organizationId`, oldest first, as the outbox holds them. */
export const eventsOf = (organizationId: Kernel.OrganizationId) =>
  Kernel.EventOutbox.use((o) => o.listForOrganization(organizationId))
