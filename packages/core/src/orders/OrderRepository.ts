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
import type { Order } from "./Order.ts"
import type { OrderReferences, ResolvedOrderReferences } from "./OrderRules.ts"

/** The orders a bulk update applies to: `filter` AND `search`, with the list's meaning (`OrderRules.ts`). */
export interface OrderMatch {
  readonly filter: FilterAst
  readonly search: string | undefined
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
  /** Every matching order, each held like `lockOrder` holds one. */
  readonly lockMatching: (organizationId: OrganizationId, match: OrderMatch) => Effect.Effect<ReadonlyArray<Order>>
  /** Stores the status, its times, the metadata and `updatedAt` of each (existing) order. */
  readonly updateOrders: (organizationId: OrganizationId, orders: ReadonlyArray<Order>) => Effect.Effect<void>
  /** Removes the order with its lines and answers it as it was. */
  readonly deleteOrder: (organizationId: OrganizationId, id: OrderId) => Effect.Effect<Option.Option<Order>>
  readonly listOrders: (organizationId: OrganizationId, request: ListRequest) => Effect.Effect<Page<Order>>
}>()("feedback/OrderRepository") {}
