import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  type BucketRequest,
  type BucketSpec,
  type BucketState,
  bucketForPlan,
  refill,
  remainingAt,
  spend,
  UNITS_PER_TOKEN
} from "../src/ratelimit/TokenBucket.ts"

const T0 = 1_763_000_000_000 // a realistic epoch-ms start, so float magnitudes are those of production

/**
 * A spec together with its exact refill rate as a fraction `num / den` tokens per millisecond, so the tests can
 * check bounds in integer arithmetic that does not share the implementation's representation.
 */
interface ExactSpec {
  readonly spec: BucketSpec
  readonly num: bigint
  readonly den: bigint
}

const planSpec: fc.Arbitrary<ExactSpec> = fc
  .oneof(fc.constantFrom(1, 7, 13, 59, 60, 61, 100, 599, 600, 601, 1_000_000), fc.integer({ min: 1, max: 5_000 }))
  .map((n) => ({ spec: bucketForPlan(n), num: BigInt(n), den: 60_000n })) // n / 60 per s = n / 60,000 per ms

const thousandthsSpec: fc.Arbitrary<ExactSpec> = fc
  .record({ ceiling: fc.integer({ min: 1, max: 2_000 }), k: fc.integer({ min: 0, max: 50_000 }) })
  .map(({ ceiling, k }) => ({ spec: { ceiling, refillPerSecond: k / 1000 }, num: BigInt(k), den: 1_000_000n }))

const exactSpec = fc.oneof(planSpec, thousandthsSpec)

/** A time step in ms (mostly forward, sometimes none, occasionally backwards: clock skew) and a cost. */
const step = (maxCost: number) =>
  fc.record({
    dt: fc.oneof(
      { weight: 5, arbitrary: fc.integer({ min: 0, max: 3_000 }) },
      { weight: 3, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: -5_000, max: -1 }) },
      { weight: 1, arbitrary: fc.integer({ min: 3_000, max: 600_000 }) }
    ),
    cost: fc.integer({ min: 0, max: maxCost })
  })

const scenario = exactSpec.chain((s) =>
  fc.record({ s: fc.constant(s), steps: fc.array(step(s.spec.ceiling + 2), { maxLength: 150 }) })
)

/** A level in units; `TokenBucket` keeps `tokens` the double nearest to a whole number of units. */
const units = (tokens: number): number => Math.round(tokens * UNITS_PER_TOKEN)

/** Any valid stored state of a bucket: a level in [0, ceiling] units, credited at some time near `now`. */
const stateNear = (spec: BucketSpec, now: number): fc.Arbitrary<BucketState | undefined> =>
  fc.option(
    fc.record({
      u: fc.integer({ min: 0, max: spec.ceiling * UNITS_PER_TOKEN }),
      offset: fc.integer({ min: -200_000, max: 5_000 })
    }).map(({ offset, u }) => ({ tokens: u / UNITS_PER_TOKEN, updatedAtMs: now + offset })),
    { nil: undefined }
  )

const requestsNear = (now: number, maxBuckets: number) =>
  fc.array(exactSpec, { minLength: 1, maxLength: maxBuckets }).chain((specs) =>
    fc.tuple(...specs.map((s) => stateNear(s.spec, now).map((state): BucketRequest => ({ state, spec: s.spec }))))
  )

describe("bucketForPlan", () => {
  it("uses apiRequestsPerMinute as the ceiling and refills it once a minute", () => {
    expect(bucketForPlan(600)).toEqual({ ceiling: 600, refillPerSecond: 10 })
    expect(bucketForPlan(90)).toEqual({ ceiling: 90, refillPerSecond: 1.5 })
  })
})

