/** Orders in memory, over the shared `MemoryTables` (their customers and products are the catalog's rows). */
import { type Catalog, Kernel, Orders } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import { MemoryEventOutbox } from "../organizations/MemoryOrganizationStore.ts"
import { findOwned, memoryTables, ownedBy, unowned } from "../kernel/MemoryTables.ts"
import { memoryEnrolment } from "../surveys/MemorySurveyStore.ts"

/**
 * Orders; the events of a bulk move go through the memory outbox of the same database, and its enrolments are the
 * survey store's (`memoryEnrolment`), in the same transaction.
 */
export const MemoryOrderRepository = Layer.effect(
  Orders.OrderRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const outbox = yield* Kernel.EventOutbox
    const t = memoryTables(db)
    const enroll = memoryEnrolment(db)

    const ofOrganization = (organizationId: string): Array<Orders.Order> => {
      const out: Array<Orders.Order> = []
      for (const row of t.orders.values()) {
        if (row.organizationId === organizationId) out.push(unowned<Orders.Order>(row))
      }
      return out
    }

    const emailOf = (organizationId: string, customerId: string): string | null =>
      ownedBy(organizationId, t.customers.get(customerId))?.email ?? null

    /** The fields of `OrderRules.orderFilterFields`, the related customer's read from its row. */
    const access = (organizationId: string): Kernel.MemoryListAccess<Orders.Order> => ({
      get: (order, path) => Orders.orderField(order, emailOf(organizationId, order.customerId))(path),
      id: (order) => order.id,
      searchValues: (order) => Orders.orderSearchValues(order, emailOf(organizationId, order.customerId))
    })

    const matches = (organizationId: string, match: Orders.OrderMatch) => {
      const a = access(organizationId)
      return (order: Orders.Order) =>
        (match.search === undefined || Kernel.matchesSearch(match.search, a.searchValues(order))) &&
        Kernel.evaluateFilter(match.filter, (path) => a.get(order, path))
    }

    return Orders.OrderRepository.of({
      resolveReferences: (organizationId, refs) =>
        Effect.sync(() => {
          const slugs = new Set(refs.productSlugs)
          const emails = new Set(refs.customerEmails)
          const externalIds = new Set(refs.externalIds)
          const productsBySlug = new Map<string, Kernel.ProductId>()
          const productIds = new Set<string>()
          for (const p of t.products.values()) {
            if (p.organizationId !== organizationId) continue
            if (slugs.has(p.slug)) productsBySlug.set(p.slug, p.id)
            productIds.add(p.id)
          }
          const customersByEmail = new Map<string, Kernel.CustomerId>()
          const customerIds = new Set<string>()
          for (const c of t.customers.values()) {
            if (c.organizationId !== organizationId) continue
            if (emails.has(c.email)) customersByEmail.set(c.email, c.id)
            customerIds.add(c.id)
          }
          const takenExternalIds = new Set<string>()
          for (const o of t.orders.values()) {
            if (
              o.organizationId === organizationId && o.externalId !== null && externalIds.has(o.externalId)
            ) takenExternalIds.add(o.externalId)
          }
          return {
            productIds: new Set(refs.productIds.filter((id) => productIds.has(id))),
            productsBySlug,
            customerIds: new Set(refs.customerIds.filter((id) => customerIds.has(id))),
            customersByEmail,
            siteIds: new Set(refs.siteIds.filter((id) => ownedBy(organizationId, t.sites.get(id)) !== undefined)),
            takenExternalIds
          }
        }),
      insertOrders: (organizationId, orders) =>
        db.mutate((): ReadonlyArray<Catalog.InsertOutcome> => {
          const taken = new Set<string>()
          for (const o of t.orders.values()) {
            if (o.organizationId === organizationId && o.externalId !== null) taken.add(o.externalId)
          }
          return orders.map((order): Catalog.InsertOutcome => {
            if (order.externalId !== null && taken.has(order.externalId)) return { _tag: "Clash", field: "externalId" }
            if (order.externalId !== null) taken.add(order.externalId)
            t.orders.set(order.id, { ...order, organizationId })
            return { _tag: "Inserted" }
          })
        }),
      findOrder: (organizationId, id) => Effect.sync(() => findOwned<Orders.Order>(t.orders, organizationId, id)),
      findOrders: (organizationId, ids) =>
        Effect.sync(() =>
          [...new Set(ids)].flatMap((id) => Option.toArray(findOwned<Orders.Order>(t.orders, organizationId, id)))
        ),
      // A memory transaction holds the one write lock for its whole run: reading is enough.
      lockOrder: (organizationId, id) => Effect.sync(() => findOwned<Orders.Order>(t.orders, organizationId, id)),
      moveMatching: (organizationId, match, to, at, followUp) =>
        Effect.gen(function*() {
          const moved = yield* db.mutate(() => {
            const out: Array<{ readonly from: Orders.OrderStatus; readonly order: Orders.Order }> = []
            for (const order of ofOrganization(organizationId).filter(matches(organizationId, match))) {
              const move = Orders.moveStatus(order, to, at)
              if (move._tag !== "Moved") continue
              const next = { ...move.order, updatedAt: at }
              t.orders.set(order.id, { ...next, organizationId })
              out.push({ from: order.status, order: next })
            }
            for (const { from, plans } of followUp.enrol) {
              const ids = out.filter((m) => m.from === from).map((m) => m.order.id)
              if (ids.length > 0) enroll(organizationId, ids, plans, followUp.linkBase)
            }
            return out
          })
          yield* Effect.forEach(moved, ({ order }) =>
            outbox.append({
              id: Kernel.uuidV7(Date.now()) as Kernel.DomainEventId,
              organizationId,
              event: "order.updated",
              data: order,
              occurredAt: at
            }), { discard: true })
          return Orders.ORDER_STATUSES.flatMap((from) => {
            const ids = moved.filter((m) => m.from === from).map((m) => m.order.id)
            return ids.length === 0 ? [] : [{ from, count: ids.length, ids: followUp.withIds ? ids : [] }]
          })
        }),
      updateOrders: (organizationId, orders) =>
        db.mutate(() => {
          for (const order of orders) {
            const stored = ownedBy(organizationId, t.orders.get(order.id))
            if (stored === undefined) continue
            t.orders.set(order.id, {
              ...stored,
              status: order.status,
              fulfilledAt: order.fulfilledAt,
              deliveredAt: order.deliveredAt,
              cancelledAt: order.cancelledAt,
              metadata: order.metadata,
              updatedAt: order.updatedAt
            })
          }
        }),
      deleteOrder: (organizationId, id) =>
        db.mutate(() => {
          const stored = ownedBy(organizationId, t.orders.get(id))
          if (stored === undefined) return Option.none()
          t.orders.delete(id)
          return Option.some(unowned<Orders.Order>(stored))
        }),
      listOrders: (organizationId, request) =>
        Effect.sync(() => Kernel.pageInMemory(ofOrganization(organizationId), request, access(organizationId)))
    })
  })
).pipe(Layer.provide(MemoryEventOutbox))
