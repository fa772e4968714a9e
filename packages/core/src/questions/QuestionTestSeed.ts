/**
 * TEST SUPPORT ONLY — never part of a production layer.
 *
 * What the conformance suites need from a store beyond the core's services: writing catalog rows that other
 * capabilities own (sites, products, customers — their endpoints are built elsewhere, so suites seed them
 * directly: memory writes `MemoryTables` rows, PostgreSQL INSERTs), and inspecting every stored row, so a suite can
 * prove that some text (an asker's email address) is gone from the whole store, whatever table it might hide in.
 */
import { Context, Effect } from "effect"
import { type Customer, newCustomer, newProduct, type Product, type Site } from "../catalog/Catalog.ts"
import type { CustomerId, OrganizationId, ProductId, SiteId } from "../kernel/Ids.ts"
import { type IdGenerator, nextId } from "../kernel/IdGenerator.ts"
import { now } from "../kernel/Timestamp.ts"

type Owned<A> = A & { readonly organizationId: OrganizationId }

export class QuestionTestSeed extends Context.Service<QuestionTestSeed, {
  readonly insertSite: (site: Owned<Site>) => Effect.Effect<void>
  readonly insertProduct: (product: Owned<Product>) => Effect.Effect<void>
  readonly insertCustomer: (customer: Owned<Customer>) => Effect.Effect<void>
  /** The names of the tables holding at least one row whose stored form contains `needle` anywhere. */
  readonly tablesContaining: (needle: string) => Effect.Effect<ReadonlyArray<string>>
}>()("feedback/testing/QuestionTestSeed") {}

export const seedSiteRow = (
  organizationId: OrganizationId,
  fields: Partial<Site> = {}
): Effect.Effect<Site, never, QuestionTestSeed | IdGenerator> =>
  Effect.gen(function*() {
    const at = yield* now
    const site: Site = { id: yield* nextId<SiteId>(), name: "Storefront", domain: null, createdAt: at, updatedAt: at, ...fields }
    yield* QuestionTestSeed.use((s) => s.insertSite({ ...site, organizationId }))
    return site
  })

export const seedProductRow = (
  organizationId: OrganizationId,
  fields: Partial<Product> = {}
): Effect.Effect<Product, never, QuestionTestSeed | IdGenerator> =>
  Effect.gen(function*() {
    const at = yield* now
    const id = yield* nextId<ProductId>()
    const product = newProduct(id, at, { slug: `product-${id}`, title: "Ceramic mug", ...fields })
    yield* QuestionTestSeed.use((s) => s.insertProduct({ ...product, organizationId }))
    return product
  })

export const seedCustomerRow = (
  organizationId: OrganizationId,
  fields: Partial<Customer> = {}
): Effect.Effect<Customer, never, QuestionTestSeed | IdGenerator> =>
  Effect.gen(function*() {
    const at = yield* now
    const id = yield* nextId<CustomerId>()
    const customer = newCustomer(id, at, { email: `customer-${id}@example.com`, ...fields })
    yield* QuestionTestSeed.use((s) => s.insertCustomer({ ...customer, organizationId }))
    return customer
  })
