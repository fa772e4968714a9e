/**
 * `BucketLevels`, the levels of the memory and embedded stores: `refusal` tells, without writing, exactly the refusal
 * `spend` would answer at the same instant, and nothing when `spend` would admit. Checked on random sequences of
 * spends and time steps against a twin that is never asked in advance, so asking is also shown to change nothing.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { BucketLevels, bucketsFor, type KeyedBucket } from "../src/index.ts"

const plan = { apiRequestsPerMinute: 12, loyaltyStampsPerMinute: 3 }
const endpoints: ReadonlyArray<readonly [ReadonlyArray<KeyedBucket>, number]> = [
  [bucketsFor("GET", "/reviews", plan), 1],
  [bucketsFor("POST", "/reviews/import", plan), 10],
  [bucketsFor("POST", "/loyalty-stamps", plan), 1],
  [bucketsFor("GET", "/reviews", plan), 13] // above the ceiling: never affordable
]

const step = fc.record({
  wait: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1_000, max: 20_000 })),
  which: fc.integer({ min: 0, max: endpoints.length - 1 }),
  org: fc.constantFrom("a", "b"),
  ask: fc.boolean()
})

describe("BucketLevels.refusal", () => {
  it("is the refusal spend answers at that instant, undefined when it admits, and changes nothing", () => {
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 150 }), (steps) => {
      const asked = BucketLevels.make()
      const twin = BucketLevels.make()
      let now = 1_763_000_000_000
      for (const s of steps) {
        now += s.wait
        const [buckets, cost] = endpoints[s.which]!
        const told = s.ask ? asked.refusal(s.org, buckets, cost, now) : undefined
        const answered = asked.spend(s.org, buckets, cost, now)
        expect(answered).toEqual(twin.spend(s.org, buckets, cost, now))
        if (s.ask) expect(told).toEqual(answered._tag === "Refused" ? answered : undefined)
      }
      expect(asked.entries()).toEqual(twin.entries())
    }), { numRuns: 300 })
  })
})
