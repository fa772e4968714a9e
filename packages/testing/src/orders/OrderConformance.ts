/**
 * Conformance of orders (docs/DECISIONS.md §48) on every store: creation with its references (customer by id or
 * email, products by id or slug), status moves and their stamps, PATCH semantics, deletion, lists (sorts, filters,
 * search, `updatedAt` for sync), imports with per-row outcomes and strict mode, bulk status moves, events recorded
 * with each change, and organization scoping. Bad input changes nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Catalog, CoreLayer, Kernel, Orders, Organizations } from "@feedback/core"
import { asDashboard, asKey } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { eventsOf } from "../TestTransactions.ts"

/** An organization with two products (`mug`, `cup`), and a dashboard caller of it. */
const shop = (name: string) =>
  Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name }))
    const as = asDashboard(org.id)
    const catalogs = yield* Catalog.Catalogs
    const mug = yield* as(catalogs.createProduct({ slug: "mug", title: "Mug" }))
    const cup = yield* as(catalogs.createProduct({ slug: "cup", title: "Cup" }))
    return { org, as, mug, cup }
  })

/** Every page of a list, following nextCursor. */
const walk = (
  list: (
    params: { limit: string; cursor?: string }
  ) => Effect.Effect<{ readonly data: ReadonlyArray<Orders.Order>; readonly nextCursor: string | null }, any, any>,
  limit: number
) =>
  Effect.gen(function*() {
    const all: Array<Orders.Order> = []
    let cursor: string | null = null
    do {
      const page: { readonly data: ReadonlyArray<Orders.Order>; readonly nextCursor: string | null } = yield* list(
        cursor === null ? { limit: String(limit) } : { limit: String(limit), cursor }
      )
      all.push(...page.data)
      cursor = page.nextCursor
    } while (cursor !== null)
    return all
  })

