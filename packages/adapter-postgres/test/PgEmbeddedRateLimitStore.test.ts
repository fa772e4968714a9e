/**
 * The embedded limiter's promises beyond the conformance suite: levels survive a clean restart exactly, and after a
 * crash (the previous session never ended) every bucket starts empty, so nothing spent before the crash is spent
 * again. Always on embedded PGlite: that is the only database this store runs on.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { RateLimits } from "@feedback/core"
import { atTime } from "@feedback/testing"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { PgStoreLayer } from "../src/PgStore.ts"
import { makeEmbeddedRateLimitRepository } from "../src/ratelimit/PgEmbeddedRateLimitStore.ts"

const T = 1_763_000_000_000
// 60 a minute: one token a second.
const buckets = RateLimits.bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 60 })

const spendAt = (ms: number, organizationId: string) =>
  atTime(ms)(RateLimits.RateLimitRepository.use((s) => s.spend(organizationId, buckets, 1)))

const tags = (ds: ReadonlyArray<RateLimits.SpendDecision>) => ds.map((d) => d._tag)

/** Runs `f` on a store over `dataDir`, then stops it cleanly (every layer finalizer runs). */
const withStore = <A, E>(
  dataDir: string,
  f: Effect.Effect<A, E, RateLimits.RateLimitRepository | SqlClient.SqlClient>
) =>
  Effect.scoped(
    Layer.build(PgStoreLayer({ _tag: "Embedded", dataDir })).pipe(
      Effect.flatMap((context) => Effect.provide(f, context))
    )
  )

const dataDirs: Array<string> = []
const freshDir = () => {
  const dir = mkdtempSync(Path.join(tmpdir(), "fb-embedded-limiter-"))
  dataDirs.push(dir)
  return dir
}

describe("PgEmbeddedRateLimitRepository", () => {
  afterAll(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

  it.effect("a clean restart keeps every level exactly", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const org = randomUUID()
      const before = yield* withStore(dir, Effect.forEach(Array.from({ length: 61 }), () => spendAt(T, org)))
      assert.deepStrictEqual(tags(before).filter((t) => t === "Admitted").length, 60)
      assert.strictEqual(before[60]!._tag, "Refused")

      const after = yield* withStore(
        dir,
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const sessions = yield* sql`SELECT 1 FROM rate_limit_embedded_sessions`
          assert.strictEqual(sessions.length, 1) // this run's own
          return [yield* spendAt(T + 500, org), yield* spendAt(T + 1_000, org), yield* spendAt(T + 1_000, org)]
        })
      )
      assert.deepStrictEqual(tags(after), ["Refused", "Admitted", "Refused"])
      // A stranger's bucket is still full after the restart.
      const stranger = yield* withStore(dir, spendAt(T + 1_000, randomUUID()))
      assert.strictEqual(stranger._tag, "Admitted")
      assert.strictEqual(stranger.remaining, 59)
    }), { timeout: 60_000 })

  it.effect("after a crash every bucket starts empty, then refills", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const org = randomUUID()
      yield* withStore(
        dir,
        Effect.gen(function*() {
          // This layer's store is the "crashed" run: its session row is never removed while a second store starts.
          yield* spendAt(T, org)
          const restarted = yield* Scope.make()
          const second = yield* atTime(T + 10_000)(makeEmbeddedRateLimitRepository).pipe(Scope.provide(restarted))
          const spend = (ms: number, o: string) => atTime(ms)(second.spend(o, buckets, 1))
          const atRestart = [yield* spend(T + 10_000, org), yield* spend(T + 10_000, randomUUID())]
          assert.deepStrictEqual(tags(atRestart), ["Refused", "Refused"])
          assert.strictEqual(
            (atRestart[0] as Extract<RateLimits.SpendDecision, { _tag: "Refused" }>).retryAfterSeconds,
            1
          )
          const sql = yield* SqlClient.SqlClient
          assert.strictEqual((yield* sql`SELECT 1 FROM rate_limit_buckets`).length, 0) // untrusted levels are gone
          assert.deepStrictEqual(tags([yield* spend(T + 11_000, org), yield* spend(T + 11_000, org)]), [
            "Admitted",
            "Refused"
          ])
          yield* Scope.close(restarted, Exit.void)
        })
      )
    }), { timeout: 60_000 })
})
