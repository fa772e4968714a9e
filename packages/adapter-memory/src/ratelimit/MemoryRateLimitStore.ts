/**
 * In-memory `RateLimitStore`. Exact under concurrent fibers: the read of the levels, the decision and the write of
 * the new levels happen in one synchronous block, which no other fiber can interleave with.
 */
import { Clock, Effect, Layer } from "effect"
import { assertBuckets, RateLimitStore, toSpendDecision } from "@feedback/core"
import type { KeyedBucket } from "@feedback/core"
import { TokenBucket } from "@feedback/core"
type BucketState = TokenBucket.BucketState
const spendBuckets = TokenBucket.spend

/** A fresh, empty store (every bucket full). */
export const makeMemoryRateLimitStore: Effect.Effect<RateLimitStore["Service"]> = Effect.sync(() => {
  // organization id -> bucket key -> level. A missing entry is a full bucket.
  const levels = new Map<string, Map<string, BucketState>>()

  const spend = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, cost: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
      Effect.sync(() => {
        assertBuckets(buckets)
        const org = levels.get(organizationId)
        const result = spendBuckets(
          buckets.map((b) => ({ state: org?.get(b.key), spec: b.spec })),
          cost,
          nowMs
        )
        if (result._tag === "Admitted") {
          const target = org ?? new Map<string, BucketState>()
          if (org === undefined) levels.set(organizationId, target)
          buckets.forEach((b, i) => target.set(b.key, result.states[i]!))
        }
        return toSpendDecision(buckets, result, cost)
      }))

  return RateLimitStore.of({ spend })
})

export const MemoryRateLimitStore: Layer.Layer<RateLimitStore> = Layer.effect(RateLimitStore, makeMemoryRateLimitStore)
