/** TEST SUPPORT ONLY: `SetupTestSeed` over the memory store's `sites`, `products` and `reviews` tables. */
import type { Owned, Product, ReviewRecord, Site } from "@feedback/core"
import { SetupTestSeed } from "@feedback/core/testing"
import { Effect, Layer } from "effect"
import { MemoryDatabase, type MemoryTable } from "../src/kernel/MemoryDatabase.ts"

export const MemorySetupTestSeed = Layer.effect(SetupTestSeed, Effect.gen(function*() {
  const db = yield* MemoryDatabase
  const sites = db.table<string, Owned<Site>>("sites")
  const products = db.table<string, Owned<Product>>("products")
  const reviews = db.table<string, Owned<ReviewRecord>>("reviews")
  const remove = <V extends { readonly organizationId: string }>(table: MemoryTable<string, V>, org: string, id: string) =>
    db.mutate(() => table.get(id)?.organizationId === org && table.delete(id))
  return SetupTestSeed.of({
    insertSite: (site) => db.mutate(() => sites.set(site.id, site)),
    deleteSite: (org, id) => remove(sites, org, id),
    insertProduct: (product) => db.mutate(() => products.set(product.id, product)),
    deleteProduct: (org, id) =>
      db.mutate(() => {
        for (const r of reviews.values()) {
          if (r.organizationId === org && r.productId === id) throw new Error("the product still has reviews")
        }
        return products.get(id)?.organizationId === org && products.delete(id)
      }),
    insertReview: (review) =>
      db.mutate(() => {
        if (products.get(review.productId)?.organizationId !== review.organizationId) throw new Error("no such product")
        reviews.set(review.id, review)
      }),
    deleteReview: (org, id) => remove(reviews, org, id)
  })
}))
