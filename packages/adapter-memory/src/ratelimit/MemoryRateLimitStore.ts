/**
 * In-memory `RateLimitRepository`: the process's `BucketLevels`, exact under concurrent fibers (a spend reads, decides and
 * writes in one synchronous block).
 */
import { Clock, Effect, Layer } from "effect"
import { BucketLevels, isIdleStorefrontBucket, RateLimitRepository } from "@feedback/core"

/** A fresh, empty store (every bucket full). */
export const makeMemoryRateLimitRepository: Effect.Effect<RateLimitRepository["Service"]> = Effect.sync(() => {
  const levels = BucketLevels.make()
  return RateLimitRepository.of({
    spend: (organizationId, buckets, cost) =>
      Effect.map(Clock.currentTimeMillis, (nowMs) => levels.spend(organizationId, buckets, cost, nowMs)),
    refusalAt: levels.refusal,
    decidesInProcess: true,
    purgeIdle: (nowMs, limit) =>
      Effect.sync(() => levels.forget((key, state) => isIdleStorefrontBucket(key, state.updatedAtMs, nowMs), limit))
  })
})

export const MemoryRateLimitRepository: Layer.Layer<RateLimitRepository> = Layer.effect(
  RateLimitRepository,
  makeMemoryRateLimitRepository
)
