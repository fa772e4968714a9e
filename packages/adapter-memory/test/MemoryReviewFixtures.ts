/**
 * `ReviewFixtures` in memory: seeding and read-back for the review write conformance suite (test-only, merged into
 * the layer `MemoryStore.conformance.test.ts` passes; never part of a production layer).
 */
import type { Customer, ImportJobRef, ReviewDeletionRecord } from "@feedback/core"
import { ReviewFixtures } from "@feedback/core/testing"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { memoryTables, type ReviewDeletionRow } from "../src/kernel/MemoryTables.ts"

const ownedBy = <V extends { readonly organizationId: string }>(organizationId: string, v: V | undefined): V | undefined =>
  v !== undefined && v.organizationId === organizationId ? v : undefined

/** Seeding and inspection for the conformance suite (see `ReviewFixtures`). */
export const MemoryReviewFixtures = Layer.effect(ReviewFixtures, Effect.gen(function*() {
  const db = yield* MemoryDatabase
  const t = memoryTables(db)
  const toDeletion = ({ organizationId: _, ...d }: ReviewDeletionRow): ReviewDeletionRecord => d as ReviewDeletionRecord
  return ReviewFixtures.of({
    insertSite: (organizationId, site) => db.mutate(() => t.sites.set(site.id, { ...site, organizationId })),
    insertProduct: (organizationId, product) => db.mutate(() => t.products.set(product.id, { ...product, organizationId })),
    insertCustomer: (organizationId, customer) =>
      db.mutate(() => t.customers.set(customer.id, { ...customer, organizationId })),
    insertReview: (organizationId, review, extras = {}) =>
      db.mutate(() => {
        t.reviews.set(review.id, { ...review, organizationId, importJobId: null, importRow: null })
        if (extras.files !== undefined) t.reviewFiles.set(review.id, { organizationId, files: extras.files })
        if (extras.answers !== undefined) t.reviewAnswers.set(review.id, { organizationId, answers: extras.answers })
        if (extras.reply !== undefined) t.reviewReplies.set(review.id, { ...extras.reply, organizationId })
      }),
    product: (organizationId, id) =>
      Effect.sync(() => Option.map(Option.fromUndefinedOr(ownedBy(organizationId, t.products.get(id))), ({ organizationId: _, ...p }) => p)),
    customers: (organizationId) =>
      Effect.sync(() =>
        [...t.customers.values()].filter((c) => c.organizationId === organizationId).map(({ organizationId: _, ...c }) => c as Customer)
          .sort((a, b) => a.email < b.email ? -1 : a.email > b.email ? 1 : 0)
      ),
    reviewIds: (organizationId) =>
      Effect.sync(() => [...t.reviews.values()].filter((r) => r.organizationId === organizationId).map((r) => r.id).sort()),
    files: (organizationId, reviewId) => Effect.sync(() => ownedBy(organizationId, t.reviewFiles.get(reviewId))?.files ?? []),
    answers: (organizationId, reviewId) =>
      Effect.sync(() => ownedBy(organizationId, t.reviewAnswers.get(reviewId))?.answers ?? []),
    importJob: (organizationId, reviewId) =>
      Effect.sync(() => {
        const review = ownedBy(organizationId, t.reviews.get(reviewId))
        const job = review?.importJobId == null ? undefined : ownedBy(organizationId, t.importJobs.get(review.importJobId))
        return job === undefined || review?.importRow == null
          ? Option.none()
          : Option.some({ id: job.id, type: job.type, action: job.action, row: review.importRow, createdAt: job.createdAt } as ImportJobRef)
      }),
    deletion: (organizationId, reviewId) =>
      Effect.sync(() => Option.map(Option.fromUndefinedOr(ownedBy(organizationId, t.reviewDeletions.get(reviewId))), toDeletion))
  })
}))
