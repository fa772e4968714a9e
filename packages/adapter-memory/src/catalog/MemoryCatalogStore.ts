/** Sites, products and customers in memory, over the shared `MemoryTables`. */
import { Catalog, Kernel } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import {
  type CustomerRow,
  findOwned,
  memoryTables,
  ownedBy,
  type ProductRow,
  type SiteRow,
  unowned
} from "../kernel/MemoryTables.ts"

type Owned<A> = A & { readonly organizationId: Kernel.OrganizationId }

const recordAccess = <A extends object>(searchFields: ReadonlyArray<string>): Kernel.MemoryListAccess<A> => ({
  get: (item, path) => (item as Record<string, unknown>)[path],
  id: (item) => (item as unknown as { id: string }).id,
  searchValues: (item) => searchFields.map((f) => (item as Record<string, unknown>)[f] as string | null)
})

const siteAccess = recordAccess<Catalog.Site>(Catalog.catalogSearchFields.sites)
const productAccess = recordAccess<Catalog.Product>(Catalog.catalogSearchFields.products)
const customerAccess = recordAccess<Catalog.Customer>(Catalog.catalogSearchFields.customers)

export const MemoryCatalogRepository = Layer.effect(
  Catalog.CatalogRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const tables = memoryTables(db)
    // Product questions refer to products too (the PostgreSQL store's foreign key says the same).
    const questions = db.table<string, { readonly organizationId: string; readonly productId: string }>(
      "product_questions"
    )

    // What a publishable key can read (docs/DECISIONS.md §70). Their write counters only grow, and the process's own
    // epoch keeps a restarted store (whose counters start again) from answering a tag issued before the restart.
    const storefrontTables = [
      tables.products,
      tables.customers,
      tables.reviews,
      tables.reviewReplies,
      tables.reviewFiles,
      questions,
      db.table<string, unknown>("product_question_answers")
    ]
    const epoch = randomUUID()

    const ofOrganization = <A extends { readonly organizationId: string }>(
      rows: Iterable<A>,
      organizationId: string
    ) => {
      const out: Array<A> = []
      for (const row of rows) if (row.organizationId === organizationId) out.push(row)
      return out
    }

    /** Inserts rows whose unique values are free in the organization, in one synchronous (atomic) block. */
    const insertUnique = <A extends { readonly id: string }>(
      table: { readonly set: (k: string, v: Owned<A>) => void; values: () => Iterable<Owned<A>> },
      organizationId: Kernel.OrganizationId,
      records: ReadonlyArray<A>,
      uniques: (record: A) => ReadonlyArray<readonly [Catalog.UniqueField, string | null]>
    ) =>
      db.mutate((): ReadonlyArray<Catalog.InsertOutcome> => {
        const taken = new Set<string>()
        for (const row of ofOrganization(table.values(), organizationId)) {
          for (const [field, value] of uniques(row)) if (value !== null) taken.add(`${field}\u0000${value}`)
        }
        return records.map((record): Catalog.InsertOutcome => {
          const values = uniques(record).filter((v): v is readonly [Catalog.UniqueField, string] => v[1] !== null)
          const clash = values.find(([field, value]) => taken.has(`${field}\u0000${value}`))
          if (clash !== undefined) return { _tag: "Clash", field: clash[0] }
          for (const [field, value] of values) taken.add(`${field}\u0000${value}`)
          table.set(record.id, { ...record, organizationId })
          return { _tag: "Inserted" }
        })
      })

    const productUniques = (p: Catalog.Product): ReadonlyArray<readonly [Catalog.UniqueField, string | null]> => [
      ["slug", p.slug],
      ["externalId", p.externalId]
    ]

    return Catalog.CatalogRepository.of({
      // One counter for every organization: any write moves every tag, which is never stale, only less often kept.
      storefrontVersion: () =>
        Effect.sync(() => {
          let changes = 0
          for (const table of storefrontTables) changes += table.version
          return `${epoch}.${changes}`
        }),
      insertSite: (organizationId, site) => db.mutate(() => tables.sites.set(site.id, { ...site, organizationId })),
      findSite: (organizationId, id) => Effect.sync(() => findOwned(tables.sites, organizationId, id)),
      listSites: (organizationId, request) =>
        Effect.sync(() =>
          Kernel.pageInMemory(
            ofOrganization(tables.sites.values(), organizationId).map(unowned<Catalog.Site>),
            request,
            siteAccess
          )
        ),

      insertProducts: (organizationId, products) =>
        insertUnique(tables.products, organizationId, products, productUniques),
      findProduct: (organizationId, id) => Effect.sync(() => findOwned(tables.products, organizationId, id)),
      findProducts: (organizationId, ids) =>
        Effect.sync(() =>
          [...new Set(ids)].flatMap((id) => Option.toArray(findOwned(tables.products, organizationId, id)))
        ),
      listProducts: (organizationId, request) =>
        Effect.sync(() =>
          Kernel.pageInMemory(
            ofOrganization(tables.products.values(), organizationId).map(unowned<Catalog.Product>),
            request,
            productAccess
          )
        ),
      updateProduct: (organizationId, product) =>
        db.mutate(() => {
          const stored = ownedBy(organizationId, tables.products.get(product.id))
          if (stored === undefined) return { _tag: "NotFound" } as const
          for (const other of ofOrganization(tables.products.values(), organizationId)) {
            if (other.id === product.id) continue
            if (other.slug === product.slug) return { _tag: "Clash", field: "slug" } as const
            if (product.externalId !== null && other.externalId === product.externalId) {
              return { _tag: "Clash", field: "externalId" } as const
            }
          }
          // Review stats belong to the review side; keep the stored ones.
          const updated: ProductRow = {
            ...stored,
            ...product,
            reviewCount: stored.reviewCount,
            publishedReviewCount: stored.publishedReviewCount,
            averageRating: stored.averageRating,
            ratingHistogram: stored.ratingHistogram,
            createdAt: stored.createdAt,
            organizationId
          }
          tables.products.set(product.id, updated)
          return { _tag: "Updated", record: unowned(updated) } as const
        }),
      deleteProduct: (organizationId, id) =>
        db.mutate((): Catalog.DeleteOutcome<Catalog.Product> => {
          const stored = ownedBy(organizationId, tables.products.get(id))
          if (stored === undefined) return { _tag: "NotFound" }
          for (const review of tables.reviews.values()) {
            if (review.organizationId === organizationId && review.productId === id) return { _tag: "Referenced" }
          }
          for (const question of questions.values()) {
            if (question.organizationId === organizationId && question.productId === id) return { _tag: "Referenced" }
          }
          for (const order of tables.orders.values()) {
            if (order.organizationId === organizationId && order.lines.some((l) => l.productId === id)) {
              return { _tag: "Referenced" }
            }
          }
          tables.products.delete(id)
          return { _tag: "Deleted", record: unowned(stored) }
        }),

      insertCustomers: (organizationId, customers) =>
        insertUnique(tables.customers, organizationId, customers, (c) => [["email", c.email]]),
      findCustomer: (organizationId, id) => Effect.sync(() => findOwned(tables.customers, organizationId, id)),
      findCustomers: (organizationId, ids) =>
        Effect.sync(() =>
          [...new Set(ids)].flatMap((id) => Option.toArray(findOwned(tables.customers, organizationId, id)))
        ),
      listCustomers: (organizationId, request) =>
        Effect.sync(() =>
          Kernel.pageInMemory(
            ofOrganization(tables.customers.values(), organizationId).map(unowned<Catalog.Customer>),
            request,
            customerAccess
          )
        )
    })
  })
)
