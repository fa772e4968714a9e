/**
 * The one email check of the API (customers, review-import rows, question askers): `local@domain`, a single `@`,
 * a dotted domain without empty labels, no blanks, controls or the characters that would split a mail header
 * (`<>()[]",;:\`), at most 254 characters (RFC 5321).
 *
 * It is a hand-written scan, not a regex: the former pattern `^[^\s@]+@[^\s@]+\.[^\s@]+$` backtracks quadratically
 * on a domain of many dots, and this check runs on untrusted input (`docs/SECURITY.md`).
 */
import { Schema } from "effect"
import { textProblem } from "./Text.ts"

const EMAIL_MAX_LENGTH = 254

/** The code units JavaScript's `\s` matches. */
const isBlank = (c: number): boolean =>
  (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff

/** `<>()[]",;:\` and controls: never part of a plain address, and unsafe in a mail header. */
const forbidden = new Set([..."<>()[]\",;:\\"].map((ch) => ch.charCodeAt(0)))
const isForbidden = (c: number): boolean => c < 0x20 || c === 0x7f || isBlank(c) || forbidden.has(c)

const AT = 0x40
const DOT = 0x2e

/** True when `s` is an email address by the rule above. Linear in `s`, and stops at the first bad character. */
export const isEmailAddress = (s: string): boolean => {
  if (s.length > EMAIL_MAX_LENGTH) return false
  let at = -1
  let domainDots = 0
  let previous = -1
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === AT) {
      if (at !== -1 || i === 0) return false
      at = i
    } else if (isForbidden(c)) {
      return false
    } else if (c === DOT && at !== -1) {
      // A dot may neither start the domain nor follow another dot: every label is non-empty.
      if (previous === DOT || previous === AT) return false
      domainDots++
    }
    previous = c
  }
  return at !== -1 && domainDots > 0 && previous !== DOT
}

/**
 * An email address as a schema. The length check aborts, so an over-long value is never scanned; the address is
 * also storable text (no lone surrogate).
 */
export const EmailAddress = Schema.String.check(
  Schema.isMaxLength(EMAIL_MAX_LENGTH).abort(),
  Schema.makeFilter(
    (s: string) => isEmailAddress(s) ? textProblem(s) : "must be an email address such as ada@example.com",
    // Generators draw from a pattern whose every match is an address, so they never discard a sample.
    {
      expected: "an email address such as ada@example.com",
      toJsonSchema: () => ({ format: "email" }),
      arbitraryConstraint: { patterns: [/^[a-z0-9]{1,20}@[a-z0-9]{1,20}\.[a-z]{2,6}$/] }
    }
  )
)
