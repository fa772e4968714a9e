/**
 * Test-only helpers that run one unit of work, or record one event, over the store in context. Use-case services
 * capture `UnitOfWork`, `EventOutbox` and `IdGenerator` when they are built and never need these; suites and
 * benchmarks that drive the store directly (the outbox, the dispatcher's steps, SQL error mapping) do.
 */
import { Effect } from "effect"
import { EventOutbox, IdGenerator, makeEventRecorder, type OrganizationId, UnitOfWork } from "@feedback/core"

/** Runs `effect` as one unit of work of the store in context. */
export const transactional = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | UnitOfWork> =>
  UnitOfWork.use((uow) => uow.transaction(effect))

/** Records one event through the outbox and id generator in context. */
export const recordEvent = (
  organizationId: OrganizationId,
  event: string,
  data: unknown
): Effect.Effect<void, never, EventOutbox | IdGenerator> =>
  Effect.gen(function*() {
    yield* makeEventRecorder(yield* EventOutbox, yield* IdGenerator).record(organizationId, event, data)
  })
