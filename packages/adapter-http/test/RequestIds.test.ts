import * as fc from "fast-check"
import { expect, it } from "vitest"
import { isWellFormedRequestId, requestIdOf } from "../src/server/RequestIds.ts"

const allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"

it("accepts exactly 1..128 characters of [A-Za-z0-9._:-]", () => {
  fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...allowed), minLength: 1, maxLength: 128 }), (id) => {
    expect(isWellFormedRequestId(id)).toBe(true)
    expect(requestIdOf(id)).toBe(id)
  }))
  fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 200 }), (id) => {
    const expected = id.length >= 1 && id.length <= 128 && [...id].every((c) => allowed.includes(c))
    expect(isWellFormedRequestId(id)).toBe(expected)
  }))
  expect(isWellFormedRequestId("a".repeat(129))).toBe(false)
})

it("makes a fresh, distinct id for a missing, malformed or repeated header", () => {
  const made = [undefined, "bad id", ["a", "b"]].map((h) => requestIdOf(h))
  for (const id of made) expect(id).toMatch(/^req_[0-9a-f]{8}[0-9a-z]+$/)
  expect(new Set(made).size).toBe(3)
})
