/**
 * TEST SUPPORT: the live clock, except that the time reads `ms`, so a decision's time (a token bucket's, a recorded
 * timestamp's) is known exactly. Sleeping and monotonic time stay live.
 */
import { Clock, Effect } from "effect"

export const atTime = (ms: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Clock.clockWith((live) =>
    Effect.provideService(effect, Clock.Clock, {
      currentTimeMillisUnsafe: () => ms,
      currentTimeMillis: Effect.succeed(ms),
      currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
      currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: live.monotonicTimeNanos,
      sleep: (d) => live.sleep(d)
    })
  )
