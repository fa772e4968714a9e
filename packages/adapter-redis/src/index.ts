/**
 * `@feedback/adapter-redis`: the optional scale-out `RateLimitRepository` on Redis (docs/DECISIONS.md §3, §22).
 * Every other store service stays with the memory or PostgreSQL adapter; this layer replaces only the limiter.
 */
export * as RedisRateLimitRepository from "./RedisRateLimitStore.ts"
