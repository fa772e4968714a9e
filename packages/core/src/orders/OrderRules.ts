/**
 * The pure rules of orders (docs/DECISIONS.md §48): which status moves are allowed and what each stamps, what a PATCH
 * does, how the references of a request (products, customers, sites) resolve, and the list endpoint's fields.
 * Plain functions over data, tested without any Layer.
 */
import { Result } from "effect"
import { InvalidRequest, type RequestIssue } from "../kernel/Errors.ts"
import { type FieldType, makeFieldCatalog } from "../kernel/Filter.ts"
import type { CustomerId, ProductId, ProductVariantId } from "../kernel/Ids.ts"
import { defineListEndpoint } from "../kernel/ListQuery.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import { sameMetadata } from "../reviews/ReviewRules.ts"
import type { Order, OrderLine, OrderStatus } from "./Order.ts"
import type { OrderLineInput, OrderPatch } from "./OrderRequests.ts"

// ---------------------------------------------------------------------------------------------------------------
// Status moves

/** The times a status move stamps. */
export type OrderStamp = "fulfilledAt" | "deliveredAt" | "cancelledAt"

/**
 * Every allowed move and the times it stamps: forward only (open → delivered stamps both times), and any status but
 * cancelled may be cancelled. A move absent from the table is refused (409); the same status is no move at all.
 */
export const statusMoves: Readonly<Record<OrderStatus, Partial<Record<OrderStatus, ReadonlyArray<OrderStamp>>>>> = {
  open: { fulfilled: ["fulfilledAt"], delivered: ["fulfilledAt", "deliveredAt"], cancelled: ["cancelledAt"] },
  fulfilled: { delivered: ["deliveredAt"], cancelled: ["cancelledAt"] },
  delivered: { cancelled: ["cancelledAt"] },
  cancelled: {}
}

export type StatusMove =
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Moved"; readonly order: Order; readonly stamped: ReadonlyArray<OrderStamp> }
  | { readonly _tag: "Refused"; readonly from: OrderStatus; readonly to: OrderStatus }

/** What moving `order` to `to` at `at` does (`updatedAt` is the caller's to set). */
export const moveStatus = (order: Order, to: OrderStatus, at: Timestamp): StatusMove => {
  if (order.status === to) return { _tag: "Unchanged" }
  const stamps = statusMoves[order.status][to]
  if (stamps === undefined) return { _tag: "Refused", from: order.status, to }
  const stamped: Partial<Record<OrderStamp, Timestamp>> = {}
  for (const stamp of stamps) stamped[stamp] = at
  return { _tag: "Moved", order: { ...order, ...stamped, status: to }, stamped: stamps }
}

export const refusedMoveMessage = (from: OrderStatus, to: OrderStatus): string =>
  `An order that is ${from} cannot become ${to}: its status only moves forward (open, fulfilled, delivered) ` +
  `or to cancelled, and a cancelled order stays cancelled.`

export type OrderPatchPlan =
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Changed"; readonly order: Order; readonly stamped: ReadonlyArray<OrderStamp> }
  | { readonly _tag: "Refused"; readonly from: OrderStatus; readonly to: OrderStatus }

/** What `PATCH /orders/{id}` does to `current` at `at`: the status move (if any) and the replaced metadata. */
export const planOrderPatch = (current: Order, patch: OrderPatch, at: Timestamp): OrderPatchPlan => {
  const move = patch.status === undefined ? { _tag: "Unchanged" } as const : moveStatus(current, patch.status, at)
  if (move._tag === "Refused") return move
  const metadataChanged = patch.metadata !== undefined && !sameMetadata(current.metadata, patch.metadata)
  if (move._tag === "Unchanged" && !metadataChanged) return { _tag: "Unchanged" }
  const moved = move._tag === "Moved" ? move.order : current
  return {
    _tag: "Changed",
    order: { ...moved, ...(metadataChanged ? { metadata: { ...patch.metadata } } : {}), updatedAt: at },
    stamped: move._tag === "Moved" ? move.stamped : []
  }
}

// ---------------------------------------------------------------------------------------------------------------
// References

/** What a request names that must exist in the organization. */
export interface OrderReferences {
  readonly productIds: ReadonlyArray<string>
  readonly productSlugs: ReadonlyArray<string>
  readonly customerIds: ReadonlyArray<string>
  readonly customerEmails: ReadonlyArray<string>
  readonly siteIds: ReadonlyArray<string>
  /** `externalId`s the request would give its orders. */
  readonly externalIds: ReadonlyArray<string>
}

/** What the store found of them. Emails are lower-cased. */
export interface ResolvedOrderReferences {
  readonly productIds: ReadonlySet<string>
  readonly productsBySlug: ReadonlyMap<string, ProductId>
  readonly customerIds: ReadonlySet<string>
  readonly customersByEmail: ReadonlyMap<string, CustomerId>
  readonly siteIds: ReadonlySet<string>
  /** Those of `externalIds` another order of the organization already has. */
  readonly takenExternalIds: ReadonlySet<string>
}

