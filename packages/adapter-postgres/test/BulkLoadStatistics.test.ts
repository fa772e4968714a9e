/**
 * After a bulk load the store refreshes the planner's statistics of `reviews` (`ReviewWriteRepository.bulkLoaded`):
 * with autovacuum off, an organization whose reviews arrived after the last analysis is estimated at a handful of
 * rows until then, and is estimated at its real size right after. Runs on embedded PGlite, or on the PostgreSQL
 * server of TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, Organizations, Reviews, type StoreServices } from "@feedback/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PgStoreLayer } from "../src/PgStore.ts"
import { generateReviewDataset } from "../src/testing/ReviewDataset.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

/** The planner's estimate of the organization's reviews. */
const estimatedReviews = (organizationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<Record<string, unknown>>(
      `EXPLAIN (FORMAT JSON) SELECT id FROM reviews WHERE organization_id = $1`,
      [organizationId]
    )
    const raw = Object.values(rows[0]!)[0]
    const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: { "Plan Rows": number } }>
    return plan[0]!.Plan["Plan Rows"]
  })

layer(
  Organizations.Organizations.layer.pipe(
    Layer.provideMerge(
      freshLayer(PgStoreLayer).pipe(Layer.provideMerge(Kernel.IdGenerator.uuidV7)) as Layer.Layer<
        SqlClient.SqlClient | Kernel.IdGenerator | StoreServices
      >
    )
  ),
  { timeout: 120_000 }
)(`statistics after a bulk load (${storeName})`, (it) => {
  it.effect("a bulk load of 1,000 reviews or more is planned at its real size at once; a smaller one is left to autovacuum", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`ALTER TABLE reviews SET (autovacuum_enabled = false)`)
      const first = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Analyzed" }))
      yield* generateReviewDataset({ organizationId: first.id, reviews: 3_000, products: 30 })
      yield* sql.unsafe(`ANALYZE reviews`)

      const loaded = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Loaded later" }))
      yield* generateReviewDataset({ organizationId: loaded.id, reviews: 2_000, products: 20, analyze: false })
      const before = yield* estimatedReviews(loaded.id)
      assert.isBelow(before, 500, `unseen by the last analysis: estimated ${before}`)

      yield* Reviews.ReviewWriteRepository.use((r) => r.bulkLoaded(loaded.id, 999))
      assert.strictEqual(yield* estimatedReviews(loaded.id), before, "under the threshold nothing is analyzed")

      yield* Reviews.ReviewWriteRepository.use((r) => r.bulkLoaded(loaded.id, 2_000))
      const after = yield* estimatedReviews(loaded.id)
      assert.isAbove(after, 1_500, `estimated ${after} of 2,000 after the bulk load`)
      assert.isBelow(after, 2_500, `estimated ${after} of 2,000 after the bulk load`)
    }))
})
