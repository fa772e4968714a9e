/**
 * The Redis rate-limit store: the rate-limit conformance suite (the same one memory and PostgreSQL pass, here with
 * every other store service in memory), and the Lua script checked against `TokenBucket` on random stored levels,
 * specs, costs and times — levels above a lowered ceiling, clocks behind the stored credit time, two buckets,
 * missing buckets — with the levels written exactly `TokenBucket`'s and a refusal writing nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, RateLimits } from "@feedback/core"
import { atTime, ConformanceDns, conformanceSuites, spendScenarioArbitrary, withoutStates } from "@feedback/testing"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { MemoryStoreTestKit } from "@feedback/adapter-memory/testing"
import { Effect, Layer } from "effect"
import * as Redis from "effect/persistence/Redis"
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import { RedisRateLimitRepository } from "../src/index.ts"
import { describeWithRedis, redisUrl } from "./TestRedis.ts"

const T0 = 1_763_000_000_000

const prefix = `test:${randomUUID()}:`

/** A Redis client and the store over it, sharing one throwaway (or configured) server. */
const redisLayer = Layer.unwrap(Effect.map(redisUrl, (url) => NodeRedis.layer({ url }))).pipe(Layer.orDie)
const storeOverRedis = RedisRateLimitRepository.layerRedis({ keyPrefix: prefix }).pipe(Layer.provideMerge(redisLayer))

const scenario = spendScenarioArbitrary(T0)

const keyOf = (org: string, bucket: string) => `${prefix}{${org}}:${bucket}`

describeWithRedis("Redis rate-limit store", () => {
  // The conformance suite with the Redis limiter replacing the memory store's (merged last, it wins).
  const store = Layer.mergeAll(
    MemoryStoreTestKit.pipe(Layer.provideMerge(MemoryStoreLayer)),
    Kernel.IdGenerator.uuidV7,
    ConformanceDns,
    storeOverRedis
  )
  const suite = conformanceSuites.find(([name]) => name === "rate limit")
  if (suite === undefined) throw new Error("the core's conformance kit has no rate limit suite")
  suite[1](store)

  layer(storeOverRedis, { timeout: 120_000, excludeTestServices: true })(
    "the Lua script agrees with TokenBucket",
    (it) => {
      it.effect("on random states, specs, costs and times", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimits.RateLimitRepository
          const redis = yield* Redis.Redis
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(scenario, ({ buckets, cost, now, states }) =>
                Effect.runPromise(Effect.gen(function*() {
                  const org = randomUUID()
                  const seeded = buckets.map((b, i) => {
                    const s = states[i]
                    return s === undefined ? undefined : { units: s.units, updatedAtMs: now + s.offset }
                  })
                  for (const [i, s] of seeded.entries()) {
                    if (s === undefined) continue
                    yield* redis.send(
                      "HSET",
                      keyOf(org, buckets[i]!.key),
                      "u",
                      String(s.units),
                      "t",
                      String(s.updatedAtMs)
                    ).pipe(Effect.orDie)
                  }
                  const asStates = seeded.map((s) =>
                    s === undefined
                      ? undefined
                      : { tokens: s.units / RateLimits.TokenBucket.UNITS_PER_TOKEN, updatedAtMs: s.updatedAtMs }
                  )
                  const expected = RateLimits.TokenBucket.spend(
                    buckets.map((b, i) => ({ state: asStates[i], spec: b.spec })),
                    cost,
                    now
                  )
                  const decision = yield* limiter.spend(org, buckets, cost).pipe(atTime(now))
                  // `states` is the levels each read (PostgreSQL reads a missing bucket as created full): compared as levels below.
                  assert.deepStrictEqual(
                    withoutStates(decision),
                    withoutStates(RateLimits.toSpendDecision(buckets, expected, cost))
                  )
                  for (const [i, b] of buckets.entries()) {
                    const [u, t] = yield* redis.send<Array<string | null>>("HMGET", keyOf(org, b.key), "u", "t").pipe(
                      Effect.orDie
                    )
                    const stored = u === null || u === undefined
                      ? undefined
                      : { tokens: Number(u) / RateLimits.TokenBucket.UNITS_PER_TOKEN, updatedAtMs: Number(t) }
                    // Admitted: exactly TokenBucket's new level. Refused: as seeded (a missing bucket stays missing).
                    assert.deepStrictEqual(
                      stored,
                      expected._tag === "Admitted" ? expected.states[i] : asStates[i],
                      `bucket ${b.key}`
                    )
                  }
                }))),
              { numRuns: 300 }
            )
          )
        }))

      it.effect("a charged bucket expires once it would have refilled; an untouched one is never written", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimits.RateLimitRepository
          const redis = yield* Redis.Redis
          const org = randomUUID()
          const buckets = RateLimits.bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 60 }) // 1 token per second
          yield* limiter.spend(org, buckets, 30).pipe(atTime(T0))
          const ttl = yield* redis.send<number>("PTTL", keyOf(org, buckets[0]!.key)).pipe(Effect.orDie)
          // 30 tokens missing refill in 30 s; the key outlives that by a minute, and no longer.
          assert.isTrue(ttl > 85_000 && ttl <= 90_000, `PTTL ${ttl}`)
          const refused = yield* limiter.spend(org, buckets, 61).pipe(atTime(T0))
          assert.strictEqual(refused._tag, "Refused")
          assert.strictEqual(
            yield* redis.send<number>("EXISTS", keyOf(randomUUID(), buckets[0]!.key)).pipe(Effect.orDie),
            0
          )
        }))
    }
  )
})
