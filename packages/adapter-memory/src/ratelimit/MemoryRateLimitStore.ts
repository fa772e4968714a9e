/**
 * In-memory `RateLimitRepository`: the process's `BucketLevels`, exact under concurrent fibers (a spend reads, decides and
 * writes in one synchronous block).
 */
import { Clock, Effect, Layer } from "effect"
import { RateLimits, Storefront } from "@feedback/core"

/** A fresh, empty store (every bucket full). */
export const makeMemoryRateLimitRepository: Effect.Effect<RateLimits.RateLimitRepository["Service"]> = Effect.sync(
  () => {
    const levels = RateLimits.BucketLevels.make()
    return RateLimits.RateLimitRepository.of({
      spend: (organizationId, buckets, cost) =>
        Effect.map(Clock.currentTimeMillis, (nowMs) => levels.spend(organizationId, buckets, cost, nowMs)),
      refusalAt: levels.refusal,
      decidesInProcess: true,
      purgeIdle: (nowMs, limit) =>
        Effect.sync(() =>
          levels.forget((key, state) => Storefront.isIdleStorefrontBucket(key, state.updatedAtMs, nowMs), limit)
        )
    })
  }
)

export const MemoryRateLimitRepository: Layer.Layer<RateLimits.RateLimitRepository> = Layer.effect(
  RateLimits.RateLimitRepository,
  makeMemoryRateLimitRepository
)
