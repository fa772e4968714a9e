/**
 * A transactional unit of work: every write a use-case makes inside `transaction`, including the domain events it
 * records in the outbox, commits together or not at all. Nested calls join the outer transaction.
 */
import { Context, type Effect } from "effect"

export class UnitOfWork extends Context.Service<UnitOfWork, {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("feedback/UnitOfWork") {}
