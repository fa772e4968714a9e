/**
 * What only the PostgreSQL rate limit store can show: its table's key, exactness over a pool of several connections,
 * across processes (separate pools) and on a database whose default isolation is REPEATABLE READ. The behaviour every
 * store shares is the conformance suite's (`testing/src/ratelimit/RateLimitConformance.ts`, run on PGlite and the
 * server by `PgStore.conformance.test.ts`).
 *
 * Runs against a real PostgreSQL server (several connections are the point): set TEST_DATABASE_URL, e.g.
 * `postgres://postgres@127.0.0.1:5432/postgres`. Each run creates a fresh database on that server and drops it after.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { randomBytes, randomUUID } from "node:crypto"
import { PgRateLimitRepository, rateLimitMigration } from "../src/ratelimit/PgRateLimitStore.ts"
import { RateLimits } from "@feedback/core"
import { atTime } from "@feedback/testing"

const serverUrl = process.env["TEST_DATABASE_URL"] || undefined

const T = 1_763_000_000_000

const at = atTime

const concurrently = <A, E, R>(n: number, f: (i: number) => Effect.Effect<A, E, R>) =>
  Effect.all(Array.from({ length: n }, (_, i) => f(i)), { concurrency: "unbounded" })

const admittedCount = (ds: ReadonlyArray<RateLimits.SpendDecision>) => ds.filter((d) => d._tag === "Admitted").length

/** A client the way an application would configure one: a pool, and snake/camel name transforms. */
const clientLayer = (url: string, maxConnections: number) =>
  PgClient.layer({
    url: Redacted.make(url),
    maxConnections,
    transformResultNames: (s) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
    transformQueryNames: (s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
  })

/** A fresh database on the server for this file, dropped when the layer is released. */
const freshDatabase = (server: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const name = `rate_limit_test_${randomBytes(6).toString("hex")}`
      yield* Effect.scoped(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql.unsafe(`CREATE DATABASE ${name}`)
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(server), maxConnections: 1 })))
      )
      const u = new URL(server)
      u.pathname = `/${name}`
      return { name, url: u.toString() }
    }).pipe(Effect.orDie),
    ({ name }) =>
      Effect.scoped(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(server), maxConnections: 1 })))
      ).pipe(Effect.ignore)
  )

/**
 * The URL of this run's database, for tests that open a second pool (a second process). Such a pool is built with
 * `Layer.fresh`: `Layer.build` inside a test shares the suite's memo map, so a plain `PgRateLimitRepository` would be the
 * suite's own instance again, on the suite's pool.
 */
class DatabaseUrl extends Context.Service<DatabaseUrl, string>()("test/DatabaseUrl") {}

if (serverUrl === undefined) {
  describe("PgRateLimitRepository", () => {
    it.skip("skipped: TEST_DATABASE_URL is not set; these tests need a real PostgreSQL server (concurrent connections and separate pools)", () => {})
  })
} else {
  const server = serverUrl
  const TestLayer = Layer.unwrap(Effect.map(freshDatabase(server), ({ url }) => {
    const client = clientLayer(url, 4)
    const migrated = Layer.effectDiscard(Effect.andThen(rateLimitMigration, rateLimitMigration)) // idempotent
    return Layer.mergeAll(PgRateLimitRepository, migrated).pipe(
      Layer.provideMerge(client),
      Layer.provideMerge(Layer.succeed(DatabaseUrl, url))
    )
  }))

  layer(TestLayer, { timeout: 60_000, excludeTestServices: true })("PgRateLimitRepository", (it) => {
    it.effect("the table's primary key is (organization_id, bucket_key)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ col: string }>`
          SELECT a.attname AS col
          FROM pg_index i
          JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
          WHERE i.indrelid = 'rate_limit_buckets'::regclass AND i.indisprimary
          ORDER BY k.ord`
        assert.deepStrictEqual(rows.map((r) => r.col), ["organization_id", "bucket_key"])
      }))

    it.effect("many concurrent spends over a pool of 4 connections admit exactly the ceiling", () =>
      Effect.gen(function*() {
        const store = yield* RateLimits.RateLimitRepository
        const org = randomUUID()
        const buckets = RateLimits.bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 100 })
        const ds = yield* concurrently(400, () => store.spend(org, buckets, 1).pipe(at(T)))
        assert.strictEqual(admittedCount(ds), 100)
        const remaining = ds.filter((d) => d._tag === "Admitted").map((d) => d.remaining).sort((a, b) => a - b)
        assert.deepStrictEqual(remaining, Array.from({ length: 100 }, (_, i) => i))
        for (const d of ds) if (d._tag === "Refused") assert.strictEqual(d.retryAfterSeconds, 1) // 1 token at 100/min: 0.6 s
        // Refill continues from the stored level: 600 ms later exactly one more token.
        assert.strictEqual((yield* store.spend(org, buckets, 1).pipe(at(T + 599)))._tag, "Refused")
        assert.strictEqual((yield* store.spend(org, buckets, 1).pipe(at(T + 600)))._tag, "Admitted")
      }))

    it.effect("two processes (separate pools) sharing the database admit exactly the ceiling together", () =>
      Effect.gen(function*() {
        const storeA = yield* RateLimits.RateLimitRepository
        const url = yield* DatabaseUrl
        const context = yield* Layer.build(Layer.fresh(PgRateLimitRepository).pipe(Layer.provide(clientLayer(url, 4))))
        const storeB = Context.get(context, RateLimits.RateLimitRepository)
        const org = randomUUID()
        const buckets = RateLimits.bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 150 })
        const ds = yield* concurrently(600, (i) => (i % 2 === 0 ? storeA : storeB).spend(org, buckets, 1).pipe(at(T)))
        assert.strictEqual(admittedCount(ds), 150)
        // A process whose clock lags mints nothing: it waits for the credited time, then for the refill.
        const lagging = yield* storeB.spend(org, buckets, 1).pipe(at(T - 5_000))
        assert.deepInclude(lagging, { _tag: "Refused", remaining: 0, retryAfterSeconds: 6 }) // 5 s + 0.4 s
      }))

    it.effect("on a database whose default isolation is REPEATABLE READ, concurrent spends stay exact and never fail", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const url = yield* DatabaseUrl
        const name = new URL(url).pathname.slice(1)
        yield* sql.unsafe(`ALTER DATABASE ${name} SET default_transaction_isolation = 'repeatable read'`)
        try {
          // A new pool: its connections start with the altered default.
          const context = yield* Layer.build(
            Layer.fresh(PgRateLimitRepository).pipe(Layer.provide(clientLayer(url, 4)))
          )
          const store = Context.get(context, RateLimits.RateLimitRepository)
          const org = randomUUID()
          const buckets = RateLimits.bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 100 })
          const ds = yield* concurrently(300, () => store.spend(org, buckets, 1).pipe(at(T)))
          assert.strictEqual(admittedCount(ds), 100)
        } finally {
          yield* sql.unsafe(`ALTER DATABASE ${name} RESET default_transaction_isolation`)
        }
      }))
  })
}
