/**
 * PostgreSQL `RateLimitStore`: exact across every process sharing the database.
 *
 * One short READ COMMITTED transaction per request:
 * 1. `INSERT … ON CONFLICT DO UPDATE … WHERE false` over the request's bucket rows, in key order. A missing row is
 *    created full (a new bucket is full); an existing one is only locked, not rewritten (PostgreSQL locks every
 *    conflicting row of `ON CONFLICT DO UPDATE` even when its `WHERE` is false). One statement locking in one
 *    global order makes the locking deadlock-free, and there is no window in which two processes both see a row
 *    missing.
 * 2. `SELECT` of those rows: they are ours until commit, so this is the latest committed level.
 * 3. `TokenBucket.spend` decides; when admitted, one `UPDATE` writes every new level. A refusal writes nothing.
 *
 * The time is the application's `Clock`, not the database's. Clocks of different processes may disagree:
 * `TokenBucket` never credits time before a row's `updated_at_ms`, so a lagging clock adds nothing and skew can
 * never mint tokens; the bound holds relative to the fastest clock that touched the bucket.
 *
 * Run `spend` outside any request transaction: the row locks are held until the enclosing transaction ends.
 * Transient failures (deadlock, serialization, lost connection) retry the whole transaction a few times; a database
 * that stays unavailable is a defect (500), never an admission.
 */
import { Clock, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { assertBuckets, RateLimitStore, toSpendDecision } from "@feedback/core"
import type { KeyedBucket } from "@feedback/core"
import { TokenBucket } from "@feedback/core"
type BucketState = TokenBucket.BucketState
const spendBuckets = TokenBucket.spend

/**
 * The bucket table. The primary key starts with `organization_id` (every access is by organization). `tokens` holds
 * the level in tokens as a double; `TokenBucket` keeps it an exact multiple of 1/60,000,000 token, which float8
 * round-trips exactly. A low fillfactor keeps the constant re-writes of a row HOT updates. No foreign key to the
 * organizations table: a bucket row is disposable state (dropping one only refills that bucket).
 */
export const rateLimitTableStatements: ReadonlyArray<string> = [
  `CREATE TABLE IF NOT EXISTS rate_limit_buckets (
    organization_id uuid NOT NULL,
    bucket_key text NOT NULL,
    tokens double precision NOT NULL,
    updated_at_ms bigint NOT NULL,
    PRIMARY KEY (organization_id, bucket_key)
  ) WITH (fillfactor = 70)`
]

/** Creates the bucket table (idempotent); the same statements as `rateLimitTableStatements`. */
export const rateLimitMigration: Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of rateLimitTableStatements) yield* sql.unsafe(statement)
})

// Result columns are aliased to one-letter names so an application-wide `transformResultNames` cannot rename them.
interface BucketRow {
  readonly k: string
  readonly t: number
  readonly u: bigint | number | string
}

/** JavaScript code-unit order: the same in every process, which is all deadlock freedom needs. */
const byKey = (a: KeyedBucket, b: KeyedBucket): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

export const makePgRateLimitStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const charge = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, cost: number, nowMs: number) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET TRANSACTION ISOLATION LEVEL READ COMMITTED`
      const sorted = [...buckets].sort(byKey)
      const fullRows = sql.join(", ", false)(
        sorted.map((b) =>
          sql`(${organizationId}::uuid, ${b.key}::text, ${b.spec.ceiling}::float8, ${Math.floor(nowMs)}::bigint)`
        )
      )
      yield* sql`
        INSERT INTO rate_limit_buckets (organization_id, bucket_key, tokens, updated_at_ms)
        VALUES ${fullRows}
        ON CONFLICT (organization_id, bucket_key) DO UPDATE SET tokens = rate_limit_buckets.tokens WHERE false`
      const rows = yield* sql<BucketRow>`
        SELECT bucket_key AS k, tokens AS t, updated_at_ms AS u
        FROM rate_limit_buckets
        WHERE organization_id = ${organizationId}::uuid AND bucket_key IN ${sql.in(buckets.map((b) => b.key))}`
      const byBucket = new Map<string, BucketState>(
        rows.map((r) => [r.k, { tokens: Number(r.t), updatedAtMs: Number(r.u) }])
      )
      const result = spendBuckets(
        buckets.map((b) => ({ state: byBucket.get(b.key), spec: b.spec })),
        cost,
        nowMs
      )
      if (result._tag === "Admitted") {
        const newRows = sql.join(", ", false)(
          buckets.map((b, i) => {
            const s = result.states[i]!
            return sql`(${b.key}::text, ${s.tokens}::float8, ${s.updatedAtMs}::bigint)`
          })
        )
        yield* sql`
          UPDATE rate_limit_buckets AS b SET tokens = v.t, updated_at_ms = v.u
          FROM (VALUES ${newRows}) AS v(k, t, u)
          WHERE b.organization_id = ${organizationId}::uuid AND b.bucket_key = v.k`
      }
      return toSpendDecision(buckets, result, cost)
    }))

  const spend = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, cost: number) =>
    Effect.gen(function*() {
      assertBuckets(buckets)
      const nowMs = yield* Clock.currentTimeMillis
      return yield* charge(organizationId, buckets, cost, nowMs).pipe(
        Effect.retry({ times: 3, while: (e) => e.isRetryable }),
        Effect.orDie
      )
    })

  return RateLimitStore.of({ spend })
})

export const PgRateLimitStore: Layer.Layer<RateLimitStore, never, SqlClient.SqlClient> = Layer.effect(
  RateLimitStore,
  makePgRateLimitStore
)
