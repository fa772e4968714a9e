/**
 * TEST SUPPORT: random inputs for comparing a rate-limit store's own arithmetic (SQL, Lua) with `TokenBucket`:
 * bucket lists as the service builds them, stored levels (up to twice the ceiling: the plan may have been lowered;
 * credited before or after "now": clock skew), costs and times.
 */
import fc from "fast-check"
import { RateLimits } from "@feedback/core"

/** Bucket lists the service builds: plan rates, odd plan values, and the two-bucket loyalty endpoints. */
export const bucketListArbitrary: fc.Arbitrary<ReadonlyArray<RateLimits.KeyedBucket>> = fc
  .record({
    apiRequestsPerMinute: fc.oneof(
      fc.constantFrom(1, 7, 59, 60, 61, 600, 1_000_000),
      fc.integer({ min: 1, max: 5_000 })
    ),
    loyaltyEventsPerMinute: fc.option(fc.integer({ min: 1, max: 1_000 }), { nil: undefined }),
    endpoint: fc.constantFrom(["GET", "/reviews"], ["POST", "/loyalty-history"], ["POST", "/loyalty-events"], [
      "POST",
      "/loyalty-stamps"
    ])
  })
  .map(({ apiRequestsPerMinute, endpoint, loyaltyEventsPerMinute }) =>
    RateLimits.bucketsFor(endpoint[0], endpoint[1], { apiRequestsPerMinute, loyaltyEventsPerMinute })
  )

/** A stored level in units, credited `offset` ms from now (positive: after "now"), or none (a full bucket). */
export const storedStateArbitrary = (ceiling: number) =>
  fc.option(
    fc.record({
      units: fc.oneof(
        fc.integer({ min: 0, max: 2 * ceiling * RateLimits.TokenBucket.UNITS_PER_TOKEN }),
        fc.constantFrom(
          0,
          1,
          ceiling * RateLimits.TokenBucket.UNITS_PER_TOKEN - 1,
          ceiling * RateLimits.TokenBucket.UNITS_PER_TOKEN
        )
      ),
      offset: fc.integer({ min: -120_000, max: 5_000 })
    }),
    { nil: undefined }
  )

/** A spend to decide: the buckets, their stored levels, the cost and the time (`t0` + up to 10 s). */
export const spendScenarioArbitrary = (t0: number) =>
  bucketListArbitrary.chain((buckets) =>
    fc.record({
      buckets: fc.constant(buckets),
      states: fc.tuple(...buckets.map((b) => storedStateArbitrary(b.spec.ceiling))),
      cost: fc.oneof(fc.constantFrom(0, 1, 5, 10), fc.integer({ min: 0, max: (buckets[0]?.spec.ceiling ?? 1) + 2 })),
      now: fc.integer({ min: 0, max: 10_000 }).map((d) => t0 + d)
    })
  )

/**
 * Spends of a small plan (12 a minute: a token every 5 s; loyalty stamps 3 a minute) as `[buckets, cost]`, including
 * one never affordable, for sequences of spends that run into refusals and refills.
 */
const sequencePlan = { apiRequestsPerMinute: 12, loyaltyStampsPerMinute: 3 }
export const sequenceEndpoints: ReadonlyArray<readonly [ReadonlyArray<RateLimits.KeyedBucket>, number]> = [
  [RateLimits.bucketsFor("GET", "/reviews", sequencePlan), 1],
  [RateLimits.bucketsFor("POST", "/reviews/import", sequencePlan), 10],
  [RateLimits.bucketsFor("POST", "/loyalty-stamps", sequencePlan), 1],
  [RateLimits.bucketsFor("GET", "/reviews", sequencePlan), 13] // above the ceiling: never affordable
]

/** One step of such a sequence: `wait` ms pass, then organization `org` spends on `sequenceEndpoints[which]`. */
export const sequenceStepArbitrary = fc.record({
  wait: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1_000, max: 20_000 })),
  which: fc.integer({ min: 0, max: sequenceEndpoints.length - 1 }),
  org: fc.constantFrom("a", "b")
})

/** A decision without the levels it was made from (each store reports the levels it read in its own way). */
export const withoutStates = (d: RateLimits.SpendDecision) => {
  if (d._tag === "Admitted") return d
  const { states: _states, ...rest } = d
  return rest
}
