/**
 * Use-cases of orders (docs/DECISIONS.md §48) as the `Orders` service: create, read, list, change the status or
 * metadata, delete, import history and move many orders' status at once.
 *
 * Events: `order.updated` when an order is created, imported or changed (the catalog has no `order.created`, as for
 * products), `order.deleted` when it is deleted, and `customer.updated` for each customer an order creates; each in
 * the unit of work of the change, with the record as the API returns it.
 *
 * Survey flows (docs/DECISIONS.md §48) start in the same unit of work: an order created by `POST /orders` or moved to
 * `fulfilled` / `delivered` (PATCH, bulk-update) is enrolled in the active flows its trigger starts; an order
 * cancelled or deleted has what is still to be sent cancelled. Imported orders are history and start nothing.
 *
 * References (products by id or slug, the customer by id, the site) must exist in the caller's organization: a body
 * naming one that does not is a 400 naming the field; an import skips such a row (a 422 with `strict`).
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { newCustomer } from "../catalog/Catalog.ts"
import {
  batchDuplicates,
  clashMessage,
  duplicateMessage,
  type ImportRow,
  importResult
} from "../catalog/CatalogImport.ts"
import type { ImportResult } from "../catalog/CatalogRequests.ts"
import { type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import {
  Conflict,
  type Forbidden,
  ImportFailed,
  InvalidRequest,
  NotFound,
  type RequestIssue
} from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import { parseFilter, parseTimestampValue } from "../kernel/Filter.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { CustomerId, OrderId, OrganizationId, SiteId } from "../kernel/Ids.ts"
import { listRequestWith, type ListParams, type Page, parseSearch } from "../kernel/ListQuery.ts"
import { now, type Timestamp } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import { ReviewWriteRepository } from "../reviews/ReviewWriteRepository.ts"
import { makeSurveyEnrolment } from "../surveys/SurveyEnrolment.ts"
import { surveyReasons, triggersOfCreation, triggersOfMove } from "../surveys/SurveyRules.ts"
import { newOrder, type Order, type OrderStatus } from "./Order.ts"
import { OrderRepository } from "./OrderRepository.ts"
import type {
  OrderBulkUpdateBody,
  OrderBulkUpdateResult,
  OrderCreate,
  OrderImport,
  OrderImportRow,
  OrderPatch
} from "./OrderRequests.ts"
import {
  moveStatus,
  orderFilterCatalog,
  type OrderStamp,
  orderListEndpoint,
  orderReferencesOf,
  planOrderPatch,
  refusedMoveMessage,
  resolveLines
} from "./OrderRules.ts"

export class Orders extends Context.Service<Orders, {
  /** `POST /orders`: 201 with the order; a taken `externalId` is a Conflict. */
  readonly create: (input: OrderCreate) => Effect.Effect<Order, Forbidden | InvalidRequest | Conflict, CurrentCaller>
  readonly get: (id: OrderId) => Effect.Effect<Order, Forbidden | NotFound, CurrentCaller>
  readonly list: (params: ListParams) => Effect.Effect<Page<Order>, Forbidden | InvalidRequest, CurrentCaller>
  /** `PATCH /orders/{id}`: a status move the rules refuse is a Conflict; a PATCH that changes nothing writes nothing. */
  readonly update: (
    id: OrderId,
    patch: OrderPatch
  ) => Effect.Effect<Order, Forbidden | NotFound | Conflict, CurrentCaller>
  /** `DELETE /orders/{id}`: answers the deleted order. */
  readonly delete: (id: OrderId) => Effect.Effect<Order, Forbidden | NotFound, CurrentCaller>
  /** `POST /orders/import`: history; rows answer by index like the other imports (docs/DECISIONS.md §5, §9). */
  readonly import: (body: OrderImport) => Effect.Effect<ImportResult, Forbidden | ImportFailed, CurrentCaller>
  /**
   * `PATCH /orders/bulk-update`: moves every order matching `filter` AND `search` to `status`, each as a PATCH would;
   * orders that cannot make the move are left as they are. Answers how many moved.
   */
  readonly bulkUpdate: (
    query: { readonly filter?: string | undefined; readonly search?: string | undefined },
    body: OrderBulkUpdateBody
  ) => Effect.Effect<OrderBulkUpdateResult, Forbidden | InvalidRequest, CurrentCaller>
}>()("feedback/Orders") {
  static readonly layer = Layer.effect(
    Orders,
    Effect.gen(function*() {
      const repo = yield* OrderRepository
      const customers = yield* ReviewWriteRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const cursorKey = yield* CursorKey
      const events = makeEventRecorder(yield* EventOutbox, ids)
      const surveys = yield* makeSurveyEnrolment

      const lockedOrder = (organizationId: OrganizationId, id: OrderId) =>
        repo.lockOrder(organizationId, id).pipe(Effect.flatMap(Option.match({
          onNone: () => Effect.fail(NotFound.of("order", id)),
          onSome: Effect.succeed
        })))

      /**
       * The customers of these emails: the existing ones, and new ones (with the names given) for unseen emails, each
       * announced with `customer.updated` (docs/DECISIONS.md §13) in this unit of work.
       */
      const ensureCustomers = (
        organizationId: OrganizationId,
        wanted: ReadonlyArray<
          { readonly email: string; readonly firstName?: string | undefined; readonly lastName?: string | undefined }
        >,
        existing: ReadonlyMap<string, CustomerId>,
        at: Timestamp
      ) =>
        Effect.gen(function*() {
          const found = new Map(existing)
          const fresh = new Map<string, ReturnType<typeof newCustomer>>()
          for (const w of wanted) {
            const email = w.email.toLowerCase()
            if (found.has(email) || fresh.has(email)) continue
            fresh.set(
              email,
              newCustomer(yield* nextIdFrom<CustomerId>(ids), at, {
                email,
                firstName: w.firstName ?? null,
                lastName: w.lastName ?? null
              })
            )
          }
          if (fresh.size === 0) return found
          const created = yield* customers.ensureCustomers(organizationId, [...fresh.values()])
          for (const [email, id] of created) found.set(email, id)
          yield* events.recordAll(
            organizationId,
            [...fresh.values()].filter((c) => created.get(c.email) === c.id).map((c) => ({
              event: "customer.updated",
              data: c
            }))
          )
          return found
        })

      /** What status moves start or stop: enrolment in the flows they trigger, cancellation of cancelled orders' surveys. */
      const afterMoves = (
        organizationId: OrganizationId,
        moves: ReadonlyArray<
          { readonly id: OrderId; readonly to: OrderStatus; readonly stamped: ReadonlyArray<OrderStamp> }
        >,
        at: Timestamp
      ) =>
        Effect.gen(function*() {
          yield* surveys.enroll(
            organizationId,
            moves.map((m) => ({ orderId: m.id, triggers: triggersOfMove(m.stamped) })),
            at
          )
          const cancelled = moves.filter((m) => m.to === "cancelled").map((m) => m.id)
          yield* surveys.cancelForOrders(organizationId, cancelled, surveyReasons.orderCancelled, at)
        })

      const create = Effect.fn("Orders.create")(function*(input: OrderCreate) {
        const { organizationId } = yield* requirePermission("orders:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const at = yield* now
          const refs = yield* repo.resolveReferences(
            organizationId,
            orderReferencesOf([{
              lines: input.lines,
              customerId: input.customerId,
              customerEmail: input.customer?.email,
              siteId: input.siteId,
              externalId: input.externalId
            }])
          )
          const issues: Array<RequestIssue> = []
          const lines = resolveLines(input.lines, refs, "body.lines")
          if (Result.isFailure(lines)) issues.push(...lines.failure)
          if (input.customerId !== undefined && !refs.customerIds.has(input.customerId)) {
            issues.push({
              path: "body.customerId",
              message: `no customer with id ${input.customerId} exists in this organization`
            })
          }
          if (input.siteId !== undefined && !refs.siteIds.has(input.siteId)) {
            issues.push({ path: "body.siteId", message: `no site with id ${input.siteId} exists in this organization` })
          }
          if (issues.length > 0 || Result.isFailure(lines)) return yield* InvalidRequest.of(issues)
          if (input.externalId !== undefined && refs.takenExternalIds.has(input.externalId)) {
            return yield* externalIdConflict(input.externalId)
          }
          const customerId = input.customerId ??
            (yield* ensureCustomers(organizationId, [input.customer!], refs.customersByEmail, at)).get(
              input.customer!.email.toLowerCase()
            )!
          const placed = newOrder(yield* nextIdFrom<OrderId>(ids), at, {
            externalId: input.externalId ?? null,
            orderNumber: input.orderNumber ?? null,
            siteId: (input.siteId ?? null) as SiteId | null,
            customerId,
            lines: lines.success,
            placedAt: instantOr(input.placedAt, at),
            metadata: { ...input.metadata }
          })
          const move = moveStatus(placed, input.status ?? "open", at)
          const order = move._tag === "Moved" ? move.order : placed
          const [outcome] = yield* repo.insertOrders(organizationId, [order])
          if (outcome?._tag === "Clash") return yield* externalIdConflict(input.externalId ?? "")
          yield* events.record(organizationId, "order.updated", order)
          yield* surveys.enroll(organizationId, [{
            orderId: order.id,
            triggers: triggersOfCreation(move._tag === "Moved" ? move.stamped : [])
          }], at)
          return order
        }))
      })

      const get = Effect.fn("Orders.get")(function*(id: OrderId) {
        const { organizationId } = yield* requirePermission("orders:read")
        return yield* repo.findOrder(organizationId, id).pipe(Effect.flatMap(Option.match({
          onNone: () => Effect.fail(NotFound.of("order", id)),
          onSome: Effect.succeed
        })))
      })

      const list = Effect.fn("Orders.list")(function*(params: ListParams) {
        const { organizationId } = yield* requirePermission("orders:read")
        const request = yield* listRequestWith(cursorKey, params, orderListEndpoint, organizationId)
        return yield* repo.listOrders(organizationId, request)
      })

      const update = Effect.fn("Orders.update")(function*(id: OrderId, patch: OrderPatch) {
        const { organizationId } = yield* requirePermission("orders:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* lockedOrder(organizationId, id)
          const at = yield* now
          const plan = planOrderPatch(current, patch, at)
          switch (plan._tag) {
            case "Unchanged":
              return current
            case "Refused":
              return yield* new Conflict({ message: refusedMoveMessage(plan.from, plan.to) })
            case "Changed":
              yield* repo.updateOrders(organizationId, [plan.order])
              yield* events.record(organizationId, "order.updated", plan.order)
              yield* afterMoves(organizationId, [{ id, to: plan.order.status, stamped: plan.stamped }], at)
              return plan.order
          }
        }))
      })

      const deleteOrder = Effect.fn("Orders.delete")(function*(id: OrderId) {
        const { organizationId } = yield* requirePermission("orders:write")
        return yield* uow.transaction(Effect.gen(function*() {
          yield* lockedOrder(organizationId, id)
          const deleted = yield* repo.deleteOrder(organizationId, id)
          if (Option.isNone(deleted)) return yield* NotFound.of("order", id)
          yield* events.record(organizationId, "order.deleted", deleted.value)
          yield* surveys.cancelForOrders(organizationId, [id], surveyReasons.orderDeleted, yield* now)
          return deleted.value
        }))
      })

      const importOrders = Effect.fn("Orders.import")(function*(body: OrderImport) {
        const { organizationId } = yield* requirePermission("orders:write")
        const strict = body.strict ?? false
        return yield* uow.transaction(Effect.gen(function*() {
          const at = yield* now
          const refs = yield* repo.resolveReferences(
            organizationId,
            orderReferencesOf(body.data.map((row) => ({
              lines: row.lines,
              customerEmail: row.customer,
              externalId: row.externalId
            })))
          )
          const early: Array<{ index: number; message: string }> = []
          const accepted: Array<{ index: number; row: OrderImportRow; lines: Order["lines"] }> = []
          const verdicts = batchDuplicates(body.data, (row) => [["externalId", row.externalId]])
          body.data.forEach((row, index) => {
            const verdict = verdicts[index]!
            if (verdict._tag === "Duplicate") {
              early.push({ index, message: duplicateMessage(verdict.field, verdict.value, verdict.firstIndex) })
              return
            }
            if (refs.takenExternalIds.has(row.externalId)) {
              early.push({ index, message: clashMessage("order", "externalId", row.externalId) })
              return
            }
            const lines = resolveLines(row.lines, refs, "lines")
            if (Result.isFailure(lines)) {
              early.push({ index, message: lines.failure.map((i) => `${i.path}: ${i.message}`).join("; ") })
              return
            }
            accepted.push({ index, row, lines: lines.success })
          })
          early.sort((a, b) => a.index - b.index)
          if (strict) yield* failStrict(early)
          const customerIds = yield* ensureCustomers(
            organizationId,
            accepted.map(({ row }) => ({ email: row.customer, firstName: row.firstName, lastName: row.lastName })),
            refs.customersByEmail,
            at
          )
          const attempted: Array<ImportRow<Order>> = []
          for (const { index, row, lines } of accepted) {
            attempted.push({
              index,
              record: importedOrder(yield* nextIdFrom<OrderId>(ids), row, lines, customerIds, at)
            })
          }
          const outcomes = yield* repo.insertOrders(organizationId, attempted.map((a) => a.record))
          const result = importResult(
            attempted,
            outcomes,
            early,
            (order) => clashMessage("order", "externalId", order.externalId ?? "")
          )
          if (strict) yield* failStrict(result.skipped)
          const importedIds = new Set(result.imported.map((r) => r.id))
          // History: nothing but the event; an imported order starts no survey (docs/DECISIONS.md §48).
          yield* events.recordAll(
            organizationId,
            attempted.filter((a) => importedIds.has(a.record.id)).map((a) => ({
              event: "order.updated",
              data: a.record
            }))
          )
          return result
        }))
      })

      const bulkUpdate = Effect.fn("Orders.bulkUpdate")(function*(
        query: { readonly filter?: string | undefined; readonly search?: string | undefined },
        body: OrderBulkUpdateBody
      ) {
        const { organizationId } = yield* requirePermission("orders:write")
        const filter = parseFilter(query.filter, orderFilterCatalog)
        const search = parseSearch(query.search)
        if (Result.isFailure(filter) || Result.isFailure(search)) {
          return yield* InvalidRequest.of([
            ...(Result.isFailure(filter) ? filter.failure.issues : []),
            ...(Result.isFailure(search) ? search.failure.issues : [])
          ])
        }
        return yield* uow.transaction(Effect.gen(function*() {
          const at = yield* now
          // The move enrolls the orders itself (docs/DECISIONS.md §75); a cancellation's surveys are cancelled here.
          const followUp = yield* surveys.followUpOfMove(organizationId, body.status, at)
          const moved = yield* repo.moveMatching(
            organizationId,
            { filter: filter.success, search: search.success },
            body.status,
            at,
            followUp
          )
          if (followUp.withIds) {
            yield* surveys.cancelForOrders(
              organizationId,
              moved.flatMap((m) => m.ids),
              surveyReasons.orderCancelled,
              at
            )
          }
          return { count: moved.reduce((n, m) => n + m.count, 0) }
        }))
      })

      return Orders.of({ create, get, list, update, delete: deleteOrder, import: importOrders, bulkUpdate })
    })
  )
}

