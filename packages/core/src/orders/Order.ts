/**
 * Orders (docs/DECISIONS.md §48): what a shopper bought, as the API returns it. An order's status only moves forward
 * (`OrderRules.ts`), each move stamping its time; the survey flows start from those moves.
 */
import { Schema } from "effect"
import { CustomerId, OrderId, ProductId, ProductVariantId, SiteId } from "../kernel/Ids.ts"
import { Metadata } from "../kernel/Metadata.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const ORDER_STATUSES = ["open", "fulfilled", "delivered", "cancelled"] as const
export const OrderStatus = Schema.Literals(ORDER_STATUSES).annotate({ identifier: "OrderStatus" })
export type OrderStatus = typeof OrderStatus.Type

export const OrderLine = Schema.Struct({
  productId: ProductId,
  productVariantId: Schema.NullOr(ProductVariantId),
  quantity: Schema.Int
}).annotate({ identifier: "OrderLine" })
export type OrderLine = typeof OrderLine.Type

export const Order = Schema.Struct({
  id: OrderId,
  /** The order's id in the merchant's shop; unique per organization when set. */
  externalId: Schema.NullOr(Schema.String),
  orderNumber: Schema.NullOr(Schema.String),
  siteId: Schema.NullOr(SiteId),
  customerId: CustomerId,
  status: OrderStatus,
  lines: Schema.Array(OrderLine),
  placedAt: Timestamp,
  fulfilledAt: Schema.NullOr(Timestamp),
  deliveredAt: Schema.NullOr(Timestamp),
  cancelledAt: Schema.NullOr(Timestamp),
  metadata: Metadata,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Order" })
export type Order = typeof Order.Type

/** A new open order placed at `at`: what the caller gives over blank optional fields. */
export const newOrder = (
  id: OrderId,
  at: Timestamp,
  fields: Pick<Order, "customerId" | "lines"> & Partial<Order>
): Order => ({
  id,
  externalId: null,
  orderNumber: null,
  siteId: null,
  status: "open",
  placedAt: at,
  fulfilledAt: null,
  deliveredAt: null,
  cancelledAt: null,
  metadata: {},
  createdAt: at,
  updatedAt: at,
  ...fields
})
