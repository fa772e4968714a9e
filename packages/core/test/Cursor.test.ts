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
  isCanonicalInstant,
  type Sort
} from "../src/kernel/Cursor.ts"
import { CursorKey } from "../src/kernel/CursorKey.ts"
import { InvalidRequest } from "../src/kernel/Errors.ts"
import { canonicalFilter, type FilterAst, matchAll, parseFilter } from "../src/kernel/Filter.ts"
import { legacyCursor, testIssuer } from "@feedback/testing"
import { reviewFilterCatalog } from "../src/reviews/ReviewLists.ts"

const filter = (json: string): FilterAst => Result.getOrThrow(parseFilter(json, reviewFilterCatalog))

const byRating: Sort = { field: "rating", direction: "desc", type: "number" }
const byCreatedAt: Sort = { field: "createdAt", direction: "asc", type: "timestamp" }

const binding: CursorBinding = {
  endpoint: "reviews",
  sort: byRating,
  filter: filter("{\"published\": true, \"rating\": {\"$gte\": 2}}"),
  search: "mug"
}

const ORG = "9a0c3a1e-8b9d-4c2a-9e8f-1a2b3c4d5e6f"
const issuer = testIssuer(ORG)
const ID = "5f0c3a1e-8b9d-4c2a-9e8f-1a2b3c4d5e6f"

