/**
 * Migration 102's kept collision counts against a count of the reviews themselves: the backfill of reviews stored
 * before it, then set-based writes of every kind the store's write paths use (multi-row INSERT, UPDATE of the
 * values and of other columns, DELETE, an organization's deletion cascading to its reviews, a rolled-back
 * statement, TRUNCATE). The conformance suite checks the same through the store's API on every store; this covers
 * writes the API cannot make (changing a fingerprint) and the backfill. Embedded PGlite, or TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../src/kernel/Migrations.ts"
import { PgDatabase } from "../src/kernel/PgDatabase.ts"
import { migrations } from "../src/migrations/index.ts"
import { generateReviewDataset } from "../src/testing/ReviewDataset.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

const ORG_A = "0190a000-0000-7000-8000-00000000000a"
const ORG_B = "0190a000-0000-7000-8000-00000000000b"

/** The kept counts and a GROUP BY of the reviews, as comparable sorted lists. */
const keptAndCounted = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const line = (r: { organization_id: string; kind: string; value: string; n: number }) =>
    `${r.organization_id} ${r.kind} ${r.value} ${Number(r.n)}`
  const kept = yield* sql.unsafe<{ organization_id: string; kind: string; value: string; n: number }>(
    `SELECT organization_id::text, kind, value, reviews AS n FROM review_value_counts ORDER BY 1, 2, 3`
  )
  const counted = yield* sql.unsafe<{ organization_id: string; kind: string; value: string; n: number }>(
    `SELECT organization_id::text, kind, value, count(*)::int AS n FROM (
        SELECT organization_id, 'browser_fingerprint' AS kind, browser_fingerprint AS value FROM reviews WHERE browser_fingerprint IS NOT NULL
        UNION ALL SELECT organization_id, 'ip_address', ip_address FROM reviews WHERE ip_address IS NOT NULL) v
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
  )
  return { kept: kept.map(line), counted: counted.map(line) }
})

const assertExact = Effect.gen(function*() {
  const { kept, counted } = yield* keptAndCounted
  assert.isAbove(counted.length, 0)
  assert.deepStrictEqual(kept, counted)
})

layer(freshLayer((target) => PgDatabase(target)), { timeout: 120_000 })(`review value counts (${storeName})`, (it) => {
  it.effect("the backfill and every kind of write keep the counts equal to a count of the reviews", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* runMigrations(migrations.filter((m) => m.id < 102))
      for (const org of [ORG_A, ORG_B]) {
        yield* sql.unsafe(
          `INSERT INTO organizations (organization_id, name, api_requests_per_minute, created_at)
          VALUES ($1, 'Counted', 60, now())`,
          [org]
        )
      }
      yield* generateReviewDataset({ organizationId: ORG_A, reviews: 3_000, products: 30, analyze: false })
      yield* generateReviewDataset({ organizationId: ORG_B, reviews: 1_000, products: 10, analyze: false })
      // 102 counts the reviews already there (the later migrations run too, as on any upgrade).
      assert.deepStrictEqual((yield* runMigrations(migrations))[0], "102_review_value_counts")
      yield* assertExact

      // A value shared with another organization, a value moved to a new one, values cleared.
      yield* sql.unsafe(`UPDATE reviews SET browser_fingerprint = 'fp-1' WHERE organization_id = $1 AND rating = 5`, [
        ORG_A
      ])
      yield* sql.unsafe(`UPDATE reviews SET ip_address = 'moved, "quoted"' WHERE organization_id = $1 AND rating = 4`, [
        ORG_A
      ])
      yield* sql.unsafe(`UPDATE reviews SET ip_address = NULL, browser_fingerprint = NULL WHERE rating = 3`)
      yield* sql.unsafe(`UPDATE reviews SET published = NOT published WHERE organization_id = $1`, [ORG_B])
      yield* assertExact
      yield* sql.unsafe(`DELETE FROM reviews WHERE organization_id = $1 AND rating IN (1, 4)`, [ORG_A])
      yield* assertExact
      // A statement that fails leaves the counts as they were.
      const failed = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe(`DELETE FROM reviews WHERE organization_id = $1 AND rating = 2`, [ORG_A])
        yield* sql.unsafe(`SELECT 1 / 0`)
      })))
      assert.strictEqual(failed._tag, "Failure")
      yield* assertExact
      // An organization's deletion cascades to its reviews, and leaves no count behind.
      yield* sql.unsafe(`DELETE FROM organizations WHERE organization_id = $1`, [ORG_B])
      yield* assertExact
      const left = yield* sql.unsafe<{ n: number }>(
        `SELECT count(*)::int AS n FROM review_value_counts WHERE organization_id = $1`,
        [ORG_B]
      )
      assert.strictEqual(Number(left[0]!.n), 0)
      // Values whose last review went are removed, not kept at 0.
      const zeros = yield* sql.unsafe<{ n: number }>(
        `SELECT count(*)::int AS n FROM review_value_counts WHERE reviews <= 0`
      )
      assert.strictEqual(Number(zeros[0]!.n), 0)
      yield* sql.unsafe(`TRUNCATE reviews CASCADE`)
      const none = yield* sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM review_value_counts`)
      assert.strictEqual(Number(none[0]!.n), 0)
    }))
})
