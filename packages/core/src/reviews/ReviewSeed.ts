/**
 * TEST SUPPORT ONLY — not part of the API and not among the `StoreServices` a host must provide.
 *
 * Puts reviews straight into a store, with their reply, files, survey answers and import job, so the read side
 * (lists, filters, includes) can be tested and benchmarked before the write side (import, moderation) exists.
 * It bypasses every rule of the write side: no validation, no events. It does keep products' review stats
 * current (docs/DECISIONS.md §5), so `include=product` shows what the write side would show.
 *
 * Both stores implement it over their own tables (`MemoryReviewSeed`, `PgReviewSeed`).
 */
import { Context, Effect } from "effect"
import { nextId, type IdGenerator } from "../kernel/IdGenerator.ts"
import type { CustomerId, FileId, ImportJobId, OrganizationId, ProductId, ReviewId, ReviewReplyId } from "../kernel/Ids.ts"
import { newReview, type ReviewFile, type ReviewRecord, type ReviewReply, type SurveyAnswer } from "./Review.ts"
import type { ImportJob } from "./ReviewRepository.ts"
import { now, type Timestamp } from "../kernel/Timestamp.ts"

export interface SeedReview {
  readonly organizationId: OrganizationId
  readonly review: ReviewRecord
  readonly reply?: ReviewReply | undefined
  readonly files?: ReadonlyArray<ReviewFile> | undefined
  readonly answers?: ReadonlyArray<SurveyAnswer> | undefined
  /** The job is stored once however many reviews name it. */
  readonly importJob?: { readonly job: ImportJob; readonly row: number } | undefined
}

export class ReviewSeed extends Context.Service<ReviewSeed, {
  /** Inserts the reviews (and their extras) and recalculates the review stats of the products they name. */
  readonly insert: (reviews: ReadonlyArray<SeedReview>) => Effect.Effect<void>
}>()("feedback/testing/ReviewSeed") {}

/** Review stats of a product from its reviews' ratings and published flags (docs/DECISIONS.md §5). */
export const reviewStatsOf = (reviews: ReadonlyArray<{ readonly rating: number; readonly published: boolean }>) => {
  const published = reviews.filter((r) => r.published)
  return {
    reviewCount: reviews.length,
    publishedReviewCount: published.length,
    averageRating: published.length === 0 ? null : published.reduce((s, r) => s + r.rating, 0) / published.length
  }
}

export interface SeedReviewOptions {
  readonly productId: ProductId
  readonly customerId?: CustomerId | null
  readonly fields?: Partial<Omit<ReviewRecord, "id" | "productId" | "customerId">>
  readonly reply?: Partial<Pick<ReviewReply, "body" | "responderName" | "published">>
  readonly files?: number
  readonly answers?: ReadonlyArray<SurveyAnswer>
  readonly importJob?: { readonly job: ImportJob; readonly row: number }
}

/** A plausible review with fresh ids (time from the Clock, so TestClock orders them), for tests. */
export const makeSeedReview = (
  organizationId: OrganizationId,
  options: SeedReviewOptions
): Effect.Effect<SeedReview, never, IdGenerator> =>
  Effect.gen(function*() {
    const at: Timestamp = options.fields?.createdAt ?? (yield* now)
    const id = yield* nextId<ReviewId>()
    const review = newReview(id, at, {
      productId: options.productId,
      customerId: options.customerId ?? null,
      title: "Great product",
      body: "Does what it says.",
      rating: 5,
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
    return {
      organizationId,
      review,
      reply,
      files,
      answers: options.answers ?? [],
      importJob: options.importJob
    }
  })

/** An import job record for seeding. */
export const makeImportJob = (type = "reviews", action = "create"): Effect.Effect<ImportJob, never, IdGenerator> =>
  Effect.gen(function*() {
    return { id: yield* nextId<ImportJobId>(), type, action, createdAt: yield* now }
  })
