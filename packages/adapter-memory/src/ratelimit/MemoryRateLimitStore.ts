/**
 * In-memory `RateLimitStore`: the process's `BucketLevels`, exact under concurrent fibers (a spend reads, decides and
 * writes in one synchronous block).
 */
import { Clock, Effect, Layer } from "effect"
import { BucketLevels, RateLimitStore } from "@feedback/core"

/** A fresh, empty store (every bucket full). */
export const makeMemoryRateLimitStore: Effect.Effect<RateLimitStore["Service"]> = Effect.sync(() => {
  const levels = BucketLevels.make()
  return RateLimitStore.of({
    spend: (organizationId, buckets, cost) =>
      Effect.map(Clock.currentTimeMillis, (nowMs) => levels.spend(organizationId, buckets, cost, nowMs)),
    refusalAt: levels.refusal,
    decidesInProcess: true
  })
})

export const MemoryRateLimitStore: Layer.Layer<RateLimitStore> = Layer.effect(RateLimitStore, makeMemoryRateLimitStore)
