/**
 * The review write side in memory, over the shared tables of `MemoryTables.ts`. Writes run inside the memory
 * database's unit of work (one write lock, undo journal), so `lockReview` needs no lock of its own and a failed
 * unit of work undoes everything here, events included.
 */
import { Catalog, Kernel, Reviews } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import { MemoryEventOutbox } from "../organizations/MemoryOrganizationStore.ts"
import { reviewAccess } from "./MemoryReviewStore.ts"
import { memoryTables, ownedBy, reviewRecordOf, reviewRowOf, type ReviewRow, unowned } from "../kernel/MemoryTables.ts"

const makeRepository = Effect.gen(function*() {
  const db = yield* MemoryDatabase
  const outbox = yield* Kernel.EventOutbox
  const t = memoryTables(db)
  const access = reviewAccess(t)

  const findRow = (organizationId: Kernel.OrganizationId, id: Kernel.ReviewId) =>
    ownedBy(organizationId, t.reviews.get(id))
  const find = (organizationId: Kernel.OrganizationId, id: Kernel.ReviewId) =>
    Effect.sync(() => Option.map(Option.fromUndefinedOr(findRow(organizationId, id)), reviewRecordOf))

  const appendEvents = (
    organizationId: Kernel.OrganizationId,
    event: string,
    reviews: ReadonlyArray<Reviews.ReviewRecord>,
    at: Kernel.Timestamp.Timestamp
  ) =>
    Effect.forEach(reviews, (review) =>
      outbox.append(
        {
          id: Kernel.uuidV7(Date.now()) as Kernel.DomainEventId,
          organizationId,
          event,
          data: review,
          occurredAt: at
        } satisfies Kernel.DomainEvent
      ), { discard: true })

  const recalculateProductStats = (
    organizationId: Kernel.OrganizationId,
    productIds: ReadonlyArray<Kernel.ProductId>
  ) =>
    db.mutate(() => {
      if (productIds.length === 0) return
      const stats = new Map<string, { count: number; published: number; sum: number; byStar: Array<number> }>()
      for (const id of productIds) stats.set(id, { count: 0, published: 0, sum: 0, byStar: [0, 0, 0, 0, 0] })
      for (const review of t.reviews.values()) {
        const s = review.organizationId === organizationId ? stats.get(review.productId) : undefined
        if (s === undefined) continue
        s.count++
        if (review.published) {
          s.published++
          s.sum += review.rating
          s.byStar[Catalog.starOf(review.rating) - 1]!++
        }
      }
      for (const [id, s] of stats) {
        const product = ownedBy(organizationId, t.products.get(id))
        if (product === undefined) continue
        t.products.set(id, {
          ...product,
          reviewCount: s.count,
          publishedReviewCount: s.published,
          averageRating: s.published === 0 ? null : s.sum / s.published,
          ratingHistogram: {
            "1": s.byStar[0]!,
            "2": s.byStar[1]!,
            "3": s.byStar[2]!,
            "4": s.byStar[3]!,
            "5": s.byStar[4]!
          }
        })
      }
    })

  return Reviews.ReviewWriteRepository.of({
    lockReview: find,
    updateReview: (organizationId, review) =>
      db.mutate(() => {
        const row = findRow(organizationId, review.id)
        if (row !== undefined) t.reviews.set(review.id, { ...row, ...review, organizationId })
      }),
    deleteReview: (organizationId, deletion) =>
      db.mutate(() => {
        const row = findRow(organizationId, deletion.reviewId)
        if (row === undefined) return
        t.reviews.delete(row.id)
        t.reviewReplies.delete(row.id)
        t.reviewFiles.delete(row.id)
        t.reviewAnswers.delete(row.id)
        t.reviewDeletions.set(row.id, { organizationId, ...deletion })
      }),
    recalculateProductStats,
    // The memory store keeps no running sum of ratings, so it recomputes the products: the same stats, exactly.
    addProductStats: (organizationId, deltas) =>
      recalculateProductStats(organizationId, deltas.map((d) => d.productId)),
    bulkSetPublished: (organizationId, match, published, at) =>
      Effect.gen(function*() {
        const changed: Array<Reviews.ReviewRecord> = []
        const count = yield* db.mutate(() => {
          let count = 0
          for (const row of [...t.reviews.values()]) {
            if (row.organizationId !== organizationId) continue
            if (!Kernel.matchesInMemory(match, access, row)) continue
            count++
            const next: ReviewRow = { ...row, published, moderatedAt: at, updatedAt: at }
            t.reviews.set(row.id, next)
            if (row.published !== published) changed.push(reviewRecordOf(next))
          }
          return count
        })
        yield* appendEvents(organizationId, "review.updated", changed, at)
        return { count, changedProductIds: [...new Set(changed.map((r) => r.productId))] }
      }),
    resolveImportReferences: (organizationId, refs) =>
      Effect.sync(() => {
        const slugs = new Set(refs.productSlugs)
        const externalIds = new Set(refs.productExternalIds)
        const urls = new Set(refs.productUrls)
        const productsBySlug = new Map<string, Kernel.ProductId>()
        const productsByExternalId = new Map<string, Kernel.ProductId>()
        const productsByUrl = new Map<string, Array<Kernel.ProductId>>()
        for (const p of t.products.values()) {
          if (p.organizationId !== organizationId) continue
          if (slugs.has(p.slug)) productsBySlug.set(p.slug, p.id)
          if (p.externalId !== null && externalIds.has(p.externalId)) productsByExternalId.set(p.externalId, p.id)
          if (p.url !== null && urls.has(p.url)) productsByUrl.set(p.url, [...(productsByUrl.get(p.url) ?? []), p.id])
        }
        const siteIds = new Set<string>()
        for (const id of refs.siteIds) if (ownedBy(organizationId, t.sites.get(id)) !== undefined) siteIds.add(id)
        const emails = new Set(refs.customerEmails)
        const customersByEmail = new Map<string, Kernel.CustomerId>()
        for (const c of t.customers.values()) {
          if (c.organizationId === organizationId && emails.has(c.email)) customersByEmail.set(c.email, c.id)
        }
        const reviewExternalIds = new Set(refs.reviewExternalIds)
        const importedExternalIds = new Set<string>()
        for (const r of t.reviews.values()) {
          if (r.organizationId === organizationId && r.externalId !== null && reviewExternalIds.has(r.externalId)) {
            importedExternalIds.add(r.externalId)
          }
        }
        return { siteIds, productsBySlug, productsByExternalId, productsByUrl, customersByEmail, importedExternalIds }
      }),
    ensureCustomers: (organizationId, customers) =>
      db.mutate(() => {
        const existing = new Map<string, Kernel.CustomerId>()
        for (const c of t.customers.values()) if (c.organizationId === organizationId) existing.set(c.email, c.id)
        const ids = new Map<string, Kernel.CustomerId>()
        for (const customer of customers) {
          const id = existing.get(customer.email)
          if (id !== undefined) {
            ids.set(customer.email, id)
            continue
          }
          t.customers.set(customer.id, { ...customer, organizationId })
          existing.set(customer.email, customer.id)
          ids.set(customer.email, customer.id)
        }
        return ids as ReadonlyMap<string, Kernel.CustomerId>
      }),
    insertImport: (organizationId, job, reviews, at) =>
      Effect.gen(function*() {
        yield* db.mutate(() => {
          // An import job's batches share its record (docs/DECISIONS.md §20): the first one writes it.
          if (t.importJobs.get(job.id) === undefined) t.importJobs.set(job.id, { ...job, organizationId })
          for (const { review, importRow, files, answers, reply } of reviews) {
            t.reviews.set(review.id, reviewRowOf(organizationId, review, { id: job.id, row: importRow }))
            if (files.length > 0) t.reviewFiles.set(review.id, { organizationId, files })
            if (answers.length > 0) t.reviewAnswers.set(review.id, { organizationId, answers })
            if (reply !== null) t.reviewReplies.set(review.id, { ...reply, organizationId })
          }
        })
        yield* appendEvents(organizationId, "review.created", reviews.map((r) => r.review), at)
      }),
    insertReviews: (organizationId, reviews) =>
      db.mutate(() => {
        for (const review of reviews) t.reviews.set(review.id, reviewRowOf(organizationId, review))
      }),
    findReply: (organizationId, reviewId) =>
      Effect.sync(() =>
        Option.map(
          Option.fromUndefinedOr(ownedBy(organizationId, t.reviewReplies.get(reviewId))),
          unowned<Reviews.ReviewReply>
        )
      ),
    insertReply: (organizationId, reply) =>
      db.mutate(() => {
        if (t.reviewReplies.get(reply.reviewId) !== undefined) return false
        t.reviewReplies.set(reply.reviewId, { ...reply, organizationId })
        return true
      }),
    updateReply: (organizationId, reply) =>
      db.mutate(() => {
        if (ownedBy(organizationId, t.reviewReplies.get(reply.reviewId)) !== undefined) {
          t.reviewReplies.set(reply.reviewId, { ...reply, organizationId })
        }
      }),
    deleteReply: (organizationId, reviewId) =>
      db.mutate(() => {
        const row = ownedBy(organizationId, t.reviewReplies.get(reviewId))
        if (row === undefined) return Option.none()
        t.reviewReplies.delete(reviewId)
        return Option.some(unowned<Reviews.ReviewReply>(row))
      }),
    // Nothing plans the memory store's reads.
    bulkLoaded: () => Effect.void
  })
})

/** The write side's repository; its events go through the memory outbox of the same database. */
export const MemoryReviewWriteRepository = Layer.effect(Reviews.ReviewWriteRepository, makeRepository).pipe(
  Layer.provide(MemoryEventOutbox)
)
