/**
 * Strict timestamps and canonical ids (docs/DECISIONS.md §11): an impossible date is refused, not rolled over; ids
 * are lower case.
 */
import { Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseTimestampValue } from "../src/kernel/Filter.ts"
import { ProductId, Uuid } from "../src/kernel/Ids.ts"
import * as Timestamp from "../src/kernel/Timestamp.ts"

const impossible = [
  "2026-02-30T00:00:00Z",
  "2026-02-29T12:00:00Z",
  "2026-04-31T00:00:00Z",
  "2026-13-01T00:00:00Z",
  "2026-00-10T00:00:00Z",
  "2026-01-00T00:00:00Z",
  "2026-01-01T24:00:00Z",
  "2026-01-01T23:60:00Z",
  "2026-01-01T23:59:60Z",
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:30:00+01:00",
  "2026-01-01T12:00:00+24:00",
  "2026-01-01T12:00:00+01:60",
  "2026-1-01T00:00:00Z",
  "2026-01-01 12:00:00Z",
  "2026-01-01T12:00:00",
  "2026-01-01T12:00:00.1234567890Z"
]

describe("timestamps", () => {
  it.each(impossible)("%s is refused by every parser", (s) => {
    expect(Timestamp.parse(s)).toBeUndefined()
    expect(parseTimestampValue(s)).toBeUndefined()
    expect(Schema.is(Timestamp.TimestampInput)(s)).toBe(false)
  })

  it("the canonical schema refuses a rolled-over date", () => {
    expect(Schema.is(Timestamp.Timestamp)("2026-02-30T00:00:00.000Z")).toBe(false)
    expect(Schema.is(Timestamp.Timestamp)("0000-01-01T00:00:00.000Z")).toBe(false)
    expect(Schema.is(Timestamp.Timestamp)("2024-02-29T23:59:59.999Z")).toBe(true)
  })

  it("valid forms normalise to the canonical instant", () => {
    expect(Timestamp.parse("2024-02-29T12:00Z")).toBe("2024-02-29T12:00:00.000Z")
    expect(Timestamp.parse("2026-01-01T00:30:00+01:00")).toBe("2025-12-31T23:30:00.000Z")
    expect(Timestamp.parse("2026-01-31T12:00:00.123456Z")).toBe("2026-01-31T12:00:00.123Z")
  })

  it("every real instant round-trips through its canonical form", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("0001-01-02T00:00:00Z"), max: new Date("9999-12-30T00:00:00Z"), noInvalidDate: true }),
        (d) => {
          const canonical = d.toISOString()
          expect(Timestamp.parse(canonical)).toBe(canonical)
          expect(Schema.is(Timestamp.Timestamp)(canonical)).toBe(true)
        }
      )
    )
  })
})

describe("zero offsets, written out without Date", () => {
  const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"))
  // Real instants in every form the input accepts with a zero offset: seconds or not, 0–9 fraction digits.
  const zeroOffset = fc.tuple(
    fc.integer({ min: 1, max: 9999 }).map((y) => String(y).padStart(4, "0")),
    fc.integer({ min: 1, max: 12 }).map((m) => String(m).padStart(2, "0")),
    fc.integer({ min: 1, max: 28 }).map((d) => String(d).padStart(2, "0")),
    two(23),
    two(59),
    fc.option(fc.tuple(two(59), fc.option(fc.stringMatching(/^\d{1,9}$/)))),
    fc.constantFrom("Z", "+00:00", "-00:00")
  ).map(([y, mo, d, h, mi, sec, zone]) =>
    `${y}-${mo}-${d}T${h}:${mi}${sec === null ? "" : `:${sec[0]}${sec[1] === null ? "" : `.${sec[1]}`}`}${zone}`
  )

  it("normalise exactly as Date.parse and toISOString do", () => {
    fc.assert(
      fc.property(zeroOffset, (s) => {
        expect(Timestamp.parse(s)).toBe(new Date(Date.parse(s)).toISOString())
      }),
      { numRuns: 5_000 }
    )
    expect(Timestamp.parse("2025-06-01T12:00:00Z")).toBe("2025-06-01T12:00:00.000Z")
    expect(Timestamp.parse("2025-06-01T12:00:00.9999-00:00")).toBe("2025-06-01T12:00:00.999Z")
    expect(Timestamp.parse("2024-02-29T23:59:59.5+00:00")).toBe("2024-02-29T23:59:59.500Z")
  })
})

describe("the fast canonical check", () => {
  const digits = (n: number) =>
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(""))
  // Canonical in shape, any digits: impossible months, days, hours, leap days and year 0000 included.
  const shaped = fc.tuple(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), digits(3))
    .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`)
  const near = fc.tuple(
    fc.integer({ min: 0, max: 9999 }),
    fc.integer({ min: 0, max: 13 }),
    fc.integer({ min: 0, max: 32 })
  )
    .map(([y, mo, d]) =>
      `${String(y).padStart(4, "0")}-${String(mo).padStart(2, "0")}-${String(d).padStart(2, "0")}T23:59:59.999Z`
    )

  it("answers exactly as parse(s) === s, for any string", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          shaped,
          near,
          fc.string(),
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
        ),
        (s) => {
          expect(Timestamp.isCanonical(s)).toBe(Timestamp.parse(s) === s)
        }
      ),
      { numRuns: 5_000 }
    )
    for (
      const s of [
        ...impossible,
        "2024-02-29T00:00:00.000Z",
        "2100-02-29T00:00:00.000Z",
        "2000-02-29T00:00:00.000Z",
        "0001-01-01T00:00:00.000Z"
      ]
    ) {
      expect(Timestamp.isCanonical(s)).toBe(Timestamp.parse(s) === s)
    }
  })
})

describe("UUIDs", () => {
  it("decode in either letter case to lower case, for every branded id", () => {
    const upper = "0190A0B1-C2D3-7E4F-8A5B-6C7D8E9FA0B1"
    expect(Schema.decodeUnknownSync(Uuid)(upper)).toBe(upper.toLowerCase())
    expect(Schema.decodeUnknownSync(ProductId)(upper)).toBe(upper.toLowerCase())
    expect(Schema.decodeUnknownResult(ProductId)("not-a-uuid")._tag).toBe("Failure")
    expect(Schema.encodeSync(ProductId)(ProductId.make(upper.toLowerCase()))).toBe(upper.toLowerCase())
  })
})
