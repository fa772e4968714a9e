/**
 * Conformance of the catalog (docs/DECISIONS.md §9) on every store: sites, products and customers through the core's
 * use-cases — uniqueness per organization, PATCH semantics, deletion of a product with reviews, set-based imports
 * with per-row outcomes and strict mode, lists (§4), events recorded with the change, and organization scoping.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Catalog, CoreLayer, Kernel, Organizations, Questions } from "@feedback/core"
import { asDashboard, asKey } from "../CallerFixtures.ts"
import { seedReview } from "../StoreTestKit.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { eventsOf } from "../TestTransactions.ts"

/** Every page of a list, following nextCursor. */
const walk = <A>(
  list: (
    params: { limit: string; cursor?: string }
  ) => Effect.Effect<{ readonly data: ReadonlyArray<A>; readonly nextCursor: string | null }, any, any>,
  limit: number
) =>
  Effect.gen(function*() {
    const all: Array<A> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: { readonly data: ReadonlyArray<A>; readonly nextCursor: string | null } = yield* list(
        cursor === null ? { limit: String(limit) } : { limit: String(limit), cursor }
      )
      all.push(...page.data)
      cursor = page.nextCursor
      pages++
    } while (cursor !== null && pages < 1_000)
    return all
  })

const product = (slug: string, extra: Partial<Catalog.ProductCreate> = {}): Catalog.ProductCreate => ({
  slug,
  title: `Title of ${slug}`,
  ...extra
})

