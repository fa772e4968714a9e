/**
 * TEST SUPPORT ONLY — not among the `StoreServices` a host provides, never part of a production layer.
 *
 * The one service a store implements so the conformance suites (and the adapters' own tests and benchmarks) can put
 * in place, and read back, what no endpoint writes or shows: catalog rows of other capabilities, reviews with their
 * reply, files, survey answers and import job, deletions for the setup signals, and the store's raw rows. Every
 * concept is here once; each store implements it over its own tables (`MemoryStoreTestKit`, `PgStoreTestKit`, from
 * the adapter's `./testing` entry).
 *
 * It bypasses every rule of the write side (no validation, no events) but keeps products' review stats current
 * (docs/DECISIONS.md §5), so reads show what the write side would show.
 */
import { Context, Effect, type Option } from "effect"
import { Catalog, Kernel, Reviews } from "@feedback/core"

const { now } = Kernel.Timestamp

/** A review to put into a store, with what hangs off it. */
export interface SeedReview {
  readonly organizationId: Kernel.OrganizationId
  readonly review: Reviews.ReviewRecord
  readonly reply?: Reviews.ReviewReply | undefined
  readonly files?: ReadonlyArray<Reviews.ReviewFile> | undefined
  readonly answers?: ReadonlyArray<Reviews.SurveyAnswer> | undefined
  /** The job is stored once however many reviews name it. */
  readonly importJob?: { readonly job: Reviews.ImportJob; readonly row: number } | undefined
}

export class StoreTestKit extends Context.Service<StoreTestKit, {
  // -- seeding -------------------------------------------------------------------------------------------------
  readonly insertSite: (organizationId: Kernel.OrganizationId, site: Catalog.Site) => Effect.Effect<void>
  readonly insertProduct: (organizationId: Kernel.OrganizationId, product: Catalog.Product) => Effect.Effect<void>
  readonly insertCustomer: (organizationId: Kernel.OrganizationId, customer: Catalog.Customer) => Effect.Effect<void>
  /**
   * Inserts the reviews and their extras, then recalculates the review stats of the products they name. A review's
   * product (and site, when set) must exist in its organization (PostgreSQL enforces it with foreign keys).
   */
  readonly insertReviews: (reviews: ReadonlyArray<SeedReview>) => Effect.Effect<void>
  // -- removal (the setup signals watch sites, products and reviews come and go) --------------------------------
  readonly deleteSite: (organizationId: Kernel.OrganizationId, id: Kernel.SiteId) => Effect.Effect<boolean>
  /** The product must have no reviews left. */
  readonly deleteProduct: (organizationId: Kernel.OrganizationId, id: Kernel.ProductId) => Effect.Effect<boolean>
  /** Removes the review (and its extras) and recalculates its product's review stats. */
  readonly deleteReview: (organizationId: Kernel.OrganizationId, id: Kernel.ReviewId) => Effect.Effect<boolean>
  // -- reading back what the API does not show ------------------------------------------------------------------
  readonly product: (
    organizationId: Kernel.OrganizationId,
    id: Kernel.ProductId
  ) => Effect.Effect<Option.Option<Catalog.Product>>
  /** Every customer of the organization, by email. */
  readonly customers: (organizationId: Kernel.OrganizationId) => Effect.Effect<ReadonlyArray<Catalog.Customer>>
  /** Ids of every review of the organization, sorted. */
  readonly reviewIds: (organizationId: Kernel.OrganizationId) => Effect.Effect<ReadonlyArray<Kernel.ReviewId>>
  readonly files: (
    organizationId: Kernel.OrganizationId,
    reviewId: Kernel.ReviewId
  ) => Effect.Effect<ReadonlyArray<Reviews.ReviewFile>>
  readonly answers: (
    organizationId: Kernel.OrganizationId,
    reviewId: Kernel.ReviewId
  ) => Effect.Effect<ReadonlyArray<Reviews.SurveyAnswer>>
  readonly importJob: (
    organizationId: Kernel.OrganizationId,
    reviewId: Kernel.ReviewId
  ) => Effect.Effect<Option.Option<Reviews.ImportJobRef>>
  readonly deletion: (
    organizationId: Kernel.OrganizationId,
    reviewId: Kernel.ReviewId
  ) => Effect.Effect<Option.Option<Reviews.ReviewDeletionRecord>>
  /** The names of the tables holding at least one row whose stored form contains `needle` anywhere. */
  readonly tablesContaining: (needle: string) => Effect.Effect<ReadonlyArray<string>>
}>()("feedback/testing/StoreTestKit") {}

