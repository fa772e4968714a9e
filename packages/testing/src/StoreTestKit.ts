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
import {
  histogramOf,
  type Customer,
  type CustomerId,
  type FileId,
  type IdGenerator,
  type ImportJob,
  type ImportJobId,
  type ImportJobRef,
  newCustomer,
  newProduct,
  newReview,
  nextId,
  type OrganizationId,
  type Product,
  type ProductId,
  type ReviewDeletionRecord,
  type ReviewFile,
  type ReviewId,
  type ReviewRecord,
  type ReviewReply,
  type ReviewReplyId,
  type Site,
  type SiteId,
  type SurveyAnswer,
  Timestamp,
  uuidV7
} from "@feedback/core"

const { now } = Timestamp

/** A review to put into a store, with what hangs off it. */
export interface SeedReview {
  readonly organizationId: OrganizationId
  readonly review: ReviewRecord
  readonly reply?: ReviewReply | undefined
  readonly files?: ReadonlyArray<ReviewFile> | undefined
  readonly answers?: ReadonlyArray<SurveyAnswer> | undefined
  /** The job is stored once however many reviews name it. */
  readonly importJob?: { readonly job: ImportJob; readonly row: number } | undefined
}

export class StoreTestKit extends Context.Service<StoreTestKit, {
  // -- seeding -------------------------------------------------------------------------------------------------
  readonly insertSite: (organizationId: OrganizationId, site: Site) => Effect.Effect<void>
  readonly insertProduct: (organizationId: OrganizationId, product: Product) => Effect.Effect<void>
  readonly insertCustomer: (organizationId: OrganizationId, customer: Customer) => Effect.Effect<void>
  /**
   * Inserts the reviews and their extras, then recalculates the review stats of the products they name. A review's
   * product (and site, when set) must exist in its organization (PostgreSQL enforces it with foreign keys).
   */
  readonly insertReviews: (reviews: ReadonlyArray<SeedReview>) => Effect.Effect<void>
  // -- removal (the setup signals watch sites, products and reviews come and go) --------------------------------
  readonly deleteSite: (organizationId: OrganizationId, id: SiteId) => Effect.Effect<boolean>
  /** The product must have no reviews left. */
  readonly deleteProduct: (organizationId: OrganizationId, id: ProductId) => Effect.Effect<boolean>
  /** Removes the review (and its extras) and recalculates its product's review stats. */
  readonly deleteReview: (organizationId: OrganizationId, id: ReviewId) => Effect.Effect<boolean>
  // -- reading back what the API does not show ------------------------------------------------------------------
  readonly product: (organizationId: OrganizationId, id: ProductId) => Effect.Effect<Option.Option<Product>>
  /** Every customer of the organization, by email. */
  readonly customers: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<Customer>>
  /** Ids of every review of the organization, sorted. */
  readonly reviewIds: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<ReviewId>>
  readonly files: (organizationId: OrganizationId, reviewId: ReviewId) => Effect.Effect<ReadonlyArray<ReviewFile>>
  readonly answers: (organizationId: OrganizationId, reviewId: ReviewId) => Effect.Effect<ReadonlyArray<SurveyAnswer>>
  readonly importJob: (organizationId: OrganizationId, reviewId: ReviewId) => Effect.Effect<Option.Option<ImportJobRef>>
  readonly deletion: (
    organizationId: OrganizationId,
    reviewId: ReviewId
  ) => Effect.Effect<Option.Option<ReviewDeletionRecord>>
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
    ratingHistogram: histogramOf(reviews)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Records with defaults, for tests that need no store (fresh UUIDv7 ids, a fixed time unless given). The seeding
// helpers below build on them, so a default lives in one place.

/** The fixed time of records built without a clock. */
export const T0 = "2026-01-01T00:00:00.000Z" as Timestamp.Timestamp

/** A fresh UUIDv7 of any id type, for records built outside an effect. */
export const freshId = <A extends string>(): A => uuidV7(Date.now()) as A

export const makeSite = (overrides: Partial<Site> = {}): Site => ({
  id: freshId<SiteId>(),
  name: "Storefront",
  domain: "shop.example",
  createdAt: T0,
  updatedAt: T0,
  ...overrides
})

export const makeProduct = (overrides: Partial<Product> = {}): Product => {
  const id = overrides.id ?? freshId<ProductId>()
  return newProduct(id, overrides.createdAt ?? T0, { slug: `product-${id}`, title: "Mug", ...overrides })
}

export const makeCustomer = (overrides: Partial<Customer> = {}): Customer => {
  const id = overrides.id ?? freshId<CustomerId>()
  return newCustomer(id, overrides.createdAt ?? T0, { email: `customer-${id}@example.com`, ...overrides })
}

export const makeReview = (productId: ProductId, overrides: Partial<ReviewRecord> = {}): ReviewRecord =>
  newReview(overrides.id ?? freshId<ReviewId>(), overrides.createdAt ?? T0, {
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
  organizationId: OrganizationId,
  fields: Partial<Site> = {}
): Effect.Effect<Site, never, StoreTestKit | IdGenerator> =>
  Effect.gen(function*() {
    const site = makeSite({ id: yield* nextId<SiteId>(), ...(yield* stamped), ...fields })
    yield* StoreTestKit.use((k) => k.insertSite(organizationId, site))
    return site
  })

/** A product (slug unique per organization: derived from its id unless given). */
export const seedProduct = (
  organizationId: OrganizationId,
  fields: Partial<Product> = {}
): Effect.Effect<Product, never, StoreTestKit | IdGenerator> =>
  Effect.gen(function*() {
    const product = makeProduct({ id: yield* nextId<ProductId>(), ...(yield* stamped), ...fields })
    yield* StoreTestKit.use((k) => k.insertProduct(organizationId, product))
    return product
  })

/** A customer (email unique per organization: derived from its id unless given). */
export const seedCustomer = (
  organizationId: OrganizationId,
  fields: Partial<Customer> = {}
): Effect.Effect<Customer, never, StoreTestKit | IdGenerator> =>
  Effect.gen(function*() {
    const customer = makeCustomer({ id: yield* nextId<CustomerId>(), ...(yield* stamped), ...fields })
    yield* StoreTestKit.use((k) => k.insertCustomer(organizationId, customer))
    return customer
  })

export interface SeedReviewOptions {
  readonly productId: ProductId
  readonly customerId?: CustomerId | null
  /** Published unless the fields say otherwise. */
  readonly fields?: Partial<Omit<ReviewRecord, "id" | "productId" | "customerId">>
  readonly reply?: Partial<Pick<ReviewReply, "body" | "responderName" | "published">>
  /** How many files (photos) the review has. */
  readonly files?: number
  readonly answers?: ReadonlyArray<SurveyAnswer>
  readonly importJob?: { readonly job: ImportJob; readonly row: number }
}

/** A plausible published review with fresh ids and its extras, ready for `insertReviews`. */
export const makeSeedReview = (
  organizationId: OrganizationId,
  options: SeedReviewOptions
): Effect.Effect<SeedReview, never, IdGenerator> =>
  Effect.gen(function*() {
    const at: Timestamp.Timestamp = options.fields?.createdAt ?? (yield* now)
    const id = yield* nextId<ReviewId>()
    const review = makeReview(options.productId, {
      id,
      createdAt: at,
      updatedAt: at,
      customerId: options.customerId ?? null,
      published: true,
      ...options.fields
    })
    const reply: ReviewReply | undefined = options.reply === undefined ? undefined : {
      id: yield* nextId<ReviewReplyId>(),
      reviewId: id,
      body: options.reply.body ?? "Thank you!",
      responderName: options.reply.responderName ?? "The shop",
      published: options.reply.published ?? true,
      metadata: {},
      createdAt: at,
      updatedAt: at
    }
    const files: Array<ReviewFile> = []
    for (let i = 0; i < (options.files ?? 0); i++) {
      const fileId = yield* nextId<FileId>()
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
  organizationId: OrganizationId,
  options: ReadonlyArray<SeedReviewOptions>
): Effect.Effect<ReadonlyArray<SeedReview>, never, StoreTestKit | IdGenerator> =>
  Effect.gen(function*() {
    const seeds = yield* Effect.forEach(options, (o) => makeSeedReview(organizationId, o))
    yield* StoreTestKit.use((k) => k.insertReviews(seeds))
    return seeds
  })

/** Seeds one review and answers its record. */
export const seedReview = (
  organizationId: OrganizationId,
  options: SeedReviewOptions
): Effect.Effect<ReviewRecord, never, StoreTestKit | IdGenerator> =>
  Effect.map(seedReviews(organizationId, [options]), (seeds) => seeds[0]!.review)

/** An import job record for seeding. */
export const makeImportJob = (type = "reviews", action = "create"): Effect.Effect<ImportJob, never, IdGenerator> =>
  Effect.gen(function*() {
    return { id: yield* nextId<ImportJobId>(), type, action, createdAt: yield* now }
  })
