import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { uuidV7 } from "../src/kernel/IdGenerator.ts"
import { UUID_V7_PATTERN } from "@feedback/testing"

describe("uuidV7", () => {
  it("is a version 7, variant 1 UUID carrying the millisecond", () => {
    const id = uuidV7(Date.UTC(2026, 10, 22))
    expect(id).toMatch(UUID_V7_PATTERN)
    expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(Date.UTC(2026, 10, 22))
  })

  it("ids made in the same millisecond (and past the sequence's end) sort in creation order", () => {
    const ms = Date.UTC(2030, 0, 1)
    const ids = Array.from({ length: 10_000 }, () => uuidV7(ms))
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    expect(uuidV7(ms - 5) > ids[ids.length - 1]!).toBe(true)
  })

  it("carries the millisecond it was made in as the clock moves on, stalls or steps back (its time text is kept)", () => {
    let base = Date.UTC(2100, 0, 1)
    fc.assert(fc.property(fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 50 }), (steps) => {
      // Each run starts past everything made before: the generator never goes back in time.
      base += 1_000
      let clock = base
      let carried = -Infinity
      for (const step of steps) {
        clock += step
        carried = Math.max(carried, clock)
        const id = uuidV7(clock)
        expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(carried)
        expect(id).toMatch(UUID_V7_PATTERN)
      }
    }))
  })
})