describe("refill", () => {
  const spec = bucketForPlan(600)

  it("a missing state is a full bucket", () => {
    expect(refill(undefined, spec, T0)).toEqual({ tokens: 600, updatedAtMs: T0 })
    expect(remainingAt(undefined, spec, T0)).toBe(600)
  })

  it("refills continuously and stops at the ceiling", () => {
    const empty = { tokens: 0, updatedAtMs: T0 }
    expect(refill(empty, spec, T0 + 1).tokens).toBe(0.01)
    expect(refill(empty, spec, T0 + 150).tokens).toBe(1.5)
    expect(refill(empty, spec, T0 + 59_999).tokens).toBeCloseTo(599.99, 9)
    expect(refill(empty, spec, T0 + 60_000).tokens).toBe(600)
    expect(refill(empty, spec, T0 + 10 * 365 * 86_400_000).tokens).toBe(600)
  })

  it("a lowered ceiling caps the level at once", () => {
    expect(refill({ tokens: 600, updatedAtMs: T0 }, bucketForPlan(100), T0)).toEqual({ tokens: 100, updatedAtMs: T0 })
  })

  it("time going backwards adds nothing and does not move the credit time back", () => {
    const s = { tokens: 5, updatedAtMs: T0 }
    expect(refill(s, spec, T0 - 10_000)).toEqual(s)
    // Credited once only: back then forward again is the same as going forward directly.
    expect(refill(refill(s, spec, T0 - 10_000), spec, T0 + 1_000)).toEqual(refill(s, spec, T0 + 1_000))
  })

  it("is path independent: refilling at t1 then t2 is refilling at t2", () => {
    fc.assert(
      fc.property(
        exactSpec,
        fc.integer({ min: -10_000, max: 100_000 }),
        fc.integer({ min: -10_000, max: 100_000 }),
        (s, d1, d2) => {
          const start: BucketState = { tokens: 0, updatedAtMs: T0 }
          const direct = refill(start, s.spec, T0 + Math.max(d1, d2))
          const viaT1 = refill(refill(start, s.spec, T0 + d1), s.spec, T0 + d2)
          expect(viaT1).toEqual(d2 >= d1 ? direct : refill(start, s.spec, T0 + d1))
        }
      )
    )
  })

  it("keeps levels an exact whole number of units (no drift)", () => {
    fc.assert(
      fc.property(scenario, ({ s, steps }) => {
        let state: BucketState | undefined
        let now = T0
        for (const { cost, dt } of steps) {
          now += dt
          const r = spend([{ state, spec: s.spec }], cost, now)
          if (r._tag === "Admitted") state = r.states[0]
          if (state !== undefined) expect(units(state.tokens) / UNITS_PER_TOKEN).toBe(state.tokens)
        }
      })
    )
  })
})

