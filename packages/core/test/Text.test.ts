/**
 * Stored text and the email check (docs/DECISIONS.md §11, `docs/SECURITY.md`): both agree with a plain reference
 * definition on random strings, and both read each character of their input at most once (counted, not timed).
 */
import { Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { EmailAddress, isEmailAddress } from "../src/kernel/EmailAddress.ts"
import { BoundedText, isStorable, RequiredText, StoredText, textProblem } from "../src/kernel/Text.ts"

/** A string whose `charCodeAt` reads are counted: the step count of a scan. */
const counting = (s: string) => {
  const probe = { reads: 0 }
  const proxy = {
    length: s.length,
    charCodeAt: (i: number) => {
      probe.reads++
      return s.charCodeAt(i)
    },
    includes: (x: string) => s.includes(x),
    [Symbol.iterator]: () => s[Symbol.iterator]()
  }
  return { input: proxy as unknown as string, probe }
}

// ---------------------------------------------------------------------------------------------------------------
// Stored text

/** The reference: no NUL, and well-formed UTF-16 (every surrogate in a high-low pair). */
const storableReference = (s: string): boolean => {
  if (s.includes("\u0000")) return false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    const isHigh = c >= 0xd800 && c <= 0xdbff
    const isLow = c >= 0xdc00 && c <= 0xdfff
    if (isHigh) {
      const next = s.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    } else if (isLow) return false
  }
  return true
}

/** Code units that exercise every branch: NUL, both surrogate halves, a whole pair, plain text. */
const textUnit = fc.constantFrom("a", "é", "\u0000", "\uD83D", "\uDE00", "\uD83D\uDE00", " ", "\uFFFF")
const texts = fc.array(textUnit, { maxLength: 24 }).map((units) => units.join(""))

describe("StoredText", () => {
  it("agrees with the reference definition", () => {
    fc.assert(
      fc.property(texts, (s) => {
        expect(isStorable(s)).toBe(storableReference(s))
        expect(Schema.is(StoredText)(s)).toBe(storableReference(s))
      }),
      { numRuns: 2_000 }
    )
  })

  it("agrees with String.prototype.isWellFormed on text without NUL", () => {
    const isWellFormed = (s: string) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (s) => {
        const noNul = s.replaceAll("\u0000", "")
        expect(isStorable(noNul)).toBe(isWellFormed(noNul))
      }),
      { numRuns: 300 }
    )
  })

  it("names the problem", () => {
    expect(textProblem("a\u0000b")).toBe("must not contain the NUL character")
    expect(textProblem("a\uD800b")).toContain("lone surrogate")
    expect(textProblem("\uDC00")).toContain("lone surrogate")
    expect(textProblem("a\uD83D")).toContain("lone surrogate")
    expect(textProblem("😀 ok")).toBeUndefined()
  })

  it("reads each code unit at most once", () => {
    for (const n of [1_000, 100_000]) {
      for (const s of ["a".repeat(n), "😀".repeat(n / 2), "\uD83D\uDE00".repeat(n / 2 - 1) + "\uD83D"]) {
        const { input, probe } = counting(s)
        textProblem(input)
        expect(probe.reads).toBeLessThanOrEqual(s.length)
      }
    }
  })

  it("bounded text checks the length first and stops there", () => {
    const decode = Schema.decodeUnknownResult(BoundedText(10))
    const long = "\u0000".repeat(11)
    const result = decode(long, { errors: "all" })
    expect(result._tag).toBe("Failure")
    // One issue: the storable check never ran on the over-long value.
    expect(String(result._tag === "Failure" ? result.failure : "").match(/Expected|must/g)).toHaveLength(1)
    expect(Schema.is(RequiredText(5))("  ")).toBe(false)
    expect(Schema.is(RequiredText(5))(" ok ")).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Email

/** The reference, by splitting: one `@`, a non-empty local part, at least two non-empty dot-separated labels. */
const emailReference = (s: string): boolean => {
  if (s.length > 254) return false
  for (const ch of s) {
    if (/\s/.test(ch) || ch < " " || ch === "\u007f" || "<>()[]\",;:\\".includes(ch)) return false
  }
  const parts = s.split("@")
  if (parts.length !== 2) return false
  const [local, domain] = parts as [string, string]
  const labels = domain.split(".")
  return local !== "" && labels.length >= 2 && labels.every((l) => l !== "")
}

const emailUnit = fc.constantFrom(
  "a",
  "b",
  "Z",
  "0",
  ".",
  ".",
  "@",
  "@",
  "-",
  "+",
  " ",
  "\t",
  "\u00a0",
  "\u2028",
  "<",
  ";",
  "\u0001",
  "é",
  "😀"
)
const emailish = fc.oneof(
  fc.array(emailUnit, { maxLength: 20 }).map((u) => u.join("")),
  // Mostly well-formed addresses with one random edit, so both answers are common.
  fc.tuple(
    fc.array(emailUnit, { minLength: 1, maxLength: 6 }),
    fc.array(fc.array(emailUnit, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 })
  ).map(([local, labels]) => `${local.join("")}@${labels.map((l) => l.join("")).join(".")}`)
)

describe("the email check", () => {
  it("agrees with the reference definition", () => {
    fc.assert(
      fc.property(emailish, (s) => {
        expect(isEmailAddress(s)).toBe(emailReference(s))
      }),
      { numRuns: 5_000 }
    )
  })

  it("accepts ordinary addresses and refuses the usual mistakes", () => {
    for (const ok of ["ada@example.com", "a.b+tag@mail.example.co.uk", "Ada@Example.COM", "x@y.z"]) {
      expect(isEmailAddress(ok), ok).toBe(true)
    }
    for (
      const bad of [
        "",
        "ada",
        "ada@",
        "@example.com",
        "ada@example",
        "ada@@example.com",
        "a@b@c.d",
        "ada@.example.com",
        "ada@example..com",
        "ada@example.com.",
        "ada @example.com",
        "<ada@example.com>",
        "ada@example.com\n",
        "a;b@c.d"
      ]
    ) {
      expect(isEmailAddress(bad), bad).toBe(false)
    }
  })

  it("reads each character at most once, including the inputs that made the old pattern backtrack", () => {
    for (const n of [100, 10_000, 1_000_000]) {
      for (
        const s of ["a@" + ".".repeat(n) + "@", "a@" + "b.".repeat(n), "a".repeat(n) + "@b.c", "a@b" + ".c".repeat(n)]
      ) {
        const { input, probe } = counting(s)
        isEmailAddress(input)
        // Longer than 254: refused on the length alone, without reading anything.
        expect(probe.reads).toBeLessThanOrEqual(s.length <= 254 ? s.length : 0)
      }
    }
  })

  it("as a schema: one issue for an over-long value, storable text only", () => {
    const decode = Schema.decodeUnknownResult(EmailAddress)
    const result = decode("a@" + ".".repeat(32_000) + "@", { errors: "all" })
    expect(result._tag).toBe("Failure")
    expect(String(result._tag === "Failure" ? result.failure : "").match(/Expected|must/g)).toHaveLength(1)
    expect(Schema.is(EmailAddress)("ada@example.com")).toBe(true)
    expect(Schema.is(EmailAddress)("ada@exam\uD800ple.com")).toBe(false)
  })
})
