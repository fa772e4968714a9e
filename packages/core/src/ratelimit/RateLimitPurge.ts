/**
 * Drops storefront rate-limit buckets idle long enough to be full again (docs/DECISIONS.md §61): one bucket per
 * publishable key and client address would otherwise pile up with every address that ever called. A dropped bucket is
 * full, the same as the bucket it was, so no decision changes.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { RateLimitRepository } from "./RateLimitRepository.ts"

const PURGE_BATCH = 5_000

/** One pass: batches until fewer than a batch are left; answers how many buckets were dropped. */
export const purgeIdleRateLimitBuckets = Effect.gen(function*() {
  const store = yield* RateLimitRepository
  if (store.purgeIdle === undefined) return 0
  let total = 0
  for (;;) {
    const purged = yield* store.purgeIdle(yield* Clock.currentTimeMillis, PURGE_BATCH)
    total += purged
    if (purged < PURGE_BATCH) return total
    yield* Effect.sleep(Duration.millis(100))
  }
})

/** Runs a pass now and then every `every` (ten minutes by default); a failed pass is logged and retried next time. */
export const rateLimitPurgeJob = (every: Duration.Input = Duration.minutes(10)) =>
  purgeIdleRateLimitBuckets.pipe(
    Effect.catchCause((cause) => Effect.logWarning("rate-limit bucket purge failed", cause)),
    Effect.repeat(Schedule.spaced(every))
  )
