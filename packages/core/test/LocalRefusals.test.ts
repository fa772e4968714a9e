/**
 * Cheap refusals (`LocalRefusals`): over a store, a process refuses locally while the levels the store last refused
 * from cannot pay, and otherwise asks the store. Checked against the bare store on random sequences of spends and
 * time steps: one process gets exactly the store's decisions (Retry-After and headers included) with fewer store
 * calls; two processes sharing one store never admit what the store alone would refuse, and refuse only what it
 * would refuse too. The store here is `TokenBucket` over a Map, as the memory store keeps it.
 */
import { describe, expect, it } from "vitest"
import { Clock, Effect } from "effect"
import { atTime, sequenceEndpoints, sequenceStepArbitrary, withoutStates } from "@feedback/testing"
import fc from "fast-check"
import { RateLimits } from "../src/index.ts"

/** A store deciding with `TokenBucket` over a Map, counting its calls. */
const bareStore = () => {
  const levels = new Map<string, RateLimits.TokenBucket.BucketState>()
  let calls = 0
  const store = RateLimits.RateLimitRepository.of({
    spend: (org, buckets, cost) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        calls++
        RateLimits.assertBuckets(buckets)
        const result = RateLimits.TokenBucket.spend(
          buckets.map((b) => ({ spec: b.spec, state: levels.get(`${org}/${b.key}`) })),
          cost,
          now
        )
        if (result._tag === "Admitted") buckets.forEach((b, i) => levels.set(`${org}/${b.key}`, result.states[i]!))
        return RateLimits.toSpendDecision(buckets, result, cost)
      })
  })
  return { store, calls: () => calls }
}

const at = atTime

const endpoints = sequenceEndpoints

/** A step: `wait` ms pass, then process `who` spends on endpoint `which` for organization `org`. */
const step = fc.tuple(sequenceStepArbitrary, fc.constantFrom(0, 1)).map(([s, who]) => ({ ...s, who }))

describe("LocalRefusals", () => {
  it("one process: exactly the store's decisions; the store is asked at least for every admission", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 120 }), (steps) => {
        const plain = bareStore()
        const under = bareStore()
        const cached = RateLimits.LocalRefusals.withLocalRefusals(under.store)
        let now = 1_763_000_000_000
        let refusals = 0
        for (const s of steps) {
          now += s.wait
          const [buckets, cost] = endpoints[s.which]!
          const expected = Effect.runSync(plain.store.spend(s.org, buckets, cost).pipe(at(now)))
          // What it can tell in advance is a refusal, and the very one it then answers.
          const told = cached.refusalAt?.(s.org, buckets, cost, now)
          const got = Effect.runSync(cached.spend(s.org, buckets, cost).pipe(at(now)))
          expect(withoutStates(got)).toEqual(withoutStates(expected))
          if (told !== undefined) expect(withoutStates(told)).toEqual(withoutStates(got))
          if (expected._tag === "Refused") refusals++
        }
        // Every call the cache saved was one that would have been refused.
        expect(under.calls()).toBeGreaterThanOrEqual(steps.length - refusals)
      }),
      { numRuns: 300 }
    )
  })

  it("refuses a bucket known to be empty without asking the store, until the instant it can pay", () => {
    const under = bareStore()
    const cached = RateLimits.LocalRefusals.withLocalRefusals(under.store)
    const [buckets] = endpoints[0]! // 12 per minute: one token every 5 s
    const t0 = 1_763_000_000_000
    for (let i = 0; i < 12; i++) {
      expect(Effect.runSync(cached.spend("o", buckets, 1).pipe(at(t0)))._tag).toBe("Admitted")
    }
    expect(Effect.runSync(cached.spend("o", buckets, 1).pipe(at(t0)))).toMatchObject({
      _tag: "Refused",
      retryAfterSeconds: 5
    })
    const afterFirstRefusal = under.calls()
    for (let ms = 0; ms < 5_000; ms += 250) {
      expect(Effect.runSync(cached.spend("o", buckets, 1).pipe(at(t0 + ms)))).toMatchObject({ _tag: "Refused" })
    }
    expect(under.calls()).toBe(afterFirstRefusal) // 20 refusals, no store call
    expect(Effect.runSync(cached.spend("o", buckets, 1).pipe(at(t0 + 5_000)))._tag).toBe("Admitted")
    expect(under.calls()).toBe(afterFirstRefusal + 1)
  })

  it("two processes over one store: never admit what the store refuses, never refuse what it admits", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 150 }), (steps) => {
        // The reference: the same sequence of spends on one bare store. The shared store under the two caches sees
        // the same spends where the caches pass them on, so both must reach the same decision at every step.
        const reference = bareStore()
        const shared = bareStore()
        const processes = [
          RateLimits.LocalRefusals.withLocalRefusals(shared.store),
          RateLimits.LocalRefusals.withLocalRefusals(shared.store)
        ]
        let now = 1_763_000_000_000
        let admitted = 0
        for (const s of steps) {
          now += s.wait
          const [buckets, cost] = endpoints[s.which]!
          const expected = Effect.runSync(reference.store.spend(s.org, buckets, cost).pipe(at(now)))
          const got = Effect.runSync(processes[s.who]!.spend(s.org, buckets, cost).pipe(at(now)))
          expect(got._tag).toBe(expected._tag)
          if (got._tag === "Admitted") admitted++
        }
        expect(shared.calls()).toBeGreaterThanOrEqual(admitted)
      }),
      { numRuns: 300 }
    )
  })

  it("keeps at most maxOrganizations bounds, the oldest going first", () => {
    const under = bareStore()
    const cached = RateLimits.LocalRefusals.withLocalRefusals(under.store, { maxOrganizations: 2 })
    const [buckets, cost] = endpoints[3]! // never affordable: every call refuses
    const t = 1_763_000_000_000
    for (const org of ["x", "y", "z"]) Effect.runSync(cached.spend(org, buckets, cost).pipe(at(t)))
    const before = under.calls()
    Effect.runSync(cached.spend("z", buckets, cost).pipe(at(t)))
    Effect.runSync(cached.spend("y", buckets, cost).pipe(at(t)))
    expect(under.calls()).toBe(before) // y and z are remembered
    Effect.runSync(cached.spend("x", buckets, cost).pipe(at(t)))
    expect(under.calls()).toBe(before + 1) // x was evicted
  })
})