/** The distinct references of some orders' lines, customers and sites. */
export const orderReferencesOf = (
  orders: ReadonlyArray<{
    readonly lines: ReadonlyArray<OrderLineInput>
    readonly customerId?: string | undefined
    readonly customerEmail?: string | undefined
    readonly siteId?: string | undefined
    readonly externalId?: string | undefined
  }>
): OrderReferences => {
  const productIds = new Set<string>()
  const productSlugs = new Set<string>()
  const customerIds = new Set<string>()
  const customerEmails = new Set<string>()
  const siteIds = new Set<string>()
  const externalIds = new Set<string>()
  for (const order of orders) {
    for (const line of order.lines) {
      if (line.productId !== undefined) productIds.add(line.productId)
      if (line.productSlug !== undefined) productSlugs.add(line.productSlug)
    }
    if (order.customerId !== undefined) customerIds.add(order.customerId)
    if (order.customerEmail !== undefined) customerEmails.add(order.customerEmail.toLowerCase())
    if (order.siteId !== undefined) siteIds.add(order.siteId)
    if (order.externalId !== undefined) externalIds.add(order.externalId)
  }
  return {
    productIds: [...productIds],
    productSlugs: [...productSlugs],
    customerIds: [...customerIds],
    customerEmails: [...customerEmails],
    siteIds: [...siteIds],
    externalIds: [...externalIds]
  }
}

/** The lines with their products resolved, or one issue per line whose product is not in the organization. */
export const resolveLines = (
  lines: ReadonlyArray<OrderLineInput>,
  refs: ResolvedOrderReferences,
  path: string
): Result.Result<ReadonlyArray<OrderLine>, ReadonlyArray<RequestIssue>> => {
  const resolved: Array<OrderLine> = []
  const issues: Array<RequestIssue> = []
  lines.forEach((line, i) => {
    const productId = line.productId !== undefined
      ? (refs.productIds.has(line.productId) ? line.productId as ProductId : undefined)
      : refs.productsBySlug.get(line.productSlug ?? "")
    if (productId === undefined) {
      issues.push(
        line.productId !== undefined
          ? {
            path: `${path}[${i}].productId`,
            message: `no product with id ${line.productId} exists in this organization`
          }
          : {
            path: `${path}[${i}].productSlug`,
            message: `no product with slug ${JSON.stringify(line.productSlug)} exists in this organization`
          }
      )
      return
    }
    resolved.push({
      productId,
      productVariantId: (line.productVariantId ?? null) as ProductVariantId | null,
      quantity: line.quantity ?? 1
    })
  })
  return issues.length > 0 ? Result.fail(issues) : Result.succeed(resolved)
}

/** `resolveLines` failing as one 400 naming each unresolved line. */
export const resolveLinesOrInvalid = (
  lines: ReadonlyArray<OrderLineInput>,
  refs: ResolvedOrderReferences,
  path: string
): Result.Result<ReadonlyArray<OrderLine>, InvalidRequest> =>
  Result.mapError(resolveLines(lines, refs, path), (issues) => InvalidRequest.of(issues))

/** The distinct products of an order, in line order (what a survey asks about, docs/DECISIONS.md §48). */
export const distinctProducts = (order: Pick<Order, "lines">): ReadonlyArray<OrderLine> => {
  const seen = new Set<string>()
  const distinct: Array<OrderLine> = []
  for (const line of order.lines) {
    if (seen.has(line.productId)) continue
    seen.add(line.productId)
    distinct.push(line)
  }
  return distinct
}

// ---------------------------------------------------------------------------------------------------------------
// Lists

export const orderFilterFields: Readonly<Record<string, FieldType>> = {
  id: "uuid",
  externalId: "string",
  status: "string",
  placedAt: "timestamp",
  createdAt: "timestamp",
  updatedAt: "timestamp",
  "customer.id": "uuid",
  "customer.email": "string"
}

export const orderFilterCatalog = makeFieldCatalog(orderFilterFields, ["metadata"])

/** `GET /orders` (docs/DECISIONS.md §4, §48). */
export const orderListEndpoint = defineListEndpoint({
  name: "orders",
  sorts: ["placedAt", "-placedAt", "createdAt", "-createdAt", "updatedAt", "-updatedAt"],
  defaultSort: "-createdAt",
  includes: [],
  catalog: orderFilterCatalog
})

/**
 * Reads a field of `orderFilterFields` from an order and its customer's email (`FilterEvaluate.FieldAccessor`): the
 * one reading of an order by the list's filters in memory and by survey flow conditions (docs/DECISIONS.md §48).
 */
export const orderField = (order: Order, customerEmail: string | null) => (path: string): unknown =>
  path === "customer.id"
    ? order.customerId
    : path === "customer.email"
    ? customerEmail
    : (order as unknown as Record<string, unknown>)[path]

/** What `search` looks in: the order's number and external id, and its customer's email. */
export const orderSearchValues = (order: Order, customerEmail: string | null): ReadonlyArray<string | null> => [
  order.orderNumber,
  order.externalId,
  customerEmail
]