const failure = (r: Result.Result<CursorPosition, InvalidRequest>): InvalidRequest => {
  if (Result.isSuccess(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.success)}`)
  expect(r.failure.issues.map((i) => i.path)).toEqual(["cursor"])
  return r.failure
}

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString("base64url")
/** The tag and the JSON payload of a token. */
const split = (token: string) => {
  const bytes = Buffer.from(token, "base64url")
  return {
    tag: bytes.subarray(0, 16),
    payload: JSON.parse(bytes.subarray(16).toString("utf8")) as Record<string, unknown>
  }
}
/** A token whose payload is `payload`, sealed with `key` (the real one unless a forger's is given). */
const seal = (payload: unknown, key = issuer.key) => {
  const bytes = Buffer.from(JSON.stringify(payload), "utf8")
  return b64(Buffer.concat([key.tag(bytes), bytes]))
}

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
  fc.tuple(
    fc.constant<Sort>({ field: "product.title", direction: "asc", type: "string" }),
    fc.option(fc.string({ unit: "grapheme" }).filter((s) => !s.includes("\u0000")), { nil: null })
  ),
  fc.tuple(
    fc.constant<Sort>({ field: "published", direction: "asc", type: "boolean" }),
    fc.option(fc.boolean(), { nil: null })
  )
)

describe("cursor tokens", () => {
  it("round-trip any position for the same binding and organization", () => {
    fc.assert(
      fc.property(arbSortAndValue, arbUuid, fc.option(fc.string(), { nil: undefined }), ([sort, value], id, search) => {
        const b: CursorBinding = { ...binding, sort, search }
        const token = encodeCursor({ value, id }, b, issuer)
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
        const decoded = decodeCursor(token, b, issuer)
        expect(Result.getOrThrow(decoded)).toEqual({ value: Object.is(value, -0) ? 0 : value, id })
      }),
      { numRuns: 300 }
    )
  })

  it("accept an equivalent filter written differently, and an upper-case organization id", () => {
    const token = encodeCursor({ value: 3, id: ID }, binding, issuer)
    const same = { ...binding, filter: filter("{\"rating\": {\"$gte\": 2}, \"published\": true}") }
    expect(Result.getOrThrow(decodeCursor(token, same, issuer))).toEqual({ value: 3, id: ID })
    expect(Result.isSuccess(decodeCursor(token, binding, testIssuer(ORG.toUpperCase())))).toBe(true)
  })

  it("are refused with another sort, filter, search, list or organization", () => {
    const token = encodeCursor({ value: 3, id: ID }, binding, issuer)
    const others: ReadonlyArray<CursorBinding> = [
      { ...binding, sort: { ...byRating, direction: "asc" } },
      { ...binding, sort: byCreatedAt },
      { ...binding, filter: matchAll },
      { ...binding, filter: filter("{\"published\": true, \"rating\": {\"$gte\": 3}}") },
      { ...binding, search: undefined },
      { ...binding, search: "MUG" },
      { ...binding, endpoint: "product-questions" }
    ]
    for (const other of others) {
      expect(failure(decodeCursor(token, other, issuer)).message).toContain("different list, sort, filter or search")
    }
    const otherOrganization = testIssuer("00000000-0000-4000-8000-000000000001")
    expect(failure(decodeCursor(token, binding, otherOrganization)).message).toContain("different list")
  })

  it("carry the binding's MAC under their own key, however often a binding and another key were seen before", () => {
    // Fingerprints are kept per key (Cursor.ts): a kept one must equal the MAC computed afresh, and never be another key's.
    const other = { ...issuer, key: CursorKey.fromSecret("another installation's key, long enough") }
    const mac = (key: CursorKey["Service"], b: CursorBinding) =>
      b64(
        key.tag(
          Buffer.from(
            JSON.stringify([
              "binding",
              ORG,
              b.endpoint,
              b.sort.field,
              b.sort.direction,
              canonicalFilter(b.filter),
              b.search ?? null
            ])
          )
        )
      )
    fc.assert(fc.property(fc.option(fc.string(), { nil: undefined }), fc.boolean(), (search, otherFirst) => {
      const b = { ...binding, search }
      for (const who of otherFirst ? [other, issuer, other] : [issuer, other, issuer]) {
        const token = encodeCursor({ value: 3, id: ID }, b, who)
        expect(split(token).payload["b"]).toBe(mac(who.key, b))
        expect(Result.isSuccess(decodeCursor(token, b, who))).toBe(true)
        expect(Result.isSuccess(decodeCursor(token, b, who === issuer ? other : issuer))).toBe(false)
      }
    }))
  })

  it("are refused when malformed, cut or edited", () => {
    const token = encodeCursor({ value: 3, id: ID }, binding, issuer)
    const { payload } = split(token)
    const tampered = [
      "",
      "not a cursor!",
      token.slice(0, -3),
      token.slice(0, 21),
      token + "A",
      "x".repeat(5_000),
      b64("not json"),
      b64(Buffer.concat([Buffer.alloc(16), Buffer.from(JSON.stringify(payload))])), // payload intact, tag zeroed
      // the payload edited, the tag kept
      b64(Buffer.concat([split(token).tag, Buffer.from(JSON.stringify({ ...payload, k: 5 }))])),
      b64(
        Buffer.concat([
          split(token).tag,
          Buffer.from(JSON.stringify({ ...payload, i: "00000000-0000-4000-8000-000000000000" }))
        ])
      ),
      seal({ ...payload, k: 5 }, CursorKey.fromSecret("a forger's key that is long enough!!")),
      seal({ ...payload, v: 1 }),
      seal([1, 2, 3]),
      seal(null),
      b64(Buffer.concat([issuer.key.tag(Buffer.from([0xff, 0xfe])), Buffer.from([0xff, 0xfe])])),
      legacyCursor({ value: 3, id: ID }, binding) // the retired public checksum, recomputed
    ]
    for (const t of tampered) {
      expect(failure(decodeCursor(t, binding, issuer)).message).toContain("not a cursor this API issued")
    }
  })

  it("are refused when any one character is changed", () => {
    const token = encodeCursor({ value: "2026-01-31T12:00:00.000Z", id: ID }, { ...binding, sort: byCreatedAt }, issuer)
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    fc.assert(
      fc.property(fc.nat({ max: token.length - 1 }), fc.constantFrom(...alphabet), (at, ch) => {
        fc.pre(token[at] !== ch)
        const edited = token.slice(0, at) + ch + token.slice(at + 1)
        failure(decodeCursor(edited, { ...binding, sort: byCreatedAt }, issuer))
      }),
      { numRuns: 500 }
    )
  })

  it("are refused when a sealed value does not fit the sort field (defence in depth)", () => {
    // Only a holder of the key can seal these; the value is still checked before it could reach SQL.
    failure(
      decodeCursor(encodeCursor({ value: "'; DROP TABLE reviews; --", id: ID }, binding, issuer), binding, issuer)
    )
    failure(decodeCursor(encodeCursor({ value: 3, id: "1 OR 1=1" }, binding, issuer), binding, issuer))
    const byTime = { ...binding, sort: byCreatedAt }
    for (
      const value of [
        "2026-13-45",
        "2026-02-30T00:00:00.000Z",
        "0000-01-01T00:00:00.000Z",
        "2026-01-01T24:00:00.000Z",
        "2026-01-01T00:00:00Z",
        "+012026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:60.000Z"
      ]
    ) {
      failure(decodeCursor(encodeCursor({ value, id: ID }, byTime, issuer), byTime, issuer))
    }
  })

  it("fail as InvalidRequest (a 400)", () => {
    const r = decodeCursor("garbage", binding, issuer)
    expect(Result.isFailure(r) && r.failure).toBeInstanceOf(InvalidRequest)
  })
})

describe("canonical instants", () => {
  it("are real instants in the canonical millisecond form, years 0001 to 9999", () => {
    for (const v of ["0001-01-01T00:00:00.000Z", "2024-02-29T23:59:59.999Z", "9999-12-31T23:59:59.999Z"]) {
      expect(isCanonicalInstant(v)).toBe(true)
    }
    for (
      const v of [
        "0000-01-01T00:00:00.000Z",
        "2026-02-30T00:00:00.000Z",
        "2025-02-29T00:00:00.000Z",
        "2026-04-31T00:00:00.000Z",
        "2026-01-01T24:00:00.000Z",
        "2026-01-01T23:60:00.000Z",
        "2026-01-01",
        "2026-01-01T00:00:00.000+00:00",
        " 2026-01-01T00:00:00.000Z"
      ]
    ) {
      expect(isCanonicalInstant(v)).toBe(false)
    }
  })

  it("round-trip every instant JS and PostgreSQL both hold", () => {
    fc.assert(fc.property(arbTimestamp, (v) => isCanonicalInstant(v)))
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
