/**
 * `spendThenRead`: a pure read may start while its spend is in flight, but the answer is always the one the
 * decision allows — a refusal's answer with the read interrupted and its outcome discarded, never the read's.
 */
import { assert, describe, it } from "@effect/vitest"
import type { RateLimits } from "@feedback/core"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { spendThenRead } from "../src/server/ReadAlongsideSpend.ts"

const admitted: RateLimits.SpendDecision = { _tag: "Admitted", cost: 1, limit: 10, remaining: 9, fullInSeconds: 6 }
const refused = {
  _tag: "Refused",
  cost: 1,
  limit: 10,
  remaining: 0,
  fullInSeconds: 60,
  retryAfterSeconds: 6
} as unknown as RateLimits.SpendDecision

const admit = (decision: RateLimits.SpendDecision) =>
  Effect.succeed(decision._tag === "Refused" ? "429" as const : undefined)

/** A spend that answers only when released, and a read that records that it started and how it ended. */
const harness = (key: string) =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<RateLimits.SpendDecision>()
    const log: Array<string> = []
    const read = (outcome: Effect.Effect<string, string>) =>
      Effect.sync(() => log.push("read started")).pipe(
        Effect.andThen(outcome),
        Effect.onInterrupt(() => Effect.sync(() => log.push("read interrupted")))
      )
    const run = (outcome: Effect.Effect<string, string>) =>
      Effect.forkChild(spendThenRead(key, Deferred.await(release), admit, read(outcome)), { startImmediately: true })
    return { release, log, run }
  })

describe("spendThenRead", () => {
  it.effect("a listed read starts while the spend is in flight and answers once admitted", () =>
    Effect.gen(function*() {
      const h = yield* harness("GET /reviews")
      const fiber = yield* h.run(Effect.succeed("page"))
      assert.deepStrictEqual(h.log, ["read started"])
      assert.isUndefined(fiber.pollUnsafe())
      yield* Deferred.succeed(h.release, admitted)
      assert.strictEqual(yield* Fiber.join(fiber), "page")
    }))

  it.effect("a refusal answers the refusal, whether the read succeeded, failed or is still running", () =>
    Effect.gen(function*() {
      for (const outcome of [Effect.succeed("page"), Effect.fail("NotFound"), Effect.never]) {
        const h = yield* harness("GET /reviews/{id}")
        const fiber = yield* h.run(outcome)
        yield* Effect.yieldNow
        yield* Deferred.succeed(h.release, refused)
        assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.succeed("429"))
        assert.deepStrictEqual(
          h.log,
          outcome === Effect.never ? ["read started", "read interrupted"] : ["read started"]
        )
      }
    }))

  it.effect("an error of an admitted read is the answer", () =>
    Effect.gen(function*() {
      const h = yield* harness("GET /reviews")
      const fiber = yield* h.run(Effect.fail("Forbidden"))
      yield* Deferred.succeed(h.release, admitted)
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail("Forbidden"))
    }))

  it.effect("an unlisted endpoint reads only after it is admitted, and not at all when refused", () =>
    Effect.gen(function*() {
      const h = yield* harness("POST /reviews/import")
      const fiber = yield* h.run(Effect.succeed("done"))
      yield* Effect.yieldNow
      assert.deepStrictEqual(h.log, [])
      yield* Deferred.succeed(h.release, refused)
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.succeed("429"))
      assert.deepStrictEqual(h.log, [])
    }))

  it.effect("a spend that answers at once runs alone: a refusal never starts the read", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const read = Effect.sync(() => log.push("read started")).pipe(Effect.as("page"))
      assert.strictEqual(yield* spendThenRead("GET /reviews", Effect.succeed(refused), admit, read), "429")
      assert.deepStrictEqual(log, [])
      assert.strictEqual(yield* spendThenRead("GET /reviews", Effect.succeed(admitted), admit, read), "page")
      assert.deepStrictEqual(log, ["read started"])
    }))
})
