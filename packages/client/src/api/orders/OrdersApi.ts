/**
 * Orders (docs/DECISIONS.md §48): what shoppers bought, the records survey flows start from (§48). Status moves only
 * forward (open → fulfilled → delivered) or to cancelled; each move stamps its time and fires `order.updated`.
 */
import { Catalog, Kernel, Orders } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ConflictResponse, ImportFailedResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { filterParam, listQuery, pageOf, searchParam } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc } from "../Describe.ts"

const params = { id: Kernel.OrderId }

export class OrdersApi extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.post("create", "/orders", {
      payload: Orders.OrderCreate,
      success: Orders.Order.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Create an order",
        "Records an order: the customer by `customerId` or by `customer.email` (an unknown email creates the customer), each line's product by `productId` or `productSlug`. `status` may start at `fulfilled` or `delivered` (each stamps its time). `externalId` must be unique in your organization (409 otherwise). Fires `order.updated`."
      ))
      .pipe(requires("orders:write")),
    HttpApiEndpoint.get("list", "/orders", {
      query: listQuery(Orders.orderListEndpoint),
      success: pageOf(Orders.Order),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List orders",
        "Your orders, a page at a time; sort by `placedAt`, `createdAt` or `updatedAt`, `search` order numbers, external ids and customer emails, `filter` on `status`, times, `customer.id`, `customer.email` and metadata. To sync, filter `updatedAt` with `$gte` and sort by `updatedAt`."
      ))
      .pipe(requires("orders:read")),
    HttpApiEndpoint.post("import", "/orders/import", {
      payload: Orders.OrderImport,
      success: Catalog.ImportResult,
      error: [ImportFailedResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Import orders",
        "Imports up to 10,000 past orders in one transaction, keyed by `externalId`. Rows whose externalId exists or whose product does not are listed under `skipped`, or with `strict` the first one fails the import (422 `IMPORT_FAILED`, nothing imported). Imported orders are history: they start no survey."
      ))
      .pipe(requires("orders:write")),
    // Declared before `/orders/:id` so the literal segment is never read as an id.
    HttpApiEndpoint.patch("bulkUpdate", "/orders/bulk-update", {
      query: { filter: filterParam, search: searchParam },
      payload: Orders.OrderBulkUpdateBody,
      success: Orders.OrderBulkUpdateResult,
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Move orders' status in bulk",
        "Moves every order matching `filter` AND `search` (omitted: every order) to `status`, each as a PATCH would. Orders that cannot make the move are left as they are. Answers how many moved."
      ))
      .pipe(requires("orders:write")),
    HttpApiEndpoint.get("get", "/orders/:id", {
      params,
      success: Orders.Order,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc("Get an order", "One order by id with its lines."))
      .pipe(requires("orders:read")),
    HttpApiEndpoint.patch("update", "/orders/:id", {
      params,
      payload: Orders.OrderPatch,
      success: Orders.Order,
      error: [NotFoundResponse, ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Update an order",
        "Moves its `status` forward (open → fulfilled → delivered; open → delivered stamps both times) or to cancelled, and replaces `metadata`. Any other move is a 409; the same status changes nothing. Fires `order.updated` when it changed."
      ))
      .pipe(requires("orders:write")),
    HttpApiEndpoint.delete("delete", "/orders/:id", {
      params,
      success: Orders.Order,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc("Delete an order", "Deletes the order and answers it as it was. Fires `order.deleted`."))
      .pipe(requires("orders:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Orders",
    description:
      "What shoppers bought. `externalId` is unique per organization; survey flows enroll orders when they are created or reach `fulfilled` or `delivered`."
  }))
{}
