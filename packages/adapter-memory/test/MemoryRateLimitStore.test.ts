import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { MemoryRateLimitStore } from "../src/MemoryRateLimitStore.ts"
import { RateLimitStore, type SpendDecision, tooManyRequests } from "@feedback/core"
import { bucketsFor } from "@feedback/core"

const ORG_A = "0190a000-0000-7000-8000-00000000000a"
const ORG_B = "0190a000-0000-7000-8000-00000000000b"
const plan = { apiRequestsPerMinute: 600 }
const reviews = bucketsFor("GET", "/reviews", plan)
const history = bucketsFor("POST", "/loyalty-history", plan) // org 600 + its own 30 burst at 1/s; cost 10

const admitted = (ds: ReadonlyArray<SpendDecision>) => ds.filter((d) => d._tag === "Admitted")

const concurrently = <A>(n: number, f: () => Effect.Effect<A>) =>
  Effect.all(Array.from({ length: n }, f), { concurrency: "unbounded" })

describe("MemoryRateLimitStore", () => {
  it.effect("2000 concurrent cost-1 spends at one instant admit exactly 600", () =>
    Effect.gen(function*() {
      const store = yield* RateLimitStore
      const ds = yield* concurrently(2000, () => store.spend(ORG_A, reviews, 1))
      const ok = admitted(ds)
      assert.strictEqual(ok.length, 600)
      // Each admission saw its own level: the remaining counts are exactly 599..0, once each.
      assert.deepStrictEqual(ok.map((d) => d.remaining).sort((a, b) => a - b), Array.from({ length: 600 }, (_, i) => i))
      for (const d of ds) {
        assert.strictEqual(d.limit, 600)
        if (d._tag === "Refused") {
          assert.strictEqual(d.retryAfterSeconds, 1)
          assert.strictEqual(d.remaining, 0)
          assert.strictEqual(d.refusedBy, "org")
        }
      }
      // Refill is continuous: 10 tokens per second.
      yield* TestClock.adjust("1 second")
      assert.strictEqual(admitted(yield* concurrently(50, () => store.spend(ORG_A, reviews, 1))).length, 10)
      // A full minute refills the whole ceiling, and no more.
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(admitted(yield* concurrently(700, () => store.spend(ORG_A, reviews, 1))).length, 600)
    }).pipe(Effect.provide(MemoryRateLimitStore)))

  it.effect("two buckets are charged atomically under concurrency: refusals charge neither", () =>
    Effect.gen(function*() {
      const store = yield* RateLimitStore
      const ds = yield* concurrently(100, () => store.spend(ORG_A, history, 10))
      // The 30-token endpoint bucket admits 3 requests of cost 10; the organization bucket paid for exactly those.
      assert.strictEqual(admitted(ds).length, 3)
      const refused = ds.filter((d) => d._tag === "Refused")
      for (const d of refused) {
        assert.strictEqual(d.refusedBy, "POST /loyalty-history")
        assert.strictEqual(d.retryAfterSeconds, 10) // 10 tokens at 1 per second
        assert.strictEqual(d.remaining, 570)
      }
      const next = yield* store.spend(ORG_A, reviews, 1)
      assert.deepInclude(next, { _tag: "Admitted", remaining: 569 })
      // After 10 s the endpoint bucket affords one more, exactly.
      yield* TestClock.adjust("9999 millis")
      assert.strictEqual((yield* store.spend(ORG_A, history, 10))._tag, "Refused")
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* store.spend(ORG_A, history, 10))._tag, "Admitted")
    }).pipe(Effect.provide(MemoryRateLimitStore)))

  it.effect("organizations have separate buckets", () =>
    Effect.gen(function*() {
      const store = yield* RateLimitStore
      yield* concurrently(600, () => store.spend(ORG_A, reviews, 1))
      assert.strictEqual((yield* store.spend(ORG_A, reviews, 1))._tag, "Refused")
      assert.deepInclude(yield* store.spend(ORG_B, reviews, 1), { _tag: "Admitted", remaining: 599 })
    }).pipe(Effect.provide(MemoryRateLimitStore)))

  it.effect("a cost above the ceiling is refused without Retry-After and charges nothing", () =>
    Effect.gen(function*() {
      const store = yield* RateLimitStore
      const small = bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 5 })
      const d = yield* store.spend(ORG_A, small, 10)
      assert.deepStrictEqual(d, {
        _tag: "Refused",
        cost: 10,
        limit: 5,
        remaining: 5,
        retryAfterSeconds: undefined,
        refusedBy: "org",
        refusedByCeiling: 5
      })
      if (d._tag !== "Refused") return
      const error = tooManyRequests(d)
      assert.strictEqual(error.retryAfterSeconds, undefined)
      assert.match(error.message, /can never be accepted/)
      assert.deepInclude(yield* store.spend(ORG_A, small, 1), { _tag: "Admitted", remaining: 4 })
    }).pipe(Effect.provide(MemoryRateLimitStore)))

  it.effect("a plan change takes effect on the next request", () =>
    Effect.gen(function*() {
      const store = yield* RateLimitStore
      assert.deepInclude(yield* store.spend(ORG_A, reviews, 1), { limit: 600, remaining: 599 })
      const lowered = bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 100 })
      assert.deepInclude(yield* store.spend(ORG_A, lowered, 1), { _tag: "Admitted", limit: 100, remaining: 99 })
      const raised = bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 1200 })
      assert.deepInclude(yield* store.spend(ORG_A, raised, 1), { _tag: "Admitted", limit: 1200, remaining: 98 })
      yield* TestClock.adjust("1 second") // 20 per second now
      assert.deepInclude(yield* store.spend(ORG_A, raised, 1), { _tag: "Admitted", remaining: 117 })
    }).pipe(Effect.provide(MemoryRateLimitStore)))

  it.effect("the 429 error carries the decision", () =>
    Effect.gen(function*() {
      const store = yield* RateLimitStore
      yield* concurrently(600, () => store.spend(ORG_A, reviews, 1))
      const d = yield* store.spend(ORG_A, reviews, 5)
      assert.strictEqual(d._tag, "Refused")
      if (d._tag !== "Refused") return
      const error = tooManyRequests(d)
      assert.strictEqual(error._tag, "TooManyRequests")
      assert.strictEqual(error.retryAfterSeconds, 1)
      assert.strictEqual(error.cost, 5)
      assert.strictEqual(error.limit, 600)
      assert.strictEqual(error.remaining, 0)
      assert.match(error.message, /retry after 1 second\./)
    }).pipe(Effect.provide(MemoryRateLimitStore)))
})
