/**
 * The PostgreSQL store decides in the database (`rate_limit_spend`, one round trip) with `TokenBucket`'s integer
 * arithmetic written in SQL. This checks the two agree on random stored states, specs, costs and times — including
 * levels above a lowered ceiling, clocks behind the stored credit time, two buckets, and missing rows — on the
 * same database kind as the rest of the suite (a server with TEST_DATABASE_URL, else embedded PGlite).
 *
 * Agreement means: the same decision and headers (`toSpendDecision` of `TokenBucket.spend`), the rows written
 * exactly `TokenBucket`'s new states when admitted, and untouched when refused. (The store itself also dies when
 * the database and `TokenBucket` disagree; this test makes them meet on inputs chosen to be awkward.)
 *
 * The store under test is the one that calls `rate_limit_spend` (`PgRateLimitRepository`), on either kind: the
 * embedded store layer decides in the process instead (`PgEmbeddedRateLimitRepository`) and writes no row per spend, so
 * read through `PgStoreLayer` on PGlite this compared the function with nothing (every seed failed on its first run).
 */
import { assert, layer } from "@effect/vitest"
import { RateLimits } from "@feedback/core"
import { atTime, spendScenarioArbitrary, withoutStates } from "@feedback/testing"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import { PgStoreLayer } from "../src/PgStore.ts"
import { PgRateLimitRepository } from "../src/ratelimit/PgRateLimitStore.ts"
import { freshLayer, serverUrl, storeName } from "./TestDatabase.ts"

const T0 = 1_763_000_000_000

const scenario = spendScenarioArbitrary(T0)

layer(freshLayer(PgStoreLayer), { timeout: 120_000, excludeTestServices: true })(
  `rate_limit_spend agrees with TokenBucket (${storeName})`,
  (it) => {
    it.effect("on random states, specs, costs and times", () =>
      Effect.gen(function*() {
        // Each scenario is a new organization, so no refusal is known locally: every spend calls the function.
        const store = yield* Effect.service(RateLimits.RateLimitRepository).pipe(Effect.provide(PgRateLimitRepository))
        const sql = yield* SqlClient.SqlClient
        const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(scenario, ({ buckets, cost, now, states }) =>
              run(Effect.gen(function*() {
                const org = randomUUID()
                const seeded = buckets.map((b, i) => {
                  const s = states[i]
                  return s === undefined
                    ? undefined
                    : { tokens: s.units / RateLimits.TokenBucket.UNITS_PER_TOKEN, updatedAtMs: now + s.offset }
                })
                for (const [i, s] of seeded.entries()) {
                  if (s === undefined) continue
                  yield* sql`INSERT INTO rate_limit_buckets (organization_id, bucket_key, tokens, updated_at_ms)
                  VALUES (${org}::uuid, ${buckets[i]!.key}, ${s.tokens}::float8, ${s.updatedAtMs}::bigint)`.pipe(
                    Effect.orDie
                  )
                }
                const expected = RateLimits.TokenBucket.spend(
                  buckets.map((b, i) => ({ state: seeded[i], spec: b.spec })),
                  cost,
                  now
                )
                const decision = yield* store.spend(org, buckets, cost).pipe(atTime(now))
                // `states` is the levels each read (PostgreSQL reads a missing bucket as created full): compared as levels below.
                assert.deepStrictEqual(
                  withoutStates(decision),
                  withoutStates(RateLimits.toSpendDecision(buckets, expected, cost))
                )
                const rows = yield* sql<{ k: string; t: number; u: string | number | bigint }>`
                SELECT bucket_key AS k, tokens AS t, updated_at_ms AS u FROM rate_limit_buckets
                WHERE organization_id = ${org}::uuid`.pipe(Effect.orDie)
                const stored = new Map(rows.map((r) => [r.k, { tokens: Number(r.t), updatedAtMs: Number(r.u) }]))
                buckets.forEach((b, i) => {
                  const want = expected._tag === "Admitted"
                    ? expected.states[i]
                    // Refused: seeded rows unchanged; missing rows were created full at `now` (a new bucket is full).
                    : seeded[i] ?? { tokens: b.spec.ceiling, updatedAtMs: now }
                  assert.deepStrictEqual(stored.get(b.key), want, `bucket ${b.key}`)
                })
              }))),
            {
              numRuns: serverUrl === undefined ? 150 : 400,
              // Found by seed 810305324: a new bucket of ceiling 1 charged nothing.
              examples: [[{
                buckets: [{ key: "org", spec: { ceiling: 1, refillPerSecond: 1 / 60 } }],
                states: [undefined],
                cost: 0,
                now: T0
              }]]
            }
          )
        )
      }))
  }
)