export const catalogConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("catalog", (it) => {
    it.effect("sites: create, get, list newest first, site.created, scoped to the organization", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Sites" }))
        const other = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other" }))
        const as = asDashboard(org.id)
        const a = yield* as(catalogs.createSite({ name: "Main shop", domain: "shop.example.com" }))
        yield* TestClock.adjust("1 second")
        const b = yield* as(catalogs.createSite({ name: "Outlet" }))
        assert.strictEqual(b.domain, null)
        assert.deepStrictEqual(yield* as(catalogs.getSite(a.id)), a)
        const listed = yield* as(catalogs.listSites({}))
        assert.deepStrictEqual(listed.data.map((s) => s.id), [b.id, a.id])
        assert.strictEqual(listed.nextCursor, null)
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events.map((e) => e.event), ["site.created", "site.created"])
        assert.deepStrictEqual(events[0]?.data, a)
        const foreign = yield* Effect.flip(asDashboard(other.id)(catalogs.getSite(a.id)))
        assert.strictEqual(foreign._tag, "NotFound")
        assert.deepStrictEqual((yield* asDashboard(other.id)(catalogs.listSites({}))).data, [])
        const denied = yield* Effect.flip(asKey(org.id, ["settings:read"])(catalogs.createSite({ name: "x" })))
        assert.strictEqual(denied._tag, "Forbidden")
      }))

    it.effect("products: create with defaults, slug and externalId unique per organization (409)", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Products" }))
        const other = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other" }))
        const as = asDashboard(org.id)
        const mug = yield* as(
          catalogs.createProduct(product("mug", { externalId: "ext-1", metadata: { color: "blue" } }))
        )
        assert.deepStrictEqual(
          { ...mug, id: undefined, createdAt: undefined, updatedAt: undefined },
          {
            id: undefined,
            slug: "mug",
            title: "Title of mug",
            description: null,
            imageUrl: null,
            url: null,
            externalId: "ext-1",
            metadata: { color: "blue" },
            notes: null,
            reviewCount: 0,
            publishedReviewCount: 0,
            averageRating: null,
            ratingHistogram: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 },
            createdAt: undefined,
            updatedAt: undefined
          }
        )
        const sameSlug = yield* Effect.flip(as(catalogs.createProduct(product("mug"))))
        assert.strictEqual(sameSlug._tag, "Conflict")
        assert.include(sameSlug.message, "slug")
        const sameExternal = yield* Effect.flip(as(catalogs.createProduct(product("cup", { externalId: "ext-1" }))))
        assert.strictEqual(sameExternal._tag, "Conflict")
        assert.include(sameExternal.message, "externalId")
        // Two products without externalId do not clash; another organization may reuse both values.
        yield* as(catalogs.createProduct(product("cup")))
        yield* as(catalogs.createProduct(product("bowl")))
        yield* asDashboard(other.id)(catalogs.createProduct(product("mug", { externalId: "ext-1" })))
        assert.deepStrictEqual(yield* as(catalogs.getProduct(mug.id)), mug)
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events.map((e) => e.event), ["product.updated", "product.updated", "product.updated"])
        assert.deepStrictEqual(events[0]?.data, mug)
      }))

    it.effect("products: PATCH changes sent fields only, replaces metadata wholesale, null clears, 409 on clash", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Patch" }))
        const as = asDashboard(org.id)
        const mug = yield* as(catalogs.createProduct(product("mug", {
          description: "A mug",
          metadata: { color: "blue", size: "L" },
          url: "https://shop.example.com/mug"
        })))
        yield* as(catalogs.createProduct(product("cup", { externalId: "cup-1" })))
        yield* TestClock.adjust("1 minute")
        const patched = yield* as(
          catalogs.updateProduct(mug.id, { title: "Big mug", description: null, metadata: { size: "XL" } })
        )
        assert.strictEqual(patched.title, "Big mug")
        assert.strictEqual(patched.description, null)
        assert.deepStrictEqual(patched.metadata, { size: "XL" })
        assert.strictEqual(patched.url, "https://shop.example.com/mug")
        assert.strictEqual(patched.slug, "mug")
        assert.strictEqual(patched.createdAt, mug.createdAt)
        assert.isTrue(patched.updatedAt > mug.updatedAt)
        assert.deepStrictEqual(yield* as(catalogs.getProduct(mug.id)), patched)
        yield* TestClock.adjust("1 minute")
        // Nothing changes: nothing is written and no event fires.
        assert.deepStrictEqual(yield* as(catalogs.updateProduct(mug.id, {})), patched)
        assert.deepStrictEqual(
          yield* as(catalogs.updateProduct(mug.id, { title: "Big mug", metadata: { size: "XL" } })),
          patched
        )
        const slugClash = yield* Effect.flip(as(catalogs.updateProduct(mug.id, { slug: "cup" })))
        assert.strictEqual(slugClash._tag, "Conflict")
        const externalClash = yield* Effect.flip(as(catalogs.updateProduct(mug.id, { externalId: "cup-1" })))
        assert.strictEqual(externalClash._tag, "Conflict")
        assert.strictEqual((yield* as(catalogs.getProduct(mug.id))).slug, "mug")
        const other = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other" }))
        const foreign = yield* Effect.flip(asDashboard(other.id)(catalogs.updateProduct(mug.id, { title: "x" })))
        assert.strictEqual(foreign._tag, "NotFound")
        const events = (yield* eventsOf(org.id)).filter((e) => (e.data as { id: string }).id === mug.id)
        assert.deepStrictEqual(events.map((e) => e.event), ["product.updated", "product.updated"])
        assert.deepStrictEqual(events[1]?.data, patched)
      }))

    it.effect("products: DELETE answers the deleted product; one with reviews is a 409 and stays", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const questions = yield* Questions.ProductQuestions
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Delete" }))
        const as = asDashboard(org.id)
        const lonely = yield* as(catalogs.createProduct(product("lonely")))
        const reviewed = yield* as(catalogs.createProduct(product("reviewed")))
        yield* seedReview(org.id, { productId: reviewed.id })
        const deleted = yield* as(catalogs.deleteProduct(lonely.id))
        assert.deepStrictEqual(deleted, lonely)
        assert.strictEqual((yield* Effect.flip(as(catalogs.getProduct(lonely.id))))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(as(catalogs.deleteProduct(lonely.id))))._tag, "NotFound")
        const refused = yield* Effect.flip(as(catalogs.deleteProduct(reviewed.id)))
        assert.strictEqual(refused._tag, "Conflict")
        const asked = yield* as(catalogs.createProduct(product("asked")))
        yield* as(questions.create({ productId: asked.id, body: "Is it dishwasher safe?" }))
        assert.strictEqual((yield* Effect.flip(as(catalogs.deleteProduct(asked.id))))._tag, "Conflict")
        assert.strictEqual((yield* as(catalogs.getProduct(asked.id))).slug, "asked")
        assert.strictEqual((yield* as(catalogs.getProduct(reviewed.id))).reviewCount, 1)
        const events = yield* eventsOf(org.id)
        const productEvents = events.filter((e) => e.event.startsWith("product."))
        assert.deepStrictEqual(productEvents.map((e) => e.event), [
          "product.updated",
          "product.updated",
          "product.deleted",
          "product.updated"
        ])
        assert.deepStrictEqual(productEvents[2]?.data, lonely)
      }))

    it.effect("products import: per-row outcomes by index, duplicates in the batch and in the store skipped", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Import" }))
        const as = asDashboard(org.id)
        yield* as(catalogs.createProduct(product("existing", { externalId: "e-0" })))
        const result = yield* as(catalogs.importProducts({
          data: [
            product("a", { externalId: "e-1" }),
            product("existing"),
            product("b", { externalId: "e-0" }),
            product("a"),
            product("c", { externalId: "e-1" }),
            product("d", { metadata: { color: "red" } })
          ]
        }))
        assert.deepStrictEqual(result.imported.map((r) => r.index), [0, 5])
        assert.deepStrictEqual(result.skipped.map((r) => r.index), [1, 2, 3, 4])
        assert.include(result.skipped[0]!.message, "\"existing\" already exists")
        assert.include(result.skipped[1]!.message, "externalId \"e-0\"")
        assert.include(result.skipped[2]!.message, "repeats row 0")
        assert.include(result.skipped[3]!.message, "repeats row 0")
        const d = yield* as(catalogs.getProduct(result.imported[1]!.id as Kernel.ProductId))
        assert.strictEqual(d.slug, "d")
        assert.deepStrictEqual(d.metadata, { color: "red" })
        const listed = yield* walk((p) => as(catalogs.listProducts(p)), 2)
        assert.sameMembers(listed.map((p) => p.slug), ["existing", "a", "d"])
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events.map((e) => e.event), ["product.updated", "product.updated", "product.updated"])
        assert.sameMembers(events.slice(1).map((e) => (e.data as { slug: string }).slug), ["a", "d"])
      }))

    it.effect("strict import: the first bad row fails the whole import with its index; nothing is imported", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Strict" }))
        const as = asDashboard(org.id)
        yield* as(catalogs.createProduct(product("existing")))
        const inStore = yield* Effect.flip(as(catalogs.importProducts({
          data: [product("a"), product("b"), product("existing")],
          strict: true
        })))
        assert.strictEqual(inStore._tag, "ImportFailed")
        if (inStore._tag === "ImportFailed") assert.strictEqual(inStore.index, 2)
        const inBatch = yield* Effect.flip(
          as(catalogs.importProducts({ data: [product("x"), product("x")], strict: true }))
        )
        assert.strictEqual(inBatch._tag, "ImportFailed")
        if (inBatch._tag === "ImportFailed") assert.strictEqual(inBatch.index, 1)
        assert.deepStrictEqual((yield* as(catalogs.listProducts({}))).data.map((p) => p.slug), ["existing"])
        assert.strictEqual((yield* eventsOf(org.id)).length, 1)
        const ok = yield* as(catalogs.importProducts({ data: [product("y"), product("z")], strict: true }))
        assert.deepStrictEqual(ok.skipped, [])
        assert.strictEqual(ok.imported.length, 2)
      }))

    it.effect("a large import is one set-based write: 2,000 products and their events", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Bulk" }))
        const as = asDashboard(org.id)
        const rows = Array.from({ length: 2_000 }, (_, i) =>
          product(`bulk-${i}`, { externalId: `x-${i}`, metadata: { n: String(i) } }))
        const result = yield* as(catalogs.importProducts({ data: rows }))
        assert.strictEqual(result.imported.length, 2_000)
        assert.deepStrictEqual(
          result.imported.slice(0, 3).map((r) =>
            r.index
          ),
          [0, 1, 2]
        )
        const again = yield* as(catalogs.importProducts({ data: rows.slice(0, 10) }))
        assert.strictEqual(again.skipped.length, 10)
        assert.strictEqual((yield* eventsOf(org.id)).length, 2_000)
        const page = yield* as(
          catalogs.listProducts({ limit: "250", filter: JSON.stringify({ "metadata.n": "1999" }) })
        )
        assert.deepStrictEqual(page.data.map((p) => p.slug), ["bulk-1999"])
      }))

    it.effect("products list: pages, search over title and slug, filters, bad parameters are InvalidRequest", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "List" }))
        const as = asDashboard(org.id)
        const made = []
        for (
          const [slug, title, color] of [
            ["mug", "Blue Mug", "blue"],
            ["kettle", "Red kettle", "red"],
            ["teapot", "Green teapot", "green"],
            ["cup", "Blue cup", "blue"],
            ["plate", "Plate", "white"]
          ] as const
        ) {
          yield* TestClock.adjust("1 second")
          made.push(yield* as(catalogs.createProduct(product(slug, { title, metadata: { color } }))))
        }
        const all = yield* walk((p) => as(catalogs.listProducts(p)), 2)
        assert.deepStrictEqual(all.map((p) => p.slug), ["plate", "cup", "teapot", "kettle", "mug"])
        const oldest = yield* walk((p) => as(catalogs.listProducts({ ...p, sort: "createdAt" })), 3)
        assert.deepStrictEqual(oldest.map((p) => p.slug), ["mug", "kettle", "teapot", "cup", "plate"])
        const blue = yield* as(catalogs.listProducts({ search: "BLUE" }))
        assert.deepStrictEqual(blue.data.map((p) => p.slug), ["cup", "mug"])
        const bySlug = yield* as(catalogs.listProducts({ search: "ettl" }))
        assert.deepStrictEqual(bySlug.data.map((p) => p.slug), ["kettle"])
        const filtered = yield* as(catalogs.listProducts({
          filter: JSON.stringify({
            "metadata.color": { $in: ["blue", "green"] },
            createdAt: { $gte: made[1]!.createdAt }
          })
        }))
        assert.deepStrictEqual(filtered.data.map((p) => p.slug), ["cup", "teapot"])
        for (
          const [params, path] of [
            [{ limit: "0" }, "limit"],
            [{ sort: "title" }, "sort"],
            [{ filter: "{\"rating\":1}" }, "filter.rating"],
            [{ cursor: "nope" }, "cursor"]
          ] as const
        ) {
          const error = yield* Effect.flip(as(catalogs.listProducts(params)))
          assert.strictEqual(error._tag, "InvalidRequest")
          if (error._tag === "InvalidRequest") assert.strictEqual(error.issues[0]?.path, path)
        }
        const denied = yield* Effect.flip(asKey(org.id, ["reviews:read"])(catalogs.listProducts({})))
        assert.strictEqual(denied._tag, "Forbidden")
      }))

    it.effect("customers: email stored lower-cased and unique per organization; import; list and search", () =>
      Effect.gen(function*() {
        const catalogs = yield* Catalog.Catalogs
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Customers" }))
        const other = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other" }))
        const as = asDashboard(org.id)
        const ada = yield* as(
          catalogs.createCustomer({ email: "Ada@Example.COM", firstName: "Ada", metadata: { tier: "gold" } })
        )
        assert.strictEqual(ada.email, "ada@example.com")
        assert.strictEqual(ada.emailOptOut, false)
        assert.strictEqual(ada.emailOptOutAt, null)
        const clash = yield* Effect.flip(as(catalogs.createCustomer({ email: "ADA@example.com" })))
        assert.strictEqual(clash._tag, "Conflict")
        yield* asDashboard(other.id)(catalogs.createCustomer({ email: "ada@example.com" }))
        yield* TestClock.adjust("1 second")
        const optedOut = yield* as(
          catalogs.createCustomer({ email: "out@example.com", emailOptOut: true, emailOptOutSource: "unsubscribe" })
        )
        assert.strictEqual(optedOut.emailOptOutAt, optedOut.createdAt)
        const badOptOut = yield* Effect.flip(
          as(catalogs.createCustomer({ email: "x@example.com", emailOptOutAt: "2026-01-01T00:00:00Z" }))
        )
        assert.strictEqual(badOptOut._tag, "InvalidRequest")
        yield* TestClock.adjust("1 second")
        const imported = yield* as(catalogs.importCustomers({
          data: [
            { email: "grace@example.com", firstName: "Grace", lastName: "Hopper" },
            { email: "ADA@example.com" },
            { email: "Grace@Example.com" },
            { email: "alan@example.com", emailOptOut: true, emailOptOutAt: "2026-01-01T10:00:00+02:00" }
          ]
        }))
        assert.deepStrictEqual(imported.imported.map((r) => r.index), [0, 3])
        assert.deepStrictEqual(imported.skipped.map((r) => r.index), [1, 2])
        const alan = yield* as(catalogs.getCustomer(imported.imported[1]!.id as never))
        assert.strictEqual(alan.emailOptOutAt, "2026-01-01T08:00:00.000Z")
        const list = yield* walk((p) => as(catalogs.listCustomers(p)), 2)
        assert.deepStrictEqual(list.map((c) => c.email).slice(-2), ["out@example.com", "ada@example.com"])
        assert.strictEqual(list.length, 4)
        const hopper = yield* as(catalogs.listCustomers({ search: "hopp" }))
        assert.deepStrictEqual(hopper.data.map((c) => c.email), ["grace@example.com"])
        const gold = yield* as(catalogs.listCustomers({ filter: JSON.stringify({ "metadata.tier": "gold" }) }))
        assert.deepStrictEqual(gold.data.map((c) => c.id), [ada.id])
        const opted = yield* as(
          catalogs.listCustomers({ filter: JSON.stringify({ emailOptOut: true }), sort: "createdAt" })
        )
        assert.deepStrictEqual(opted.data.map((c) => c.email), ["out@example.com", "alan@example.com"])
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events.map((e) => e.event), Array(4).fill("customer.updated"))
        assert.strictEqual((yield* Effect.flip(asDashboard(other.id)(catalogs.getCustomer(ada.id))))._tag, "NotFound")
        const strict = yield* Effect.exit(
          as(
            catalogs.importCustomers({
              data: [{ email: "new@example.com" }, { email: "ada@example.com" }],
              strict: true
            })
          )
        )
        assert.isTrue(Exit.isFailure(strict))
        assert.strictEqual((yield* as(catalogs.listCustomers({ search: "new@" }))).data.length, 0)
      }))
  })
