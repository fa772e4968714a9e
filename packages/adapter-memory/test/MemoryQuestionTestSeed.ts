/** TEST SUPPORT ONLY: `QuestionTestSeed` over the memory store (seeds `MemoryTables` rows, inspects every table). */
import { QuestionTestSeed } from "@feedback/core/testing"
import { Effect, Layer } from "effect"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { memoryTables } from "../src/kernel/MemoryTables.ts"

export const MemoryQuestionTestSeed = Layer.effect(QuestionTestSeed, Effect.gen(function*() {
  const db = yield* MemoryDatabase
  const tables = memoryTables(db)
  return QuestionTestSeed.of({
    insertSite: (site) => db.mutate(() => tables.sites.set(site.id, site)),
    insertProduct: (product) => db.mutate(() => tables.products.set(product.id, product)),
    insertCustomer: (customer) => db.mutate(() => tables.customers.set(customer.id, customer)),
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
}))
