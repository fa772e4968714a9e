/**
 * A transactional unit of work: every write a use-case makes inside `transaction`, including the domain events it
 * records in the outbox, commits together or not at all. Nested calls join the outer transaction.
 */
import { Context, type Effect } from "effect"
import type { OrganizationId } from "./Ids.ts"

export class UnitOfWork extends Context.Service<UnitOfWork, {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * A transaction of one organization that may run long (a strict import job): all or nothing, like `transaction`.
   * A store whose transactions exclude one another (memory) lets other organizations' transactions run between the
   * `transaction`s it makes inside, and holds back only this organization's (docs/FAIRNESS.md).
   */
  readonly organizationTransaction: <A, E, R>(
    organizationId: OrganizationId,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}>()("feedback/UnitOfWork") {}
