/**
 * Storage of the review write side: moderation, redaction, deletion, bulk moderation, import and replies.
 *
 * Events. Single-review changes record their events in the `ReviewWrites` service (its event recorder). The two
 * bulk writes (`bulkSetPublished`, `insertImport`) record theirs inside the store, set-based, because one round trip
 * per event would dominate a 100,000-review update; their event `data` must be exactly what the read side
 * (`ReviewRepository.get` without includes) answers for the review afterwards (the conformance suite checks it),
 * and they run inside the caller's unit of work like every other write, so the events commit or roll back with the
 * change.
 *
 * Every method is scoped to an organization: another organization's review is never read or written.
 */
import { Context, type Effect, type Option } from "effect"
import type { Customer } from "../catalog/Catalog.ts"
import type { FilterAst } from "../kernel/Filter.ts"
import type { CustomerId, ImportJobId, OrganizationId, ProductId, ReviewId } from "../kernel/Ids.ts"
import type { ReviewFile, ReviewRecord, ReviewReply, SurveyAnswer } from "./Review.ts"
import type { ReviewDeletionRecord } from "./ReviewRequests.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

/** Which reviews a bulk operation touches: the read side's filter AND search (docs/DECISIONS.md §4). */
export interface ReviewMatch {
  readonly filter: FilterAst
  readonly search: string | undefined
}

export interface BulkPublishOutcome {
  /** Reviews matched (and stamped moderated). */
  readonly count: number
  /** Products of the reviews whose `published` changed: the ones whose stats need recalculating. */
  readonly changedProductIds: ReadonlyArray<ProductId>
}

/** The distinct references of an import's rows, looked up in one go. */
export interface ImportReferences {
  readonly siteIds: ReadonlyArray<string>
  readonly productSlugs: ReadonlyArray<string>
  readonly productExternalIds: ReadonlyArray<string>
  readonly productUrls: ReadonlyArray<string>
  /** Lower-cased emails. */
  readonly customerEmails: ReadonlyArray<string>
  readonly reviewExternalIds: ReadonlyArray<string>
}

export interface ResolvedImportReferences {
  readonly siteIds: ReadonlySet<string>
  readonly productsBySlug: ReadonlyMap<string, ProductId>
  readonly productsByExternalId: ReadonlyMap<string, ProductId>
  /** Product URLs are not unique: every product with the URL, so an ambiguous one can be refused. */
  readonly productsByUrl: ReadonlyMap<string, ReadonlyArray<ProductId>>
  readonly customersByEmail: ReadonlyMap<string, CustomerId>
  /** Review externalIds that some review of the organization already has. */
  readonly importedExternalIds: ReadonlySet<string>
}

/** One review an import writes, with what hangs off it. */
export interface ImportedReview {
  readonly review: ReviewRecord
  /** The row index in the import request (import provenance). */
  readonly importRow: number
  readonly files: ReadonlyArray<ReviewFile>
  readonly answers: ReadonlyArray<SurveyAnswer>
  readonly reply: ReviewReply | null
}

/** What a set of new reviews adds to one product's stats (`productStatsDeltas`). */
export interface ProductStatsDelta {
  readonly productId: ProductId
  readonly reviews: number
  readonly published: number
  /** The sum of the published reviews' ratings. */
  readonly publishedRatingSum: number
  /** The published reviews by star (`starOf`), 1 to 5. */
  readonly publishedByStar: readonly [number, number, number, number, number]
}

export interface ImportJobRecord {
  readonly id: ImportJobId
  readonly type: string
  readonly action: string
  readonly createdAt: Timestamp
}

