import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { claimSize } from "../src/webhooks/WebhookDispatcher.ts"

describe("claimSize", () => {
  it("covers the room, never passes the cap, and takes one of a few sizes", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 200 }), (room, max) => {
      const size = claimSize(room, max)
      expect(size).toBeGreaterThanOrEqual(Math.min(room, max))
      expect(size).toBeLessThanOrEqual(max)
      expect(size < 2 * room || size === 1).toBe(true)
      // A power of two, or the cap itself: at most log2(cap) + 2 distinct claims.
      expect(size === max || (size & (size - 1)) === 0).toBe(true)
    }))
  })

  it.each([[1, 80, 1], [3, 80, 4], [16, 80, 16], [17, 80, 32], [65, 80, 80], [200, 80, 80]])(
    "room %i, cap %i: %i",
    (room, max, size) => {
      expect(claimSize(room, max)).toBe(size)
    }
  )
})
