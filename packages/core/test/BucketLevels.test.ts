/**
 * `BucketLevels`, the levels of the memory and embedded stores: `refusal` tells, without writing, exactly the refusal
 * `spend` would answer at the same instant, and nothing when `spend` would admit. Checked on random sequences of
 * spends and time steps against a twin that is never asked in advance, so asking is also shown to change nothing.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { RateLimits } from "../src/index.ts"
import { sequenceEndpoints as endpoints, sequenceStepArbitrary } from "@feedback/testing"

/** A step, and whether `refusal` is asked before the spend. */
const step = fc.tuple(sequenceStepArbitrary, fc.boolean()).map(([s, ask]) => ({ ...s, ask }))

describe("BucketLevels.refusal", () => {
  it("is the refusal spend answers at that instant, undefined when it admits, and changes nothing", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 150 }), (steps) => {
        const asked = RateLimits.BucketLevels.make()
        const twin = RateLimits.BucketLevels.make()
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
      }),
      { numRuns: 300 }
    )
  })
})
