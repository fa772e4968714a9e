/**
 * A wall clock that stands still until the test moves it, for the time-dependent rules of the in-process server
 * (rate-limit refill, timestamps). Sleeps and monotonic time stay live, so connection pools and timeouts inside the
 * server behave normally; only "what time is it" is frozen. Pass it as `clock` to `makeTestServer`.
 *
 * Effect's TestClock also freezes sleeps, which would stall anything in the request path that waits (a pool's
 * connection acquisition, for one) until the test advanced it.
 */
import { Clock, Duration, Effect } from "effect"

export interface ManualClock extends Clock.Clock {
  /** Moves the wall clock forward (or back, for skew tests). */
  readonly advance: (duration: Duration.Input) => void
  readonly set: (epochMillis: number) => void
}

/** Starts at `startMillis` (a fixed instant, so assertions on computed waits are exact). */
export const makeManualClock = (startMillis = Date.UTC(2026, 0, 1)): ManualClock => {
  let now = startMillis
  const live = Clock.Clock.defaultValue()
  return {
    currentTimeMillisUnsafe: () => now,
    currentTimeMillis: Effect.sync(() => now),
    currentTimeNanosUnsafe: () => BigInt(now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: live.monotonicTimeNanos,
    sleep: (duration) => live.sleep(duration),
    advance: (duration) => {
      now += Duration.toMillis(Duration.fromInputUnsafe(duration))
    },
    set: (epochMillis) => {
      now = epochMillis
    }
  }
}
