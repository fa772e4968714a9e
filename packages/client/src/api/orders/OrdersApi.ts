/**
 * Orders (docs/DECISIONS.md §48): what shoppers bought, the records survey flows start from (§48). Status moves only
 * forward (open → fulfilled → delivered) or to cancelled; each move stamps its time and fires `order.updated`.
 */
import { Kernel, Orders } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { filterParam, searchParam } from "../ListParams.ts"
import { recordEndpoints } from "../RecordEndpoints.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

const orders = recordEndpoints({
  path: "/orders",
  id: Kernel.OrderId,
  schema: Orders.Order,
  read: "orders:read",
  write: "orders:write"
})

export class OrdersApi extends HttpApiGroup.make("orders")
  .add(
    orders.create(
      Orders.OrderCreate,
      [ConflictResponse, InvalidRequestResponse],
      doc(
        "Create an order",
        "Records an order: the customer by `customerId` or by `customer.email` (an unknown email creates the customer), each line's product by `productId` or `productSlug`. `status` may start at `fulfilled` or `delivered` (each stamps its time). `externalId` must be unique in your organization (409 otherwise). Fires `order.updated`."
      )
    ),
    orders.list(
      Orders.orderListEndpoint,
      doc(
        "List orders",
        "Your orders, a page at a time; sort by `placedAt`, `createdAt` or `updatedAt`, `search` order numbers, external ids and customer emails, `filter` on `status`, times, `customer.id`, `customer.email` and metadata. To sync, filter `updatedAt` with `$gte` and sort by `updatedAt`."
      )
    ),
    orders.import(
      Orders.OrderImport,
      doc(
        "Import orders",
        "Imports up to 10,000 past orders in one transaction, keyed by `externalId`. Rows whose externalId exists or whose product does not are listed under `skipped`, or with `strict` the first one fails the import (422 `IMPORT_FAILED`, nothing imported). Imported orders are history: they start no survey."
      )
    ),
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
    orders.get(doc("Get an order", "One order by id with its lines.")),
    orders.update(
      Orders.OrderPatch,
      [NotFoundResponse, ConflictResponse, InvalidRequestResponse],
      doc(
        "Update an order",
        "Moves its `status` forward (open → fulfilled → delivered; open → delivered stamps both times) or to cancelled, and replaces `metadata`. Any other move is a 409; the same status changes nothing. Fires `order.updated` when it changed."
      )
    ),
    orders.delete(
      [NotFoundResponse, InvalidRequestResponse],
      doc("Delete an order", "Deletes the order and answers it as it was. Fires `order.deleted`.")
    )
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Orders",
    "What shoppers bought. `externalId` is unique per organization; survey flows enroll orders when they are created or reach `fulfilled` or `delivered`."
  ))
{}