export class ReviewWriteRepository extends Context.Service<ReviewWriteRepository, {
  /**
   * The review without extras, held against concurrent writers until the unit of work ends (reading without a lock
   * is the read side's `ReviewRepository.get`).
   */
  readonly lockReview: (organizationId: OrganizationId, id: ReviewId) => Effect.Effect<Option.Option<ReviewRecord>>
  /** Stores the mutable fields of an existing review (text, originals, published, moderation, metadata, times). */
  readonly updateReview: (organizationId: OrganizationId, review: ReviewRecord) => Effect.Effect<void>
  /** Removes the review with its files, answers and reply, and keeps the deletion record. */
  readonly deleteReview: (organizationId: OrganizationId, deletion: ReviewDeletionRecord) => Effect.Effect<void>
  /**
   * Recomputes reviewCount, publishedReviewCount, averageRating and ratingHistogram (of published reviews) of each
   * product once.
   */
  readonly recalculateProductStats: (
    organizationId: OrganizationId,
    productIds: ReadonlyArray<ProductId>
  ) => Effect.Effect<void>
  /**
   * Adds reviews just inserted to their products' stats, leaving the stats what `recalculateProductStats` would make
   * them. An import's batches call it: recomputing would read every review of the products each batch touches, so a
   * job's batches would cost more the more rows came before them. A store may still recompute.
   */
  readonly addProductStats: (
    organizationId: OrganizationId,
    deltas: ReadonlyArray<ProductStatsDelta>
  ) => Effect.Effect<void>
  /**
   * Sets `published` on every matching review and stamps `moderatedAt` (and `updatedAt`) on each; records
   * `review.updated` (occurred at `at`) for each review whose `published` changed. Set-based: never loads the
   * matching reviews into memory all at once.
   */
  readonly bulkSetPublished: (
    organizationId: OrganizationId,
    match: ReviewMatch,
    published: boolean,
    at: Timestamp
  ) => Effect.Effect<BulkPublishOutcome>
  /**
   * Looks the references up; also serializes concurrent imports of the organization until the unit of work ends
   * (so an externalId checked here cannot be taken by another import before this one commits).
   */
  readonly resolveImportReferences: (
    organizationId: OrganizationId,
    references: ImportReferences
  ) => Effect.Effect<ResolvedImportReferences>
  /**
   * Creates the customers whose email no customer of the organization has yet; answers the id of the customer with
   * each of their emails (a customer created concurrently by someone else wins, and its id is answered).
   */
  readonly ensureCustomers: (
    organizationId: OrganizationId,
    customers: ReadonlyArray<Customer>
  ) => Effect.Effect<ReadonlyMap<string, CustomerId>>
  /**
   * Writes the import job and its reviews with their files, answers and replies, and records `review.created`
   * (occurred at `at`) for each review in row order. Set-based: a fixed number of statements whatever the size.
   * An import calls it once per slice of its rows (`IMPORT_FIRST_SLICE`, then `IMPORT_SLICE` each), in row order,
   * in one unit of work: the job's record is written by the first call. It may prepare the write when called
   * (encode the rows) and leave only the writing to the effect: the import calls it for the next slice while the
   * previous one is still being written.
   */
  readonly insertImport: (
    organizationId: OrganizationId,
    job: ImportJobRecord,
    reviews: ReadonlyArray<ImportedReview>,
    at: Timestamp
  ) => Effect.Effect<void>
  /**
   * Writes new reviews without import provenance (shopper submissions); the caller records their events and adds
   * them to their products' stats in the same unit of work.
   */
  readonly insertReviews: (organizationId: OrganizationId, reviews: ReadonlyArray<ReviewRecord>) => Effect.Effect<void>
  readonly findReply: (organizationId: OrganizationId, reviewId: ReviewId) => Effect.Effect<Option.Option<ReviewReply>>
  /** Inserts the reply unless the review already has one; answers whether it was inserted. */
  readonly insertReply: (organizationId: OrganizationId, reply: ReviewReply) => Effect.Effect<boolean>
  readonly updateReply: (organizationId: OrganizationId, reply: ReviewReply) => Effect.Effect<void>
  /** Removes the review's reply and answers it. */
  readonly deleteReply: (
    organizationId: OrganizationId,
    reviewId: ReviewId
  ) => Effect.Effect<Option.Option<ReviewReply>>
  /**
   * Told, after it committed, that a bulk load (an import job) wrote `rows` reviews of the organization. A store
   * whose query planner keeps statistics refreshes them, so lists of the new reviews are planned for their real
   * number at once rather than after the database's next automatic analysis. Never fails: at worst lists stay
   * slower until then.
   */
  readonly bulkLoaded: (organizationId: OrganizationId, rows: number) => Effect.Effect<void>
}>()("feedback/ReviewWriteRepository") {}
