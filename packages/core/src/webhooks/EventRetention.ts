/**
 * Retention of the event feed (docs/DECISIONS.md §17): events are kept at least 30 days, then purged by a bounded
 * background job (batches of `PURGE_BATCH`, a pause between them), so the outbox does not grow without end and no
 * purge ever holds a long lock. An event still waiting for its deliveries is never purged.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { EventOutbox } from "../kernel/EventOutbox.ts"
import { fromMillis } from "../kernel/Timestamp.ts"

export const MIN_EVENT_RETENTION_DAYS = 30
const PURGE_BATCH = 1_000
const DAY_MS = 86_400_000

/** One pass: purges what is older than the retention, batch by batch, until a batch comes back short. */
const purgeExpiredEvents = (retentionDays: number) =>
  Effect.gen(function*() {
    const outbox = yield* EventOutbox
    const before = fromMillis(
      (yield* Clock.currentTimeMillis) - Math.max(retentionDays, MIN_EVENT_RETENTION_DAYS) * DAY_MS
    )
    let total = 0
    for (;;) {
      const purged = yield* outbox.purge(before, PURGE_BATCH)
      total += purged
      if (purged < PURGE_BATCH) return total
      yield* Effect.sleep(Duration.millis(100))
    }
  })

/** Runs a pass now and then every `every` (an hour by default); a failed pass is logged and retried next time. */
export const eventRetentionJob = (retentionDays: number, every: Duration.Input = Duration.hours(1)) =>
  purgeExpiredEvents(retentionDays).pipe(
    Effect.catchCause((cause) => Effect.logWarning("event retention pass failed", cause)),
    Effect.repeat(Schedule.spaced(every))
  )
