/**
 * Test support for the review write side: a store-specific service that seeds catalog records and reviews and reads
 * back what the admin API does not expose yet (files, answers, import provenance, deletion records, stats). Each
 * store adapter provides one (`MemoryReviewFixtures`, `PgReviewFixtures`) next to its store layer for the
 * conformance suite; it is not part of `StoreServices`, so no server carries it.
 */
import { Context, type Effect, type Option } from "effect"
import { type Customer, newCustomer, newProduct, type Product, type Site } from "../catalog/Catalog.ts"
import { uuidV7 } from "../kernel/IdGenerator.ts"
import type { CustomerId, OrganizationId, ProductId, ReviewId, SiteId } from "../kernel/Ids.ts"
import { type ImportJobRef, newReview, type ReviewFile, type ReviewRecord, type ReviewReply, type SurveyAnswer } from "./Review.ts"
import type { ReviewDeletionRecord } from "./ReviewRequests.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

export class ReviewFixtures extends Context.Service<ReviewFixtures, {
  readonly insertSite: (organizationId: OrganizationId, site: Site) => Effect.Effect<void>
  readonly insertProduct: (organizationId: OrganizationId, product: Product) => Effect.Effect<void>
  readonly insertCustomer: (organizationId: OrganizationId, customer: Customer) => Effect.Effect<void>
  readonly insertReview: (
    organizationId: OrganizationId,
    review: ReviewRecord,
    extras?: {
      readonly files?: ReadonlyArray<ReviewFile>
      readonly answers?: ReadonlyArray<SurveyAnswer>
      readonly reply?: ReviewReply
    }
  ) => Effect.Effect<void>
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
}>()("feedback/testing/ReviewFixtures") {}

// ---------------------------------------------------------------------------------------------------------------
// Record builders with defaults (ids are fresh UUIDv7, times fixed unless given).

const T0 = "2026-01-01T00:00:00.000Z" as Timestamp
const id = <A extends string>(): A => uuidV7(Date.now()) as A

export const makeSite = (overrides: Partial<Site> = {}): Site => ({
  id: id<SiteId>(),
  name: "Store",
  domain: "shop.example",
  createdAt: T0,
  updatedAt: T0,
  ...overrides
})

export const makeProduct = (overrides: Partial<Product> = {}): Product => {
  const productId = overrides.id ?? id<ProductId>()
  return newProduct(productId, T0, { slug: `product-${productId}`, title: "Mug", ...overrides })
}

export const makeCustomer = (overrides: Partial<Customer> = {}): Customer => {
  const customerId = overrides.id ?? id<CustomerId>()
  return newCustomer(customerId, T0, { email: `c-${customerId}@example.com`, ...overrides })
}

export const makeReview = (productId: ProductId, overrides: Partial<ReviewRecord> = {}): ReviewRecord =>
  newReview(id<ReviewId>(), T0, {
    productId,
    title: "Great mug",
    body: "It holds coffee and my phone number is 555-0100.",
    rating: 5,
    ...overrides
  })