describe("spend", () => {
  it("starts full: 600 cost-1 requests at one instant are admitted, the 601st waits exactly 1 s", () => {
    const spec = bucketForPlan(600)
    let state: BucketState | undefined
    for (let i = 1; i <= 600; i++) {
      const r = spend([{ state, spec }], 1, T0)
      expect(r._tag).toBe("Admitted")
      if (r._tag !== "Admitted") return
      expect(r.remaining).toEqual([600 - i])
      state = r.states[0]
    }
    const refused = spend([{ state, spec }], 1, T0)
    expect(refused).toMatchObject({ _tag: "Refused", retryAfterSeconds: 1, remaining: [0], refusedBy: 0 })
    // 1 token at 10/s takes 100 ms: refused at 99 ms, admitted at 100 ms.
    expect(spend([{ state, spec }], 1, T0 + 99)._tag).toBe("Refused")
    expect(spend([{ state, spec }], 1, T0 + 100)._tag).toBe("Admitted")
  })

  it("rounds Retry-After up to whole seconds", () => {
    const spec = bucketForPlan(600)
    const empty = { tokens: 0, updatedAtMs: T0 }
    expect(spend([{ state: empty, spec }], 10, T0)).toMatchObject({ _tag: "Refused", retryAfterSeconds: 1 })
    expect(spend([{ state: empty, spec }], 11, T0)).toMatchObject({ _tag: "Refused", retryAfterSeconds: 2 })
    expect(spend([{ state: empty, spec }], 600, T0)).toMatchObject({ _tag: "Refused", retryAfterSeconds: 60 })
    // A state credited in the future (another process's clock ran ahead) waits for that time too.
    expect(spend([{ state: { tokens: 0, updatedAtMs: T0 + 2_500 }, spec }], 10, T0)).toMatchObject({
      _tag: "Refused",
      retryAfterSeconds: 4
    })
  })

  it("is exact where floats are not: 7 per minute", () => {
    // 7/60 tokens per second: 1 token takes 60/7 s = 8571.43 ms, so 9 s; 3 tokens take 25714.29 ms, so 26 s.
    const spec = bucketForPlan(7)
    const empty = { tokens: 0, updatedAtMs: T0 }
    expect(spend([{ state: empty, spec }], 1, T0)).toMatchObject({ retryAfterSeconds: 9 })
    expect(spend([{ state: empty, spec }], 3, T0)).toMatchObject({ retryAfterSeconds: 26 })
    expect(spend([{ state: empty, spec }], 3, T0 + 25_714)._tag).toBe("Refused")
    expect(spend([{ state: empty, spec }], 3, T0 + 25_715)._tag).toBe("Admitted")
    // 60,000 ms of refill is exactly the ceiling, reached in 7 admitted steps of 8,572 ms minus the rounding.
    let state: BucketState | undefined = empty
    let now = T0
    for (let i = 0; i < 7; i++) {
      now += 8_572
      const r = spend([{ state, spec }], 1, now)
      expect(r._tag).toBe("Admitted")
      if (r._tag === "Admitted") state = r.states[0]
    }
    // 7 × 8,572 ms credited 7.0004 tokens and 7 were spent: 0.0004 left, so the next token is 8,568 ms away.
    expect(spend([{ state, spec }], 1, now + 8_567)._tag).toBe("Refused")
    expect(spend([{ state, spec }], 1, now + 8_568)._tag).toBe("Admitted")
  })

  it("a cost above a ceiling is refused without Retry-After, forever", () => {
    const r = spend([{ state: undefined, spec: bucketForPlan(600) }], 601, T0)
    expect(r).toMatchObject({ _tag: "Refused", retryAfterSeconds: undefined, refusedBy: 0, remaining: [600] })
    expect(spend([{ state: undefined, spec: bucketForPlan(600) }], 601, T0 + 1e9)._tag).toBe("Refused")
    // The per-endpoint bucket is the one that can never afford it.
    const two = spend(
      [{ state: { tokens: 0, updatedAtMs: T0 }, spec: bucketForPlan(600) }, {
        state: undefined,
        spec: { ceiling: 5, refillPerSecond: 1 }
      }],
      10,
      T0
    )
    expect(two).toMatchObject({ _tag: "Refused", retryAfterSeconds: undefined, refusedBy: 1 })
  })

  it("never over-admits: admitted cost ≤ ceiling + refill × elapsed, at every step", () => {
    fc.assert(
      fc.property(scenario, ({ s, steps }) => {
        let state: BucketState | undefined
        let now = T0
        let earliest = Infinity // the bucket comes into being (full) at a request, at the earliest at this time
        let latest = -Infinity
        let admitted = 0n
        for (const { cost, dt } of steps) {
          now += dt
          earliest = Math.min(earliest, now)
          latest = Math.max(latest, now)
          const r = spend([{ state, spec: s.spec }], cost, now)
          if (r._tag === "Admitted") {
            state = r.states[0]
            admitted += BigInt(cost)
          }
          // in units of 1/den token: admitted·den ≤ ceiling·den + num·elapsed
          expect(admitted * s.den <= BigInt(s.spec.ceiling) * s.den + s.num * BigInt(latest - earliest)).toBe(true)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("agrees exactly with a rational-arithmetic model on every decision", () => {
    fc.assert(
      fc.property(scenario, ({ s, steps }) => {
        const cap = BigInt(s.spec.ceiling) * s.den
        let level = cap // in 1/den tokens
        let credited: number | undefined // a missing bucket is full; it is stored at its first admitted request
        let state: BucketState | undefined
        let now = T0
        for (const { cost, dt } of steps) {
          now += dt
          // The level now; it is committed only if the request is admitted (a refusal has no effect at all).
          const gained = credited !== undefined && now > credited ? level + s.num * BigInt(now - credited) : level
          const levelNow = gained < cap ? gained : cap
          const affordable = levelNow >= BigInt(cost) * s.den
          const r = spend([{ state, spec: s.spec }], cost, now)
          expect(r._tag).toBe(affordable ? "Admitted" : "Refused")
          const after = affordable ? levelNow - BigInt(cost) * s.den : levelNow
          expect(r.remaining[0]).toBe(Number(after / s.den))
          if (affordable) {
            level = after
            credited = credited === undefined ? now : Math.max(credited, now)
          }
          if (r._tag === "Admitted") state = r.states[0]
        }
      }),
      { numRuns: 300 }
    )
  })

  it("a refused request has no effect: its states are the inputs, and dropping it changes nothing", () => {
    fc.assert(
      fc.property(scenario, ({ s, steps }) => {
        let state: BucketState | undefined
        let now = T0
        const admittedSteps: Array<{ cost: number; at: number }> = []
        for (const { cost, dt } of steps) {
          now += dt
          const r = spend([{ state, spec: s.spec }], cost, now)
          if (r._tag === "Admitted") {
            state = r.states[0]
            admittedSteps.push({ cost, at: now })
          } else {
            expect(r.states).toHaveLength(1)
            expect(r.states[0]).toBe(state)
          }
        }
        let replay: BucketState | undefined
        for (const { at, cost } of admittedSteps) {
          const r = spend([{ state: replay, spec: s.spec }], cost, at)
          expect(r._tag).toBe("Admitted")
          if (r._tag === "Admitted") replay = r.states[0]
        }
        expect(replay).toEqual(state)
      }),
      { numRuns: 200 }
    )
  })

  it("Retry-After is the least whole second after which the same request is admitted", () => {
    let refusals = 0
    fc.assert(
      fc.property(requestsNear(T0, 3), fc.integer({ min: 0, max: 2_100 }), (requests, rawCost) => {
        const maxCeiling = Math.min(...requests.map((r) => r.spec.ceiling))
        const cost = rawCost % (maxCeiling + 2) // mostly affordable in principle, sometimes above a ceiling
        const r = spend(requests, cost, T0)
        if (r._tag === "Admitted") return
        refusals++
        if (r.retryAfterSeconds === undefined) {
          expect(requests.some((q) => q.spec.ceiling < cost || (q.spec.refillPerSecond === 0 && cost > 0))).toBe(true)
          expect(spend(requests, cost, T0 + 1e10)._tag).toBe("Refused")
          return
        }
        const s = r.retryAfterSeconds
        expect(Number.isInteger(s) && s >= 1).toBe(true)
        expect(spend(requests, cost, T0 + 1000 * s)._tag).toBe("Admitted")
        if (s > 1) expect(spend(requests, cost, T0 + 1000 * (s - 1))._tag).toBe("Refused")
      }),
      { numRuns: 2_000 }
    )
    expect(refusals).toBeGreaterThan(200) // the property was exercised, not vacuously true
  })

  it("is atomic over buckets: all are charged or none", () => {
    let both = 0
    fc.assert(
      fc.property(requestsNear(T0, 3), fc.integer({ min: 0, max: 200 }), (requests, cost) => {
        const r = spend(requests, cost, T0)
        const before = requests.map((q) => refill(q.state, q.spec, T0))
        const affordable = before.map((b) => units(b.tokens) >= units(cost))
        if (r._tag === "Admitted") {
          both++
          expect(affordable.every(Boolean)).toBe(true)
          r.states.forEach((after, i) => {
            expect(units(after.tokens)).toBe(units(before[i]!.tokens) - units(cost))
            expect(after.updatedAtMs).toBe(before[i]!.updatedAtMs)
          })
        } else {
          expect(affordable.every(Boolean)).toBe(false)
          expect(r.states).toEqual(requests.map((q) => q.state))
        }
      }),
      { numRuns: 1_000 }
    )
    expect(both).toBeGreaterThan(50)
  })

  it("refused by one bucket charges none", () => {
    const org = bucketForPlan(600)
    const history = { ceiling: 30, refillPerSecond: 1 }
    const emptyHistory = { tokens: 5, updatedAtMs: T0 }
    const r = spend([{ state: undefined, spec: org }, { state: emptyHistory, spec: history }], 10, T0)
    expect(r).toMatchObject({ _tag: "Refused", retryAfterSeconds: 5, refusedBy: 1, remaining: [600, 5] })
    expect(r.states).toEqual([undefined, emptyHistory])
  })

  it("a plan change takes effect on the next request", () => {
    const at600 = bucketForPlan(600)
    let r = spend([{ state: undefined, spec: at600 }], 1, T0)
    expect(r).toMatchObject({ _tag: "Admitted", remaining: [599] })
    const afterOne = r._tag === "Admitted" ? r.states[0] : undefined
    // Lowered: the level is capped at the new ceiling at once.
    r = spend([{ state: afterOne, spec: bucketForPlan(100) }], 1, T0)
    expect(r).toMatchObject({ _tag: "Admitted", remaining: [99] })
    // Raised after draining: refills at the new rate (1200/min = 20/s) up to the new ceiling.
    const drained = { tokens: 0, updatedAtMs: T0 }
    expect(spend([{ state: drained, spec: bucketForPlan(1200) }], 20, T0 + 1_000)._tag).toBe("Admitted")
    expect(spend([{ state: drained, spec: at600 }], 20, T0 + 1_000)).toMatchObject({
      _tag: "Refused",
      retryAfterSeconds: 1
    })
    expect(refill(drained, bucketForPlan(1200), T0 + 3_600_000).tokens).toBe(1200)
  })

  it("rejects inputs no caller should build", () => {
    expect(() => spend([{ state: undefined, spec: bucketForPlan(600) }], -1, T0)).toThrow(RangeError)
    expect(() => spend([{ state: undefined, spec: bucketForPlan(600) }], Number.NaN, T0)).toThrow(RangeError)
    expect(() => spend([{ state: undefined, spec: { ceiling: 1e12, refillPerSecond: 1 } }], 1, T0)).toThrow(RangeError)
  })
})

describe("fullInSeconds (the IETF RateLimit field's t)", () => {
  it("is the least whole number of seconds after which every bucket is full again, with no other spending", () => {
    fc.assert(
      fc.property(
        planSpec,
        fc.array(fc.record({ afterMs: fc.integer({ min: 0, max: 5_000 }), cost: fc.integer({ min: 0, max: 50 }) }), {
          maxLength: 20
        }),
        ({ spec }, spends) => {
          let state: BucketState | undefined
          let now = T0
          for (const { afterMs, cost } of spends) {
            now += afterMs
            const result = spend([{ state, spec }], cost, now)
            if (result._tag === "Admitted") state = result.states[0]
            const s = result.fullInSeconds[0]!
            const level = (ms: number) => refill(state, spec, ms).tokens
            expect(level(now + s * 1000)).toBe(spec.ceiling)
            if (s > 0) expect(level(now + (s - 1) * 1000)).toBeLessThan(spec.ceiling)
          }
        }
      )
    )
  })
})
