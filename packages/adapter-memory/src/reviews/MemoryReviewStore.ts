/**
 * The review read side in memory: `ReviewRepository` over a `ReviewReader` that reads the shared `MemoryTables`.
 */
import { type Catalog, Kernel, Reviews } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import {
  findOwned,
  memoryTables,
  type MemoryTables,
  ownedBy,
  reviewRecordOf,
  type ReviewRow,
  unowned
} from "../kernel/MemoryTables.ts"

const toStored = (row: ReviewRow): Reviews.StoredReview => ({
  record: reviewRecordOf(row),
  importJobId: row.importJobId as Kernel.ImportJobId | null,
  importRow: row.importRow
})

/**
 * How filters, sorts and search read a review in memory (docs/DECISIONS.md §4): fields by catalog path, following
 * `product.*` and `customer.*` into the organization's records. The list and bulk moderation both read through it.
 */
export const reviewAccess = (tables: MemoryTables): Kernel.MemoryListAccess<ReviewRow> => {
  const product = (row: ReviewRow) => {
    const p = tables.products.get(row.productId)
    return p !== undefined && p.organizationId === row.organizationId ? p : undefined
  }
  const customer = (row: ReviewRow) => {
    const c = row.customerId === null ? undefined : tables.customers.get(row.customerId)
    return c !== undefined && c.organizationId === row.organizationId ? c : undefined
  }
  return {
    get: (row, path) => {
      if (path.startsWith("product.")) return (product(row) as Record<string, unknown> | undefined)?.[path.slice(8)]
      if (path.startsWith("customer.")) return (customer(row) as Record<string, unknown> | undefined)?.[path.slice(9)]
      return (row as unknown as Record<string, unknown>)[path]
    },
    id: (row) => row.id,
    searchValues: (row) => {
      const c = customer(row)
      return [row.title, row.body, c?.email, c?.firstName, c?.lastName, product(row)?.title]
    }
  }
}

const byKeys = <A>(keys: ReadonlyArray<string>, lookup: (key: string) => A | undefined): ReadonlyMap<string, A> => {
  const out = new Map<string, A>()
  for (const key of keys) {
    const value = lookup(key)
    if (value !== undefined) out.set(key, value)
  }
  return out
}

const makeMemoryReviewReader = (tables: MemoryTables): Reviews.ReviewReader => {
  const access = reviewAccess(tables)
  return {
    page: (organizationId, request) =>
      Effect.sync(() => {
        const rows: Array<ReviewRow> = []
        for (const row of tables.reviews.values()) if (row.organizationId === organizationId) rows.push(row)
        const page = Kernel.pageInMemory(rows, request, access)
        return { data: page.data.map(toStored), nextCursor: page.nextCursor }
      }),
    find: (organizationId, id) =>
      Effect.sync(() => Option.map(Option.fromUndefinedOr(ownedBy(organizationId, tables.reviews.get(id))), toStored)),
    loaders: {
      importJobs: (organizationId, ids) =>
        Effect.sync(() =>
          byKeys<Reviews.ImportJob>(
            ids,
            (id) =>
              Option.getOrUndefined(findOwned(tables.importJobs, organizationId, id)) as Reviews.ImportJob | undefined
          )
        ),
      customers: (organizationId, ids) =>
        Effect.sync(() =>
          byKeys<Catalog.Customer>(ids, (id) => Option.getOrUndefined(findOwned(tables.customers, organizationId, id)))
        ),
      products: (organizationId, ids) =>
        Effect.sync(() =>
          byKeys<Catalog.Product>(ids, (id) => Option.getOrUndefined(findOwned(tables.products, organizationId, id)))
        ),
      responses: (organizationId, reviewIds) =>
        Effect.sync(() =>
          byKeys<Reviews.ReviewReply>(reviewIds, (id) => {
            const reply = ownedBy(organizationId, tables.reviewReplies.get(id))
            return reply === undefined ? undefined : unowned(reply)
          })
        ),
      files: (organizationId, reviewIds) =>
        Effect.sync(() =>
          byKeys<ReadonlyArray<Reviews.ReviewFile>>(
            reviewIds,
            (id) => ownedBy(organizationId, tables.reviewFiles.get(id))?.files
          )
        ),
      answers: (organizationId, reviewIds) =>
        Effect.sync(() =>
          byKeys<ReadonlyArray<Reviews.SurveyAnswer>>(
            reviewIds,
            (id) => ownedBy(organizationId, tables.reviewAnswers.get(id))?.answers
          )
        ),
      collisions: (organizationId, keys) =>
        Effect.sync((): Reviews.CollisionCounts => {
          const counts = tables.reviews.observer
          const countsOf = (kind: "browserFingerprint" | "ipAddress", values: ReadonlyArray<string>) =>
            new Map(values.map((v) => [v, counts.count(organizationId, kind, v)] as const))
          return {
            browserFingerprint: countsOf("browserFingerprint", keys.browserFingerprints),
            ipAddress: countsOf("ipAddress", keys.ipAddresses)
          }
        })
    }
  }
}

export const MemoryReviewRepository = Layer.effect(
  Reviews.ReviewRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    return Reviews.ReviewRepository.fromReader(makeMemoryReviewReader(memoryTables(db)))
  })
)
