/**
 * TEST SUPPORT ONLY — not a store service, never provided by a production layer.
 *
 * The setup signals read sites, products and reviews, whose write side belongs to other capabilities. Until those
 * land, the conformance suites seed such rows through this service, which every store implements over its own
 * tables (memory: `sites`, `products`, `reviews` keyed by id, rows are the core records with `organizationId`;
 * PostgreSQL: the tables of migration 0003). Once sites, products and reviews have repositories, the suites should
 * seed through those and this service can go.
 */
import { Context, Effect } from "effect"
import { newProduct, type Product, type Site } from "../catalog/Catalog.ts"
import type { OrganizationId, ProductId, ReviewId, SiteId } from "../kernel/Ids.ts"
import { type IdGenerator, nextId } from "../kernel/IdGenerator.ts"
import { newReview, type ReviewRecord } from "../reviews/Review.ts"
import type { Owned } from "../organizations/StorefrontRecords.ts"
import { now } from "../kernel/Timestamp.ts"

export class SetupTestSeed extends Context.Service<SetupTestSeed, {
  readonly insertSite: (site: Owned<Site>) => Effect.Effect<void>
  readonly deleteSite: (organizationId: OrganizationId, id: SiteId) => Effect.Effect<boolean>
  readonly insertProduct: (product: Owned<Product>) => Effect.Effect<void>
  /** The product must have no reviews left (PostgreSQL enforces it with a foreign key). */
  readonly deleteProduct: (organizationId: OrganizationId, id: ProductId) => Effect.Effect<boolean>
  /** The review's product (and site, when set) must exist in the same organization. */
  readonly insertReview: (review: Owned<ReviewRecord>) => Effect.Effect<void>
  readonly deleteReview: (organizationId: OrganizationId, id: ReviewId) => Effect.Effect<boolean>
}>()("feedback/testing/SetupTestSeed") {}

/** Seeds a site and answers it. */
export const seedSite = (organizationId: OrganizationId): Effect.Effect<Owned<Site>, never, SetupTestSeed | IdGenerator> =>
  Effect.gen(function*() {
    const at = yield* now
    const id = yield* nextId<SiteId>()
    const site: Owned<Site> = { id, organizationId, name: "Storefront", domain: "shop.example.test", createdAt: at, updatedAt: at }
    yield* SetupTestSeed.use((s) => s.insertSite(site))
    return site
  })

/** Seeds a product (slug unique per organization: derived from its id) and answers it. */
export const seedProduct = (
  organizationId: OrganizationId
): Effect.Effect<Owned<Product>, never, SetupTestSeed | IdGenerator> =>
  Effect.gen(function*() {
    const at = yield* now
    const id = yield* nextId<ProductId>()
    const product: Owned<Product> = { ...newProduct(id, at, { slug: `product-${id}`, title: "Product" }), organizationId }
    yield* SetupTestSeed.use((s) => s.insertProduct(product))
    return product
  })

/** Seeds a published five-star review of `productId` and answers it. */
export const seedReview = (
  organizationId: OrganizationId,
  productId: ProductId
): Effect.Effect<Owned<ReviewRecord>, never, SetupTestSeed | IdGenerator> =>
  Effect.gen(function*() {
    const at = yield* now
    const id = yield* nextId<ReviewId>()
    const review: Owned<ReviewRecord> = {
      ...newReview(id, at, { productId, title: "Great", body: "Does what it says.", rating: 5, published: true }),
      organizationId
    }
    yield* SetupTestSeed.use((s) => s.insertReview(review))
    return review
  })
