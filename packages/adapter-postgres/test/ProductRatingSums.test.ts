/**
 * Migration 111's running sum of each product's published ratings: the backfill of reviews stored before it equals a
 * sum of the reviews themselves, and the stats stay what a recomputation makes them. The conformance suite checks
 * imports' additions through the store's API on every store. Embedded PGlite, or TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../src/kernel/Migrations.ts"
import { PgDatabase } from "../src/kernel/PgDatabase.ts"
import { migrations } from "../src/migrations/index.ts"
import { generateReviewDataset } from "../src/testing/ReviewDataset.ts"
import { recalculateProductStats } from "../src/testing/ProductStatsSql.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

const ORG = "0190a000-0000-7000-8000-00000000001a"

const stats = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql.unsafe<{ id: string; n: number; pn: number; total: number; average: number | null }>(
    `SELECT id::text, review_count AS n, published_review_count AS pn, published_rating_sum AS total, average_rating AS average
     FROM products WHERE organization_id = $1 ORDER BY id`,
    [ORG]
  )
  return rows.map((r) => `${r.id} ${r.n} ${r.pn} ${Number(r.total)} ${r.average}`)
})

layer(freshLayer((target) => PgDatabase(target)), { timeout: 120_000 })(`product rating sums (${storeName})`, (it) => {
  it.effect("the backfill sums each product's published ratings, as a recomputation does", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* runMigrations(migrations.filter((m) => m.id < 111))
      yield* sql.unsafe(
        `INSERT INTO organizations (organization_id, name, api_requests_per_minute, created_at)
        VALUES ($1, 'Summed', 60, now())`,
        [ORG]
      )
      yield* generateReviewDataset({ organizationId: ORG, reviews: 2_000, products: 20, analyze: false })
      assert.deepStrictEqual((yield* runMigrations(migrations))[0], "111_product_rating_sums")
      const backfilled = yield* stats
      assert.strictEqual(backfilled.length, 20)
      assert.isTrue(backfilled.some((line) => Number(line.split(" ")[3]) > 0))
      yield* recalculateProductStats(sql, ORG, "all")
      assert.deepStrictEqual(yield* stats, backfilled)
    }))
})
