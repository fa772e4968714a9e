import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  compareKeyset,
  type CursorBinding,
  type CursorPosition,
  decodeCursor,
  encodeCursor,
  isAfter,
  type Sort
} from "../src/Cursor.ts"
import { InvalidRequest } from "../src/Errors.ts"
import { type FilterAst, matchAll, parseFilter, reviewFilterCatalog } from "../src/Filter.ts"

const filter = (json: string): FilterAst => Result.getOrThrow(parseFilter(json, reviewFilterCatalog))

const byRating: Sort = { field: "rating", direction: "desc", type: "number" }
const byCreatedAt: Sort = { field: "createdAt", direction: "asc", type: "timestamp" }

const binding: CursorBinding = {
  endpoint: "reviews",
  sort: byRating,
  filter: filter('{"published": true, "rating": {"$gte": 2}}'),
  search: "mug"
}

const ID = "5f0c3a1e-8b9d-4c2a-9e8f-1a2b3c4d5e6f"

const failure = (r: Result.Result<CursorPosition, InvalidRequest>): InvalidRequest => {
  if (Result.isSuccess(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.success)}`)
  expect(r.failure.issues.map((i) => i.path)).toEqual(["cursor"])
  return r.failure
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64url")
const unb64 = (s: string) => Buffer.from(s, "base64url").toString("utf8")

const arbUuid = fc.uuid().map((u) => u.toLowerCase())
const arbTimestamp = fc
  .integer({ min: Date.parse("0001-01-01T00:00:00Z"), max: Date.parse("9999-12-31T23:59:59.999Z") })
  .map((ms) => new Date(ms).toISOString())

const arbSortAndValue: fc.Arbitrary<[Sort, CursorPosition["value"]]> = fc.oneof(
  fc.tuple(
    fc.constantFrom<Sort>({ field: "rating", direction: "asc", type: "number" }, byRating),
    fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null })
  ),
  fc.tuple(
    fc.constantFrom<Sort>(byCreatedAt, { field: "moderatedAt", direction: "desc", type: "timestamp" }),
    fc.option(arbTimestamp, { nil: null })
  ),
  fc.tuple(fc.constant<Sort>({ field: "product.title", direction: "asc", type: "string" }), fc.option(fc.string({ unit: "grapheme" }), { nil: null })),
  fc.tuple(fc.constant<Sort>({ field: "published", direction: "asc", type: "boolean" }), fc.option(fc.boolean(), { nil: null }))
)

describe("cursor tokens", () => {
  it("round-trip any position for the same binding", () => {
    fc.assert(
      fc.property(arbSortAndValue, arbUuid, fc.option(fc.string(), { nil: undefined }), ([sort, value], id, search) => {
        const b: CursorBinding = { ...binding, sort, search }
        const token = encodeCursor({ value, id }, b)
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
        const decoded = decodeCursor(token, b)
        expect(Result.getOrThrow(decoded)).toEqual({ value: Object.is(value, -0) ? 0 : value, id })
      }),
      { numRuns: 300 }
    )
  })

  it("accept an equivalent filter written differently", () => {
    const token = encodeCursor({ value: 3, id: ID }, binding)
    const same = { ...binding, filter: filter('{"rating": {"$gte": 2}, "published": true}') }
    expect(Result.getOrThrow(decodeCursor(token, same))).toEqual({ value: 3, id: ID })
  })

  it("are refused with another sort, filter, search or endpoint", () => {
    const token = encodeCursor({ value: 3, id: ID }, binding)
    const others: ReadonlyArray<CursorBinding> = [
      { ...binding, sort: { ...byRating, direction: "asc" } },
      { ...binding, sort: byCreatedAt },
      { ...binding, filter: matchAll },
      { ...binding, filter: filter('{"published": true, "rating": {"$gte": 3}}') },
      { ...binding, search: undefined },
      { ...binding, search: "MUG" },
      { ...binding, endpoint: "product-questions" }
    ]
    for (const other of others) {
      expect(failure(decodeCursor(token, other)).message).toContain("different sort, filter or search")
    }
  })

  it("are refused when malformed or edited", () => {
    const token = encodeCursor({ value: 3, id: ID }, binding)
    const payload = JSON.parse(unb64(token)) as Record<string, unknown>
    const tampered = [
      "",
      "not a cursor!",
      token.slice(0, -3),
      token + "A",
      token.slice(0, 10) + (token[10] === "A" ? "B" : "A") + token.slice(11),
      "x".repeat(5_000),
      b64("not json"),
      b64("[1,2,3]"),
      b64("null"),
      b64(JSON.stringify({ ...payload, k: 5 })), // value changed without a matching checksum
      b64(JSON.stringify({ ...payload, i: "00000000-0000-0000-0000-000000000000" })),
      b64(JSON.stringify({ ...payload, v: 2 })),
      b64(JSON.stringify({ ...payload, c: undefined })),
      Buffer.from([0xff, 0xfe, 0x00]).toString("base64url")
    ]
    for (const t of tampered) {
      expect(failure(decodeCursor(t, binding)).message).toContain("not a cursor this API issued")
    }
  })

  it("are refused when forged with a value that does not fit the sort field", () => {
    // A client can recompute the (public) checksum; the value is still type-checked before reaching SQL.
    const forged = encodeCursor({ value: "'; DROP TABLE reviews; --", id: ID }, binding)
    failure(decodeCursor(forged, binding))
    const forgedTs = encodeCursor({ value: "2026-13-45", id: ID }, { ...binding, sort: byCreatedAt })
    failure(decodeCursor(forgedTs, { ...binding, sort: byCreatedAt }))
    const forgedId = encodeCursor({ value: 3, id: "1 OR 1=1" }, binding)
    failure(decodeCursor(forgedId, binding))
  })

  it("fail as InvalidRequest (a 400)", () => {
    const r = decodeCursor("garbage", binding)
    expect(Result.isFailure(r) && r.failure).toBeInstanceOf(InvalidRequest)
  })
})

describe("keyset order", () => {
  const at = (value: CursorPosition["value"], id: string): CursorPosition => ({ value, id })
  const A = "00000000-0000-4000-8000-00000000000a"
  const B = "00000000-0000-4000-8000-00000000000b"

  it("orders by value in the sort direction, then id in the same direction, nulls last", () => {
    const items = [at(null, A), at(3, B), at(5, A), at(3, A), at(null, B)]
    const asc = [...items].sort((x, y) => compareKeyset({ ...byRating, direction: "asc" }, x, y))
    expect(asc).toEqual([at(3, A), at(3, B), at(5, A), at(null, A), at(null, B)])
    const desc = [...items].sort((x, y) => compareKeyset(byRating, x, y))
    expect(desc).toEqual([at(5, A), at(3, B), at(3, A), at(null, B), at(null, A)])
  })

  it("puts after a position exactly the records that follow it", () => {
    const sort: Sort = { ...byRating, direction: "asc" }
    expect(isAfter(sort, at(3, A), at(3, B))).toBe(true)
    expect(isAfter(sort, at(3, B), at(3, A))).toBe(false)
    expect(isAfter(sort, at(3, A), at(3, A))).toBe(false)
    expect(isAfter(sort, at(3, B), at(null, A))).toBe(true)
    expect(isAfter(sort, at(null, A), at(9, B))).toBe(false)
    expect(isAfter(sort, at(null, A), at(null, B))).toBe(true)
    expect(isAfter(byRating, at(3, B), at(3, A))).toBe(true)
    expect(isAfter(byRating, at(3, A), at(5, B))).toBe(false)
  })

  it("is a total order: walking a sorted list by isAfter visits each item once", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }), arbUuid), {
          selector: ([, id]) => id,
          maxLength: 30
        }),
        fc.constantFrom<Sort["direction"]>("asc", "desc"),
        (rows, direction) => {
          const sort: Sort = { ...byRating, direction }
          const items = rows.map(([value, id]) => at(value, id))
          const sorted = [...items].sort((x, y) => compareKeyset(sort, x, y))
          sorted.forEach((p, i) => {
            expect(items.filter((q) => isAfter(sort, p, q))).toHaveLength(sorted.length - i - 1)
            if (i > 0) expect(compareKeyset(sort, sorted[i - 1]!, p)).toBeLessThan(0)
          })
        }
      )
    )
  })
})
