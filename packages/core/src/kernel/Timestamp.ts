/**
 * Timestamps are ISO 8601 strings in UTC with a trailing `Z`, always with millisecond precision
 * (`2026-11-22T10:00:00.000Z`, the form of `Date.prototype.toISOString`). One fixed width means two timestamps
 * compare correctly as strings, which keeps sorting and keyset cursors identical in memory and in SQL.
 */
import { Clock, Effect, Schema } from "effect"

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
// Fixed-width fields and bounded quantifiers only: matching is linear in the input.
const isoInput = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|[+-](\d{2}):(\d{2}))$/

const isLeapYear = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const
const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : monthDays[month - 1]!

/**
 * Any ISO 8601 date-time with an offset, normalised to the canonical Timestamp, or undefined. `Date.parse` alone
 * is too lenient: it rolls `02-30` over into March and `24:00` into the next day. Every field is checked against
 * the calendar first, and an instant whose canonical year falls outside 0001..9999 is refused, because it would
 * neither compare correctly as a string nor be accepted by PostgreSQL.
 */
const canonicalOf = (s: string): string | undefined => {
  const m = isoInput.exec(s)
  if (m === null) return undefined
  const year = Number(m[1]), month = Number(m[2]), day = Number(m[3]), hour = Number(m[4]), minute = Number(m[5])
  const second = m[6] === undefined ? 0 : Number(m[6])
  const offH = m[8] === undefined ? 0 : Number(m[8]), offM = m[9] === undefined ? 0 : Number(m[9])
  if (
    year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 ||
    minute > 59 || second > 59 || offH > 23 || offM > 59
  ) return undefined
  // A zero offset names the UTC fields themselves: written out directly, as `Date` would (fraction truncated to
  // milliseconds), without its parse and format, which an import pays per row (docs/DECISIONS.md §32).
  if (offH === 0 && offM === 0) {
    const fraction = m[7] === undefined ? "000" : (m[7] + "00").slice(0, 3)
    return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? "00"}.${fraction}Z`
  }
  return canonicalByDate(s)
}

/** The instant of a checked ISO 8601 string with an offset, through `Date`. */
const canonicalByDate = (s: string): string | undefined => {
  const millis = Date.parse(s)
  if (Number.isNaN(millis)) return undefined
  const t = new Date(millis).toISOString()
  return isoUtc.test(t) && !t.startsWith("0000") ? t : undefined
}

/**
 * Whether `s` is a canonical Timestamp: exactly `canonicalOf(s) === s` (the property test in Timestamp.test.ts says
 * so), without its regex captures, `Date` round trip and allocations. Every timestamp of every response is checked
 * when it is encoded, so this runs several times per listed record.
 */
export const isCanonical = (s: string): boolean => {
  if (!isoUtc.test(s)) return false
  const digit = (i: number) => s.charCodeAt(i) - 48
  const two = (i: number) => digit(i) * 10 + digit(i + 1)
  const year = two(0) * 100 + two(2)
  const month = two(5)
  const day = two(8)
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && two(11) <= 23 &&
    two(14) <= 59 && two(17) <= 59
}

/**
 * What generators (property tests, the API fuzz harness) draw timestamps from: every match is a real instant (days
 * 01–28 exist in every month), so generation never has to discard a sample the strict check refuses.
 */
export const validInstantPattern =
  /^(19[7-9][0-9]|20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z$/

/** The canonical form only, and a real instant (`2026-02-30T00:00:00.000Z` is refused, not rolled over). */
export const Timestamp = Schema.String.pipe(
  Schema.check(Schema.makeFilter(isCanonical, {
    expected: "an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00.000Z",
    arbitraryConstraint: { patterns: [validInstantPattern] }
  })),
  Schema.brand("Timestamp")
)
export type Timestamp = typeof Timestamp.Type

/** Any ISO 8601 date-time a caller may send (with or without milliseconds, any offset), normalised to a Timestamp. */
export const TimestampInput = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => canonicalOf(s) !== undefined, {
    expected: "an ISO 8601 date-time such as 2026-01-31T12:00:00Z",
    arbitraryConstraint: { patterns: [validInstantPattern] }
  }))
)

/** `s` as a canonical Timestamp when it is a real instant in any ISO 8601 form with an offset (see `canonicalOf`). */
export const parse = (s: string): Timestamp | undefined => canonicalOf(s) as Timestamp | undefined

export const fromMillis = (millis: number): Timestamp => new Date(millis).toISOString() as Timestamp
/** Normalises any parseable date-time string to the canonical form. */
export const normalize = (s: string): Timestamp => new Date(Date.parse(s)).toISOString() as Timestamp
export const toMillis = (t: Timestamp): number => Date.parse(t)

/** The current time as a Timestamp, from Effect's Clock so tests can move time with TestClock. */
export const now: Effect.Effect<Timestamp> = Effect.map(Clock.currentTimeMillis, fromMillis)
