/**
 * TEST SUPPORT ONLY: the memory implementation of `ReviewSeed` (see `core/src/reviews/ReviewSeed.ts`), writing the
 * shared `MemoryTables` rows. Exported from `@feedback/adapter-memory/testing`, never from the package root.
 */
import { ReviewSeed, reviewStatsOf } from "@feedback/core/testing"
import { Effect, Layer } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import { memoryTables } from "../kernel/MemoryTables.ts"

export const MemoryReviewSeed = Layer.effect(ReviewSeed, Effect.gen(function*() {
  const db = yield* MemoryDatabase
  const tables = memoryTables(db)
  return ReviewSeed.of({
    insert: (seeds) =>
      db.mutate(() => {
        const touched = new Map<string, { organizationId: string; productId: string }>()
        for (const seed of seeds) {
          const { organizationId, review } = seed
          if (seed.importJob !== undefined && tables.importJobs.get(seed.importJob.job.id) === undefined) {
            tables.importJobs.set(seed.importJob.job.id, { ...seed.importJob.job, organizationId })
          }
          tables.reviews.set(review.id, {
            ...review,
            organizationId,
            importJobId: seed.importJob?.job.id ?? null,
            importRow: seed.importJob?.row ?? null
          })
          if (seed.reply !== undefined) tables.reviewReplies.set(review.id, { ...seed.reply, organizationId })
          if (seed.files !== undefined && seed.files.length > 0) {
            tables.reviewFiles.set(review.id, { organizationId, files: seed.files })
          }
          if (seed.answers !== undefined && seed.answers.length > 0) {
            tables.reviewAnswers.set(review.id, { organizationId, answers: seed.answers })
          }
          touched.set(`${organizationId}/${review.productId}`, { organizationId, productId: review.productId })
        }
        for (const { organizationId, productId } of touched.values()) {
          const product = tables.products.get(productId)
          if (product === undefined || product.organizationId !== organizationId) continue
          const reviews = [...tables.reviews.values()].filter((r) =>
            r.organizationId === organizationId && r.productId === productId
          )
          tables.products.set(productId, { ...product, ...reviewStatsOf(reviews) })
        }
      })
  })
}))