/** Review stats of a product from its reviews' ratings and published flags (docs/DECISIONS.md §5). */
export const reviewStatsOf = (reviews: ReadonlyArray<{ readonly rating: number; readonly published: boolean }>) => {
  const published = reviews.filter((r) => r.published)
  return {
    reviewCount: reviews.length,
    publishedReviewCount: published.length,
    averageRating: published.length === 0 ? null : published.reduce((s, r) => s + r.rating, 0) / published.length,
    ratingHistogram: Catalog.histogramOf(reviews)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Records with defaults, for tests that need no store (fresh UUIDv7 ids, a fixed time unless given). The seeding
// helpers below build on them, so a default lives in one place.

/** The fixed time of records built without a clock. */
export const T0 = "2026-01-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp

/** A fresh UUIDv7 of any id type, for records built outside an effect. */
export const freshId = <A extends string>(): A => Kernel.uuidV7(Date.now()) as A

export const makeSite = (overrides: Partial<Catalog.Site> = {}): Catalog.Site => ({
  id: freshId<Kernel.SiteId>(),
  name: "Storefront",
  domain: "shop.example",
  createdAt: T0,
  updatedAt: T0,
  ...overrides
})

export const makeProduct = (overrides: Partial<Catalog.Product> = {}): Catalog.Product => {
  const id = overrides.id ?? freshId<Kernel.ProductId>()
  return Catalog.newProduct(id, overrides.createdAt ?? T0, { slug: `product-${id}`, title: "Mug", ...overrides })
}

export const makeCustomer = (overrides: Partial<Catalog.Customer> = {}): Catalog.Customer => {
  const id = overrides.id ?? freshId<Kernel.CustomerId>()
  return Catalog.newCustomer(id, overrides.createdAt ?? T0, { email: `customer-${id}@example.com`, ...overrides })
}

export const makeReview = (
  productId: Kernel.ProductId,
  overrides: Partial<Reviews.ReviewRecord> = {}
): Reviews.ReviewRecord =>
  Reviews.newReview(overrides.id ?? freshId<Kernel.ReviewId>(), overrides.createdAt ?? T0, {
    productId,
    title: "Great product",
    body: "Does what it says.",
    rating: 5,
    ...overrides
  })

// ---------------------------------------------------------------------------------------------------------------
// Seeding through the kit: ids from the IdGenerator, times from the Clock (so TestClock orders them).

const stamped = Effect.gen(function*() {
  const at = yield* now
  return { createdAt: at, updatedAt: at }
})

export const seedSite = (
  organizationId: Kernel.OrganizationId,
  fields: Partial<Catalog.Site> = {}
): Effect.Effect<Catalog.Site, never, StoreTestKit | Kernel.IdGenerator> =>
  Effect.gen(function*() {
    const site = makeSite({ id: yield* Kernel.nextId<Kernel.SiteId>(), ...(yield* stamped), ...fields })
    yield* StoreTestKit.use((k) => k.insertSite(organizationId, site))
    return site
  })

/** A product (slug unique per organization: derived from its id unless given). */
export const seedProduct = (
  organizationId: Kernel.OrganizationId,
  fields: Partial<Catalog.Product> = {}
): Effect.Effect<Catalog.Product, never, StoreTestKit | Kernel.IdGenerator> =>
  Effect.gen(function*() {
    const product = makeProduct({ id: yield* Kernel.nextId<Kernel.ProductId>(), ...(yield* stamped), ...fields })
    yield* StoreTestKit.use((k) => k.insertProduct(organizationId, product))
    return product
  })

/** A customer (email unique per organization: derived from its id unless given). */
export const seedCustomer = (
  organizationId: Kernel.OrganizationId,
  fields: Partial<Catalog.Customer> = {}
): Effect.Effect<Catalog.Customer, never, StoreTestKit | Kernel.IdGenerator> =>
  Effect.gen(function*() {
    const customer = makeCustomer({ id: yield* Kernel.nextId<Kernel.CustomerId>(), ...(yield* stamped), ...fields })
    yield* StoreTestKit.use((k) => k.insertCustomer(organizationId, customer))
    return customer
  })

export interface SeedReviewOptions {
  readonly productId: Kernel.ProductId
  readonly customerId?: Kernel.CustomerId | null
  /** Published unless the fields say otherwise. */
  readonly fields?: Partial<Omit<Reviews.ReviewRecord, "id" | "productId" | "customerId">>
  readonly reply?: Partial<Pick<Reviews.ReviewReply, "body" | "responderName" | "published">>
  /** How many files (photos) the review has. */
  readonly files?: number
  readonly answers?: ReadonlyArray<Reviews.SurveyAnswer>
  readonly importJob?: { readonly job: Reviews.ImportJob; readonly row: number }
}

/** A plausible published review with fresh ids and its extras, ready for `insertReviews`. */
export const makeSeedReview = (
  organizationId: Kernel.OrganizationId,
  options: SeedReviewOptions
): Effect.Effect<SeedReview, never, Kernel.IdGenerator> =>
  Effect.gen(function*() {
    const at: Kernel.Timestamp.Timestamp = options.fields?.createdAt ?? (yield* now)
    const id = yield* Kernel.nextId<Kernel.ReviewId>()
    const review = makeReview(options.productId, {
      id,
      createdAt: at,
      updatedAt: at,
      customerId: options.customerId ?? null,
      published: true,
      ...options.fields
    })
    const reply: Reviews.ReviewReply | undefined = options.reply === undefined ? undefined : {
      id: yield* Kernel.nextId<Kernel.ReviewReplyId>(),
      reviewId: id,
      body: options.reply.body ?? "Thank you!",
      responderName: options.reply.responderName ?? "The shop",
      published: options.reply.published ?? true,
      metadata: {},
      createdAt: at,
      updatedAt: at
    }
    const files: Array<Reviews.ReviewFile> = []
    for (let i = 0; i < (options.files ?? 0); i++) {
      const fileId = yield* Kernel.nextId<Kernel.FileId>()
      files.push({
        id: fileId,
        fileName: `photo-${i}.jpg`,
        contentType: "image/jpeg",
        sizeBytes: 1000 + i,
        url: `https://cdn.example.com/${fileId}.jpg`
      })
    }
    return { organizationId, review, reply, files, answers: options.answers ?? [], importJob: options.importJob }
  })

/** Seeds the reviews (with their extras) in one call and answers what was stored. */
export const seedReviews = (
  organizationId: Kernel.OrganizationId,
  options: ReadonlyArray<SeedReviewOptions>
): Effect.Effect<ReadonlyArray<SeedReview>, never, StoreTestKit | Kernel.IdGenerator> =>
  Effect.gen(function*() {
    const seeds = yield* Effect.forEach(options, (o) => makeSeedReview(organizationId, o))
    yield* StoreTestKit.use((k) => k.insertReviews(seeds))
    return seeds
  })

/** Seeds one review and answers its record. */
export const seedReview = (
  organizationId: Kernel.OrganizationId,
  options: SeedReviewOptions
): Effect.Effect<Reviews.ReviewRecord, never, StoreTestKit | Kernel.IdGenerator> =>
  Effect.map(seedReviews(organizationId, [options]), (seeds) => seeds[0]!.review)

/** An import job record for seeding. */
export const makeImportJob = (
  type = "reviews",
  action = "create"
): Effect.Effect<Reviews.ImportJob, never, Kernel.IdGenerator> =>
  Effect.gen(function*() {
    return { id: yield* Kernel.nextId<Kernel.ImportJobId>(), type, action, createdAt: yield* now }
  })