const externalIdConflict = (externalId: string) =>
  new Conflict({
    message: `An order with externalId ${
      JSON.stringify(externalId)
    } already exists in this organization; fetch that order instead.`
  })

const failStrict = (skipped: ReadonlyArray<{ readonly index: number; readonly message: string }>) => {
  const first = skipped[0]
  return first === undefined ? Effect.void : Effect.fail(
    new ImportFailed({
      index: first.index,
      message: `Row ${first.index} cannot be imported: ${first.message}; nothing was imported.`
    })
  )
}

const instantOr = (input: string | undefined, fallback: Timestamp): Timestamp =>
  input === undefined ? fallback : parseTimestampValue(input) ?? fallback

/** A new order at its creation status: each move from `open` to it stamps its time at `at` (`OrderRules.ts`). */
const withStatus = (placed: Order, status: OrderStatus, at: Timestamp): Order => {
  const move = moveStatus(placed, status, at)
  return move._tag === "Moved" ? move.order : placed
}

/** An imported order: its times as the shop recorded them, a reached status's missing time being `placedAt`. */
const importedOrder = (
  id: OrderId,
  row: OrderImportRow,
  lines: Order["lines"],
  customerIds: ReadonlyMap<string, CustomerId>,
  at: Timestamp
): Order => {
  const placedAt = instantOr(row.placedAt, at)
  const placed = newOrder(id, at, {
    externalId: row.externalId,
    orderNumber: row.orderNumber ?? null,
    customerId: customerIds.get(row.customer.toLowerCase())!,
    lines,
    placedAt,
    metadata: { ...row.metadata }
  })
  const order = withStatus(placed, row.status ?? "open", placedAt)
  return {
    ...order,
    fulfilledAt: row.fulfilledAt === undefined ? order.fulfilledAt : instantOr(row.fulfilledAt, placedAt),
    deliveredAt: row.deliveredAt === undefined ? order.deliveredAt : instantOr(row.deliveredAt, placedAt)
  }
}
