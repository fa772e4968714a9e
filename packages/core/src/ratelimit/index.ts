/**
 * The `RateLimits` namespace of `@feedback/core`: what the ratelimit capability offers hosts and adapters.
 */
export * as BucketLevels from "./BucketLevels.ts"
export * as LocalRefusals from "./LocalRefusals.ts"
export * as TokenBucket from "./TokenBucket.ts"
export * from "./RateLimitMetrics.ts"
export * from "./RateLimitPurge.ts"
export * from "./RateLimitRepository.ts"
export * from "./RateLimitTable.ts"
export * from "./RateLimits.ts"
