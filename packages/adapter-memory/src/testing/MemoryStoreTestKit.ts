/**
 * TEST SUPPORT ONLY: `StoreTestKit` (see `testing/src/StoreTestKit.ts`) over the shared `MemoryTables`.
 * Exported from `@feedback/adapter-memory/testing`, never from the package root. Needs the memory store's layer
 * (it recalculates review stats through the store's own `ReviewWriteRepository`).
 */
import { type Catalog, type Kernel, Reviews } from "@feedback/core"
import { StoreTestKit } from "@feedback/testing"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import { findOwned, memoryTables, ownedBy, reviewRowOf, unowned } from "../kernel/MemoryTables.ts"

export const MemoryStoreTestKit = Layer.effect(
  StoreTestKit,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const writes = yield* Reviews.ReviewWriteRepository
    const t = memoryTables(db)

    const remove = <V extends { readonly organizationId: string }>(
      table: { get: (id: string) => V | undefined; delete: (id: string) => boolean },
      organizationId: string,
      id: string
    ) => ownedBy(organizationId, table.get(id)) !== undefined && table.delete(id)

    return StoreTestKit.of({
      insertSite: (organizationId, site) => db.mutate(() => t.sites.set(site.id, { ...site, organizationId })),
      insertProduct: (organizationId, product) =>
        db.mutate(() => t.products.set(product.id, { ...product, organizationId })),
      insertCustomer: (organizationId, customer) =>
        db.mutate(() => t.customers.set(customer.id, { ...customer, organizationId })),
      insertReviews: (seeds) =>
        Effect.gen(function*() {
          const touched = new Map<Kernel.OrganizationId, Set<Kernel.ProductId>>()
          yield* db.mutate(() => {
            for (const seed of seeds) {
              const { organizationId, review } = seed
              // The foreign keys PostgreSQL enforces.
              if (ownedBy(organizationId, t.products.get(review.productId)) === undefined) {
                throw new Error(`no product ${review.productId} in organization ${organizationId}`)
              }
              if (review.siteId !== null && ownedBy(organizationId, t.sites.get(review.siteId)) === undefined) {
                throw new Error(`no site ${review.siteId} in organization ${organizationId}`)
              }
              if (
                review.customerId !== null && ownedBy(organizationId, t.customers.get(review.customerId)) === undefined
              ) {
                throw new Error(`no customer ${review.customerId} in organization ${organizationId}`)
              }
              const job = seed.importJob
              if (job !== undefined && t.importJobs.get(job.job.id) === undefined) {
                t.importJobs.set(job.job.id, { ...job.job, organizationId })
              }
              t.reviews.set(
                review.id,
                reviewRowOf(organizationId, review, job === undefined ? null : { id: job.job.id, row: job.row })
              )
              if (seed.reply !== undefined) t.reviewReplies.set(review.id, { ...seed.reply, organizationId })
              if (seed.files !== undefined && seed.files.length > 0) {
                t.reviewFiles.set(review.id, { organizationId, files: seed.files })
              }
              if (seed.answers !== undefined && seed.answers.length > 0) {
                t.reviewAnswers.set(review.id, { organizationId, answers: seed.answers })
              }
              touched.set(organizationId, (touched.get(organizationId) ?? new Set()).add(review.productId))
            }
          })
          for (const [organizationId, productIds] of touched) {
            yield* writes.recalculateProductStats(organizationId, [...productIds])
          }
        }),
      deleteSite: (organizationId, id) => db.mutate(() => remove(t.sites, organizationId, id)),
      deleteProduct: (organizationId, id) =>
        db.mutate(() => {
          for (const r of t.reviews.values()) {
            if (r.organizationId === organizationId && r.productId === id) {
              throw new Error("the product still has reviews")
            }
          }
          return remove(t.products, organizationId, id)
        }),
      deleteReview: (organizationId, id) =>
        Effect.gen(function*() {
          const row = ownedBy(organizationId, t.reviews.get(id))
          if (row === undefined) return false
          yield* db.mutate(() => {
            t.reviews.delete(id)
            t.reviewReplies.delete(id)
            t.reviewFiles.delete(id)
            t.reviewAnswers.delete(id)
          })
          yield* writes.recalculateProductStats(organizationId, [row.productId])
          return true
        }),
      product: (organizationId, id) => Effect.sync(() => findOwned(t.products, organizationId, id)),
      customers: (organizationId) =>
        Effect.sync(() =>
          [...t.customers.values()].filter((c) => c.organizationId === organizationId).map((c) =>
            unowned<Catalog.Customer>(c)
          )
            .sort((a, b) => a.email < b.email ? -1 : a.email > b.email ? 1 : 0)
        ),
      reviewIds: (organizationId) =>
        Effect.sync(() =>
          [...t.reviews.values()].filter((r) => r.organizationId === organizationId).map((r) => r.id).sort()
        ),
      files: (organizationId, reviewId) =>
        Effect.sync(() => ownedBy(organizationId, t.reviewFiles.get(reviewId))?.files ?? []),
      answers: (organizationId, reviewId) =>
        Effect.sync(() => ownedBy(organizationId, t.reviewAnswers.get(reviewId))?.answers ?? []),
      importJob: (organizationId, reviewId) =>
        Effect.sync(() => {
          const review = ownedBy(organizationId, t.reviews.get(reviewId))
          const job = review?.importJobId == null
            ? undefined
            : ownedBy(organizationId, t.importJobs.get(review.importJobId))
          return job === undefined || review?.importRow == null
            ? Option.none()
            : Option.some(
              {
                id: job.id,
                type: job.type,
                action: job.action,
                row: review.importRow,
                createdAt: job.createdAt
              } as Reviews.ImportJobRef
            )
        }),
      deletion: (organizationId, reviewId) =>
        Effect.sync(() =>
          Option.map(
            Option.fromUndefinedOr(ownedBy(organizationId, t.reviewDeletions.get(reviewId))),
            (d) => unowned(d) as unknown as Reviews.ReviewDeletionRecord
          )
        ),
      tablesContaining: (needle) =>
        Effect.sync(() =>
          db.tableNames().filter((name) => {
            for (const [key, row] of db.table<unknown, unknown>(name).rows) {
              if (JSON.stringify([key, row]).includes(needle)) return true
            }
            return false
          })
        )
    })
  })
)
