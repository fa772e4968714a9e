/**
 * What the order endpoints accept (docs/DECISIONS.md §48) and what they answer beyond the `Order` itself. Bodies are
 * strict; every stored string is bounded storable text; "exactly one of" rules are checked here so that a body that
 * breaks them is a 400 naming the field before anything is looked up.
 */
import { Schema } from "effect"
import { BoundedArray } from "../kernel/BoundedArray.ts"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { CustomerId, ProductId, ProductVariantId, SiteId } from "../kernel/Ids.ts"
import { MetadataInput } from "../kernel/Metadata.ts"
import { BoundedText, RequiredText } from "../kernel/Text.ts"
import { importTooLarge, InstantInput } from "../reviews/ReviewRequests.ts"
import { OrderStatus } from "./Order.ts"

export const MAX_ORDER_LINES = 100
export const MAX_LINE_QUANTITY = 1_000
export const MAX_ORDER_IMPORT_ROWS = 10_000

/** Statuses an order may be created with: a cancelled order is never placed (cancel it with PATCH). */
export const CreatableStatus = Schema.Literals(["open", "fulfilled", "delivered"])
export type CreatableStatus = typeof CreatableStatus.Type

const Quantity = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_LINE_QUANTITY }))

/** One line as callers send it: the product by id or by slug (exactly one). */
export const OrderLineInput = Schema.Struct({
  productId: Schema.optionalKey(ProductId),
  productSlug: Schema.optionalKey(RequiredText(255)),
  productVariantId: Schema.optionalKey(Schema.NullOr(ProductVariantId)),
  /** 1..1,000, default 1. */
  quantity: Schema.optionalKey(Quantity)
}).check(Schema.makeFilter((line) =>
  (line.productId === undefined) === (line.productSlug === undefined)
    ? { path: ["productId"], issue: "name the product with exactly one of productId and productSlug" }
    : undefined
)).annotate({ identifier: "OrderLineInput" })
export type OrderLineInput = typeof OrderLineInput.Type

const Lines = BoundedArray(OrderLineInput, MAX_ORDER_LINES).check(Schema.isMinLength(1))

export const OrderCustomerInput = Schema.Struct({
  email: EmailAddress,
  firstName: Schema.optionalKey(BoundedText(200)),
  lastName: Schema.optionalKey(BoundedText(200))
}).annotate({ identifier: "OrderCustomerInput" })

export const OrderCreate = Schema.Struct({
  externalId: Schema.optionalKey(RequiredText(255)),
  orderNumber: Schema.optionalKey(RequiredText(255)),
  siteId: Schema.optionalKey(SiteId),
  /** The customer by id, or `customer` by email (exactly one); an unknown email creates the customer. */
  customerId: Schema.optionalKey(CustomerId),
  customer: Schema.optionalKey(OrderCustomerInput),
  lines: Lines,
  status: Schema.optionalKey(CreatableStatus),
  /** Defaults to the time of the call. */
  placedAt: Schema.optionalKey(InstantInput),
  metadata: Schema.optionalKey(MetadataInput)
}).check(Schema.makeFilter((order) =>
  (order.customerId === undefined) === (order.customer === undefined)
    ? { path: ["customerId"], issue: "name the customer with exactly one of customerId and customer" }
    : undefined
)).annotate({ identifier: "OrderCreate" })
export type OrderCreate = typeof OrderCreate.Type

/** Only sent fields change; `metadata` replaces the stored metadata wholesale. */
export const OrderPatch = Schema.Struct({
  status: Schema.optionalKey(OrderStatus),
  metadata: Schema.optionalKey(MetadataInput)
}).annotate({ identifier: "OrderPatch" })
export type OrderPatch = typeof OrderPatch.Type

export const OrderBulkUpdateBody = Schema.Struct({ status: OrderStatus }).annotate({
  identifier: "OrderBulkUpdateBody"
})
export type OrderBulkUpdateBody = typeof OrderBulkUpdateBody.Type

export const OrderBulkUpdateResult = Schema.Struct({ count: Schema.Int }).annotate({
  identifier: "OrderBulkUpdateResult"
})
export type OrderBulkUpdateResult = typeof OrderBulkUpdateResult.Type

/** One row of `POST /orders/import`: history from the merchant's shop, keyed by its `externalId`. */
export const OrderImportRow = Schema.Struct({
  externalId: RequiredText(255),
  orderNumber: Schema.optionalKey(RequiredText(255)),
  /** The customer's email: matched case-insensitively; a customer is created (with the names) when none has it. */
  customer: EmailAddress,
  firstName: Schema.optionalKey(BoundedText(200)),
  lastName: Schema.optionalKey(BoundedText(200)),
  lines: Lines,
  status: Schema.optionalKey(OrderStatus),
  placedAt: Schema.optionalKey(InstantInput),
  fulfilledAt: Schema.optionalKey(InstantInput),
  deliveredAt: Schema.optionalKey(InstantInput),
  metadata: Schema.optionalKey(MetadataInput)
}).check(Schema.makeFilter((row) => {
  const issues: Array<Schema.FilterIssue> = []
  const status = row.status ?? "open"
  if (row.fulfilledAt !== undefined && (status === "open" || status === "cancelled")) {
    issues.push({ path: ["fulfilledAt"], issue: "needs status fulfilled or delivered" })
  }
  if (row.deliveredAt !== undefined && status !== "delivered") {
    issues.push({ path: ["deliveredAt"], issue: "needs status delivered" })
  }
  return issues
})).annotate({ identifier: "OrderImportRow" })
export type OrderImportRow = typeof OrderImportRow.Type

export const OrderImport = Schema.Struct({
  /** Counted before any row is decoded: a larger import is refused at once (`docs/SECURITY.md`). */
  data: BoundedArray(OrderImportRow, MAX_ORDER_IMPORT_ROWS, importTooLarge(MAX_ORDER_IMPORT_ROWS)),
  /** With `strict`, the first row that cannot be imported fails the whole import and nothing is imported. */
  strict: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "OrderImport" })
export type OrderImport = typeof OrderImport.Type