export const orderConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("orders", (it) => {
    it.effect("create: customer by email (created once) or id, lines by slug or id, defaults, events, 409 on externalId", () =>
      Effect.gen(function*() {
        const orders = yield* Orders.Orders
        const { org, as, mug, cup } = yield* shop("Orders")
        const first = yield* as(orders.create({
          externalId: "ord-1",
          orderNumber: "#1001",
          customer: { email: "Ada@Example.com", firstName: "Ada" },
          lines: [{ productSlug: "mug", quantity: 2 }, { productId: cup.id }]
        }))
        assert.strictEqual(first.status, "open")
        assert.strictEqual(first.placedAt, first.createdAt)
        assert.deepStrictEqual(first.lines, [
          { productId: mug.id, productVariantId: null, quantity: 2 },
          { productId: cup.id, productVariantId: null, quantity: 1 }
        ])
        assert.deepStrictEqual([first.fulfilledAt, first.deliveredAt, first.cancelledAt], [null, null, null])
        const customer = yield* as(Catalog.Catalogs.use((c) => c.getCustomer(first.customerId)))
        assert.strictEqual(customer.email, "ada@example.com")
        assert.strictEqual(customer.firstName, "Ada")
        // The same email again is the same customer, created once; by id works too.
        const second = yield* as(
          orders.create({ customer: { email: "ada@example.com" }, lines: [{ productSlug: "cup" }] })
        )
        assert.strictEqual(second.customerId, first.customerId)
        const third = yield* as(
          orders.create({
            customerId: first.customerId,
            lines: [{ productSlug: "cup" }],
            placedAt: "2026-01-02T03:04:05+01:00"
          })
        )
        assert.strictEqual(third.placedAt, "2026-01-02T02:04:05.000Z")
        assert.deepStrictEqual(yield* as(orders.get(first.id)), first)
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(
          events.filter((e) => !e.event.startsWith("product.")).map((e) => e.event),
          ["customer.updated", "order.updated", "order.updated", "order.updated"]
        )
        assert.deepStrictEqual(events.find((e) => e.event === "order.updated")?.data, first)
        const clash = yield* Effect.flip(
          as(orders.create({ externalId: "ord-1", customerId: first.customerId, lines: [{ productSlug: "mug" }] }))
        )
        assert.strictEqual(clash._tag, "Conflict")
        assert.include(clash.message, "ord-1")
        // Another organization may reuse the externalId, and cannot see this one's orders.
        const other = yield* shop("Other")
        yield* other.as(
          orders.create({
            externalId: "ord-1",
            customer: { email: "ada@example.com" },
            lines: [{ productSlug: "mug" }]
          })
        )
        assert.strictEqual((yield* Effect.flip(other.as(orders.get(first.id))))._tag, "NotFound")
        assert.strictEqual((yield* eventsOf(org.id)).length, events.length)
      }))

    it.effect("create: unknown references are one InvalidRequest naming each field, and nothing is written", () =>
      Effect.gen(function*() {
        const orders = yield* Orders.Orders
        const { org, as } = yield* shop("Bad references")
        const before = (yield* eventsOf(org.id)).length
        const error = yield* Effect.flip(as(orders.create({
          customer: { email: "new@example.com" },
          siteId: "00000000-0000-4000-8000-00000000000c" as never,
          lines: [{ productSlug: "mug" }, { productSlug: "nope" }, {
            productId: "00000000-0000-4000-8000-00000000000d" as Kernel.ProductId
          }]
        })))
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.deepStrictEqual(
          (error as { issues: ReadonlyArray<{ path: string }> }).issues.map((i) => i.path).sort(),
          ["body.lines[1].productSlug", "body.lines[2].productId", "body.siteId"]
        )
        const unknownCustomer = yield* Effect.flip(
          as(
            orders.create({
              customerId: "00000000-0000-4000-8000-00000000000e" as never,
              lines: [{ productSlug: "mug" }]
            })
          )
        )
        assert.strictEqual(unknownCustomer._tag, "InvalidRequest")
        assert.strictEqual((yield* eventsOf(org.id)).length, before)
        assert.deepStrictEqual((yield* as(Catalog.Catalogs.use((c) => c.listCustomers({})))).data, [])
        assert.deepStrictEqual((yield* as(orders.list({}))).data, [])
        const denied = yield* Effect.flip(
          asKey(org.id, ["orders:read"])(
            orders.create({ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }] })
          )
        )
        assert.strictEqual(denied._tag, "Forbidden")
        const unread = yield* Effect.flip(asKey(org.id, ["orders:write"])(orders.list({})))
        assert.strictEqual(unread._tag, "Forbidden")
      }))

    it.effect("status: moves forward or to cancelled, each stamping its time; others are 409; the same status is a no-op", () =>
      Effect.gen(function*() {
        const orders = yield* Orders.Orders
        const { org, as } = yield* shop("Moves")
        const created = yield* as(
          orders.create({ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }], status: "fulfilled" })
        )
        assert.strictEqual(created.fulfilledAt, created.createdAt)
        yield* TestClock.adjust("1 hour")
        const delivered = yield* as(orders.update(created.id, { status: "delivered" }))
        assert.strictEqual(delivered.status, "delivered")
        assert.strictEqual(delivered.fulfilledAt, created.fulfilledAt)
        assert.isTrue(delivered.deliveredAt! > created.fulfilledAt!)
        assert.strictEqual(delivered.updatedAt, delivered.deliveredAt)
        const back = yield* Effect.flip(as(orders.update(created.id, { status: "fulfilled" })))
        assert.strictEqual(back._tag, "Conflict")
        const reopened = yield* Effect.flip(as(orders.update(created.id, { status: "open" })))
        assert.strictEqual(reopened._tag, "Conflict")
        const eventsBefore = (yield* eventsOf(org.id)).length
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(yield* as(orders.update(created.id, { status: "delivered", metadata: {} })), delivered)
        assert.strictEqual((yield* eventsOf(org.id)).length, eventsBefore)
        const cancelled = yield* as(orders.update(created.id, { status: "cancelled", metadata: { reason: "lost" } }))
        assert.strictEqual(cancelled.status, "cancelled")
        assert.strictEqual(cancelled.cancelledAt, cancelled.updatedAt)
        assert.deepStrictEqual(cancelled.metadata, { reason: "lost" })
        assert.strictEqual(
          (yield* Effect.flip(as(orders.update(created.id, { status: "delivered" }))))._tag,
          "Conflict"
        )
        assert.deepStrictEqual(yield* as(orders.get(created.id)), cancelled)
        // open → delivered stamps both times at once.
        const open = yield* as(orders.create({ customer: { email: "b@example.com" }, lines: [{ productSlug: "mug" }] }))
        const straight = yield* as(orders.update(open.id, { status: "delivered" }))
        assert.strictEqual(straight.fulfilledAt, straight.deliveredAt)
        assert.isNotNull(straight.fulfilledAt)
        const events = (yield* eventsOf(org.id)).filter((e) => e.event === "order.updated").map((e) =>
          (e.data as Orders.Order).status
        )
        assert.deepStrictEqual(events, ["fulfilled", "delivered", "cancelled", "open", "delivered"])
        assert.strictEqual(
          (yield* Effect.flip(
            as(orders.update("00000000-0000-4000-8000-00000000000f" as Kernel.OrderId, { status: "delivered" }))
          ))._tag,
          "NotFound"
        )
      }))

    it.effect("delete answers the order, fires order.deleted; a product that orders name cannot be deleted", () =>
      Effect.gen(function*() {
        const orders = yield* Orders.Orders
        const { org, as, mug } = yield* shop("Delete")
        const order = yield* as(
          orders.create({ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }] })
        )
        const referenced = yield* Effect.flip(as(Catalog.Catalogs.use((c) => c.deleteProduct(mug.id))))
        assert.strictEqual(referenced._tag, "Conflict")
        const other = yield* shop("Other delete")
        assert.strictEqual((yield* Effect.flip(other.as(orders.delete(order.id))))._tag, "NotFound")
        assert.deepStrictEqual(yield* as(orders.delete(order.id)), order)
        assert.strictEqual((yield* Effect.flip(as(orders.get(order.id))))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(as(orders.delete(order.id))))._tag, "NotFound")
        const last = (yield* eventsOf(org.id)).at(-1)
        assert.strictEqual(last?.event, "order.deleted")
        assert.deepStrictEqual(last?.data, order)
        yield* as(Catalog.Catalogs.use((c) => c.deleteProduct(mug.id)))
      }))

    it.effect("list: sorts by placedAt, createdAt and updatedAt; filters and search; pages are stable", () =>
      Effect.gen(function*() {
        const orders = yield* Orders.Orders
        const { as } = yield* shop("Lists")
        const made: Array<Orders.Order> = []
        for (let i = 0; i < 5; i++) {
          made.push(
            yield* as(orders.create({
              orderNumber: `#10${i}`,
              externalId: `ext-${i}`,
              customer: { email: i % 2 === 0 ? "even@example.com" : "odd@example.com" },
              lines: [{ productSlug: "mug" }],
              placedAt: `2026-01-0${5 - i}T00:00:00Z`,
              metadata: { n: String(i) }
            }))
          )
          yield* TestClock.adjust("1 second")
        }
        const ids = (list: ReadonlyArray<Orders.Order>) => list.map((o) => o.id)
        assert.deepStrictEqual(ids(yield* walk((p) => as(orders.list(p)), 2)), ids([...made].reverse()))
        assert.deepStrictEqual(
          ids(yield* walk((p) => as(orders.list({ ...p, sort: "placedAt" })), 2)),
          ids([...made].reverse())
        )
        assert.deepStrictEqual(ids(yield* walk((p) => as(orders.list({ ...p, sort: "-placedAt" })), 3)), ids(made))
        // Sync (docs/DECISIONS.md §48): a change moves an order to the end of `updatedAt` order.
        const since = yield* Kernel.Timestamp.now
        yield* as(orders.update(made[1]!.id, { status: "fulfilled" }))
        const changed = yield* as(
          orders.list({ sort: "updatedAt", filter: JSON.stringify({ updatedAt: { $gte: since } }) })
        )
        assert.deepStrictEqual(ids(changed.data), [made[1]!.id])
        assert.strictEqual((yield* as(orders.list({ sort: "-updatedAt", limit: "1" }))).data[0]?.id, made[1]!.id)
        const byEmail = yield* as(
          orders.list({ filter: JSON.stringify({ "customer.email": "odd@example.com" }), sort: "createdAt" })
        )
        assert.deepStrictEqual(ids(byEmail.data), [made[1]!.id, made[3]!.id])
        const byCustomer = yield* as(
          orders.list({
            filter: JSON.stringify({ "customer.id": made[0]!.customerId, status: "open" }),
            sort: "createdAt"
          })
        )
        assert.deepStrictEqual(ids(byCustomer.data), [made[0]!.id, made[2]!.id, made[4]!.id])
        const byMetadata = yield* as(
          orders.list({ filter: JSON.stringify({ "metadata.n": { $in: ["3", "4"] }, externalId: { $ne: "ext-4" } }) })
        )
        assert.deepStrictEqual(ids(byMetadata.data), [made[3]!.id])
        assert.deepStrictEqual(ids((yield* as(orders.list({ search: "#103" }))).data), [made[3]!.id])
        assert.deepStrictEqual(ids((yield* as(orders.list({ search: "EXT-2" }))).data), [made[2]!.id])
        assert.strictEqual((yield* as(orders.list({ search: "ODD@" }))).data.length, 2)
        const placed = yield* as(
          orders.list({ filter: JSON.stringify({ placedAt: { $lt: "2026-01-03T00:00:00Z" } }), sort: "placedAt" })
        )
        assert.deepStrictEqual(ids(placed.data), [made[4]!.id, made[3]!.id])
        for (
          const params of [{ sort: "rating" }, { filter: "{\"total\":1}" }, { filter: "{\"status\":{\"$gt\":1}}" }, {
            limit: "0"
          }]
        ) {
          assert.strictEqual((yield* Effect.flip(as(orders.list(params))))._tag, "InvalidRequest")
        }
      }))

    it.effect("import: history by index; duplicates, taken externalIds and unknown products skipped; strict imports nothing", () =>
      Effect.gen(function*() {
        const orders = yield* Orders.Orders
        const { org, as, mug } = yield* shop("Import")
        yield* as(
          orders.create({ externalId: "taken", customer: { email: "x@example.com" }, lines: [{ productSlug: "mug" }] })
        )
        const before = (yield* eventsOf(org.id)).length
        const strict = yield* Effect.flip(as(orders.import({
          strict: true,
          data: [
            { externalId: "a", customer: "new@example.com", lines: [{ productSlug: "mug" }] },
            { externalId: "b", customer: "new@example.com", lines: [{ productSlug: "nope" }] }
          ]
        })))
        assert.strictEqual(strict._tag, "ImportFailed")
        assert.strictEqual((strict as { index: number }).index, 1)
        assert.strictEqual((yield* eventsOf(org.id)).length, before)
        assert.strictEqual((yield* as(Catalog.Catalogs.use((c) => c.listCustomers({})))).data.length, 1)
        const result = yield* as(orders.import({
          data: [
            {
              externalId: "h1",
              customer: "Grace@example.com",
              firstName: "Grace",
              lines: [{ productSlug: "mug" }],
              status: "delivered",
              placedAt: "2025-06-01T00:00:00Z",
              deliveredAt: "2025-06-05T00:00:00Z"
            },
            { externalId: "h1", customer: "grace@example.com", lines: [{ productSlug: "mug" }] },
            { externalId: "taken", customer: "grace@example.com", lines: [{ productSlug: "mug" }] },
            { externalId: "h2", customer: "linus@example.com", lines: [{ productSlug: "ghost" }] },
            {
              externalId: "h3",
              customer: "x@example.com",
              lines: [{ productId: mug.id, quantity: 3 }],
              status: "cancelled"
            }
          ]
        }))
        assert.deepStrictEqual(result.imported.map((r) => r.index), [0, 4])
        assert.deepStrictEqual(result.skipped.map((r) => r.index), [1, 2, 3])
        assert.include(result.skipped[2]!.message, "ghost")
        const h1 = yield* as(orders.get(result.imported[0]!.id as Kernel.OrderId))
        assert.deepStrictEqual(
          [h1.status, h1.placedAt, h1.fulfilledAt, h1.deliveredAt],
          ["delivered", "2025-06-01T00:00:00.000Z", "2025-06-01T00:00:00.000Z", "2025-06-05T00:00:00.000Z"]
        )
        const grace = yield* as(Catalog.Catalogs.use((c) => c.getCustomer(h1.customerId)))
        assert.deepStrictEqual([grace.email, grace.firstName], ["grace@example.com", "Grace"])
        const h3 = yield* as(orders.get(result.imported[1]!.id as Kernel.OrderId))
        assert.deepStrictEqual([h3.status, h3.cancelledAt, h3.lines[0]?.quantity], ["cancelled", h3.placedAt, 3])
        const added = (yield* eventsOf(org.id)).slice(before).map((e) => e.event)
        assert.deepStrictEqual(added, ["customer.updated", "order.updated", "order.updated"])
      }))

    it.effect("bulk update: moves matching orders that can move, each as a PATCH; counts only those", () =>
      Effect.gen(function*() {
        const orders = yield* Orders.Orders
        const { org, as } = yield* shop("Bulk")
        const open = yield* as(
          orders.create({ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }], orderNumber: "A-1" })
        )
        const fulfilled = yield* as(
          orders.create({
            customer: { email: "b@example.com" },
            lines: [{ productSlug: "mug" }],
            status: "fulfilled",
            orderNumber: "A-2"
          })
        )
        const cancelled = yield* as(
          orders.create({ customer: { email: "c@example.com" }, lines: [{ productSlug: "mug" }], orderNumber: "A-3" })
        )
        yield* as(orders.update(cancelled.id, { status: "cancelled" }))
        const elsewhere = yield* as(
          orders.create({ customer: { email: "d@example.com" }, lines: [{ productSlug: "mug" }], orderNumber: "B-1" })
        )
        const other = yield* shop("Bulk other")
        const foreign = yield* other.as(
          orders.create({ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }], orderNumber: "A-9" })
        )
        yield* TestClock.adjust("1 minute")
        const before = (yield* eventsOf(org.id)).length
        const result = yield* as(orders.bulkUpdate({ search: "A-" }, { status: "delivered" }))
        assert.deepStrictEqual(result, { count: 2 })
        const at = yield* Kernel.Timestamp.now
        const a = yield* as(orders.get(open.id))
        assert.deepStrictEqual([a.status, a.fulfilledAt, a.deliveredAt, a.updatedAt], ["delivered", at, at, at])
        const b = yield* as(orders.get(fulfilled.id))
        assert.deepStrictEqual([b.status, b.fulfilledAt, b.deliveredAt], ["delivered", fulfilled.fulfilledAt, at])
        assert.strictEqual((yield* as(orders.get(cancelled.id))).status, "cancelled")
        assert.strictEqual((yield* as(orders.get(elsewhere.id))).status, "open")
        assert.strictEqual((yield* other.as(orders.get(foreign.id))).status, "open")
        const added = (yield* eventsOf(org.id)).slice(before)
        assert.deepStrictEqual(
          added.map((e) => [e.event, (e.data as Orders.Order).id]).sort(),
          [["order.updated", open.id], ["order.updated", fulfilled.id]].sort()
        )
        // Each event carries the order as the API answers it afterwards, at the moment of the move.
        const byId = (x: { readonly id: string }, y: { readonly id: string }) => x.id < y.id ? -1 : 1
        assert.deepStrictEqual(added.map((e) => e.data as Orders.Order).sort(byId), [a, b].sort(byId))
        assert.deepStrictEqual(added.map((e) => e.occurredAt), [at, at])
        const filtered = yield* as(
          orders.bulkUpdate({ filter: JSON.stringify({ status: "open" }) }, { status: "cancelled" })
        )
        assert.deepStrictEqual(filtered, { count: 1 })
        const bad = yield* Effect.flip(
          as(orders.bulkUpdate({ filter: "{\"bogus\":1}", search: "\u0000" }, { status: "cancelled" }))
        )
        assert.strictEqual(bad._tag, "InvalidRequest")
        assert.strictEqual((bad as { issues: ReadonlyArray<unknown> }).issues.length, 2)
      }))
  })
