/**
 * The `RateLimitRepository` of embedded PGlite. Only this process can open the database, so "shared across processes"
 * has nobody to share with: the levels live in the process (`BucketLevels`, the memory store's exact arithmetic) and
 * a spend costs what it costs on the memory store, instead of a statement through PGlite's single connection.
 *
 * Restarts keep the levels: a clean stop writes them to `rate_limit_buckets`, and the next start reads them back.
 * A crash cannot have written its last spends, so a start that finds the previous run did not stop cleanly (its
 * session row is still there) trusts no level and treats every bucket as empty at that moment: a few requests wait
 * for the refill (a tenth of a second for one token at 600 a minute), and nothing is ever admitted twice.
 */
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { RateLimits } from "@feedback/core"
import { orDie } from "../kernel/SqlErrors.ts"

/**
 * The running process's session: a row exists from start until a clean stop. Like `instance_secrets` this is not a
 * tenant table (it belongs to the installation, and only embedded databases use it).
 */
export const embeddedRateLimitSessionStatements: ReadonlyArray<string> = [
  `CREATE TABLE rate_limit_embedded_sessions (
    opened_at_ms bigint PRIMARY KEY
  )`
]

interface LevelRow {
  readonly o: string
  readonly k: string
  readonly t: number
  readonly u: bigint | number | string
}

export const makeEmbeddedRateLimitRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const startedAtMs = Math.floor(yield* Clock.currentTimeMillis)

  const levels = yield* sql.withTransaction(Effect.gen(function*() {
    const unclean =
      (yield* sql<{ o: string }>`SELECT opened_at_ms::text AS o FROM rate_limit_embedded_sessions`).length > 0
    yield* sql`DELETE FROM rate_limit_embedded_sessions`
    yield* sql`INSERT INTO rate_limit_embedded_sessions (opened_at_ms) VALUES (${startedAtMs})`
    if (unclean) {
      yield* sql`DELETE FROM rate_limit_buckets`
      return RateLimits.BucketLevels.make({ unknownLevel: { tokens: 0, updatedAtMs: startedAtMs } })
    }
    const known = RateLimits.BucketLevels.make()
    const rows = yield* sql<LevelRow>`
      SELECT organization_id::text AS o, bucket_key AS k, tokens AS t, updated_at_ms AS u FROM rate_limit_buckets`
    for (const r of rows) known.set(r.o, r.k, { tokens: Number(r.t), updatedAtMs: Number(r.u) })
    return known
  })).pipe(orDie)

  // The clean stop: every level and the end of the session, in one transaction.
  const save = Effect.gen(function*() {
    const payload = JSON.stringify(
      levels.entries().map(([o, k, s]: readonly [string, string, RateLimits.TokenBucket.BucketState]) => ({
        o,
        k,
        t: s.tokens,
        u: s.updatedAtMs
      }))
    )
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`DELETE FROM rate_limit_buckets`
      yield* sql`INSERT INTO rate_limit_buckets (organization_id, bucket_key, tokens, updated_at_ms)
        SELECT x.o, x.k, x.t, x.u FROM jsonb_to_recordset(${payload}::jsonb) AS x(o uuid, k text, t double precision, u bigint)`
      yield* sql`DELETE FROM rate_limit_embedded_sessions`
    }))
  })
  yield* Effect.addFinalizer(() =>
    save.pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("rate-limit levels not saved; the next start treats every bucket as empty", cause)
      )
    )
  )

  return RateLimits.RateLimitRepository.of({
    spend: (organizationId, buckets, cost) =>
      Effect.map(Clock.currentTimeMillis, (nowMs) => levels.spend(organizationId, buckets, cost, nowMs)),
    refusalAt: levels.refusal,
    decidesInProcess: true
  })
})

export const PgEmbeddedRateLimitRepository: Layer.Layer<RateLimits.RateLimitRepository, never, SqlClient.SqlClient> =
  Layer.effect(
    RateLimits.RateLimitRepository,
    makeEmbeddedRateLimitRepository
  )
