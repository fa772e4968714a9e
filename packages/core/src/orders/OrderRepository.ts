/**
 * Storage of orders (docs/DECISIONS.md §48). Every operation is scoped to one organization; another organization's
 * order is never found, changed or counted. Inserts never fail on a uniqueness clash: each order comes back as
 * inserted or as clashing on its `externalId` (orders of one batch must not clash with each other).
 */
import { Context, type Effect, type Option } from "effect"
import type { InsertOutcome } from "../catalog/CatalogRepository.ts"
import type { FilterAst } from "../kernel/Filter.ts"
import type { OrderId, OrganizationId } from "../kernel/Ids.ts"
import type { ListRequest, Page } from "../kernel/ListQuery.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import type { EnrolmentPlan } from "../surveys/SurveyRules.ts"
import type { Order, OrderStatus } from "./Order.ts"
import type { OrderReferences, ResolvedOrderReferences } from "./OrderRules.ts"

/** The orders a bulk update applies to: `filter` AND `search`, with the list's meaning (`OrderRules.ts`). */
export interface OrderMatch {
  readonly filter: FilterAst
  readonly search: string | undefined
}

/** Orders a bulk move moved from one status: how many, and their ids when asked for (else none). */
export interface MovedOrders {
  readonly from: OrderStatus
  readonly count: number
  readonly ids: ReadonlyArray<OrderId>
}

/**
 * What a bulk move does besides moving (docs/DECISIONS.md §75): the surveys it starts, enrolled by the move itself
 * as `SurveyRepository.enrollOrders` enrolls (for the orders moved from each status, the plans of the active flows
 * that move triggers; links under `linkBase`), and whether the moved ids are wanted back.
 */
export interface MoveFollowUp {
  readonly enrol: ReadonlyArray<{ readonly from: OrderStatus; readonly plans: ReadonlyArray<EnrolmentPlan> }>
  readonly linkBase: string
  readonly withIds: boolean
}

export class OrderRepository extends Context.Service<OrderRepository, {
  /** Which of the named products, customers and sites exist in the organization. */
  readonly resolveReferences: (
    organizationId: OrganizationId,
    references: OrderReferences
  ) => Effect.Effect<ResolvedOrderReferences>
  /** One outcome per order, in order; an order whose `externalId` is taken is not inserted. */
  readonly insertOrders: (
    organizationId: OrganizationId,
    orders: ReadonlyArray<Order>
  ) => Effect.Effect<ReadonlyArray<InsertOutcome>>
  readonly findOrder: (organizationId: OrganizationId, id: OrderId) => Effect.Effect<Option.Option<Order>>
  /** The organization's orders among `ids`, in one read (the survey sender's wave); unknown ids are left out. */
  readonly findOrders: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<OrderId>
  ) => Effect.Effect<ReadonlyArray<Order>>
  /** `findOrder`, holding the order until the unit of work ends, so concurrent changes of it take turns. */
  readonly lockOrder: (organizationId: OrganizationId, id: OrderId) => Effect.Effect<Option.Option<Order>>
  /**
   * A bulk status move (docs/DECISIONS.md §48): every matching order that can move to `to` (`OrderRules.moveStatus`)
   * moves, its stamps and `updatedAt` set to `at`, and `order.updated` is recorded for it (occurred at `at`, the
   * order as `findOrder` answers it afterwards), and the moved orders are enrolled as `followUp` says, all in the
   * caller's unit of work. Set-based: the orders never travel to the caller (a bulk update moves 100,000), nor their
   * ids unless `followUp.withIds`. Answers the moved orders by the status they moved from.
   */
  readonly moveMatching: (
    organizationId: OrganizationId,
    match: OrderMatch,
    to: OrderStatus,
    at: Timestamp,
    followUp: MoveFollowUp
  ) => Effect.Effect<ReadonlyArray<MovedOrders>>
  /** Stores the status, its times, the metadata and `updatedAt` of each (existing) order. */
  readonly updateOrders: (organizationId: OrganizationId, orders: ReadonlyArray<Order>) => Effect.Effect<void>
  /** Removes the order with its lines and answers it as it was. */
  readonly deleteOrder: (organizationId: OrganizationId, id: OrderId) => Effect.Effect<Option.Option<Order>>
  readonly listOrders: (organizationId: OrganizationId, request: ListRequest) => Effect.Effect<Page<Order>>
}>()("feedback/OrderRepository") {}
