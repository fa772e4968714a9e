import { describe, expect, it } from "vitest"
import { uuidV7 } from "../src/kernel/IdGenerator.ts"

describe("uuidV7", () => {
  it("is a version 7, variant 1 UUID carrying the millisecond", () => {
    const id = uuidV7(Date.UTC(2026, 10, 22))
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(Date.UTC(2026, 10, 22))
  })

  it("ids made in the same millisecond (and past the sequence's end) sort in creation order", () => {
    const ms = Date.UTC(2030, 0, 1)
    const ids = Array.from({ length: 10_000 }, () => uuidV7(ms))
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    expect(uuidV7(ms - 5) > ids[ids.length - 1]!).toBe(true)
  })
})
