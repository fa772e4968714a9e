/**
 * Timestamps are ISO 8601 strings in UTC with a trailing `Z`, always with millisecond precision
 * (`2026-11-22T10:00:00.000Z`, the form of `Date.prototype.toISOString`). One fixed width means two timestamps
 * compare correctly as strings, which keeps sorting and keyset cursors identical in memory and in SQL.
 */
import { Clock, Effect, Schema } from "effect"

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
// Fixed-width fields and bounded quantifiers only: matching is linear in the input.
const isoInput = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/

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
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((x) => x === undefined ? 0 : Number(x))
  if (
    year! < 1 || month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!) || hour! > 23 ||
    minute! > 59 || second! > 59 || offH! > 23 || offM! > 59
  ) return undefined
  const millis = Date.parse(s)
  if (Number.isNaN(millis)) return undefined
  const t = new Date(millis).toISOString()
  return isoUtc.test(t) && !t.startsWith("0000") ? t : undefined
}

/** Two ASCII digits of `s` at `i` as a number (the caller checked the shape). */
const two = (s: string, i: number) => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48

/**
 * The canonical form and a real instant, without parsing a date: every response checks every timestamp it encodes,
 * so this runs for each one of a page. The same answer as `isoUtc.test(s) && canonicalOf(s) === s` (a property test
 * compares them): fixed positions, fields within the calendar, year 0001 or later.
 */
export const isCanonicalTimestamp = (s: string): boolean => {
  if (s.length !== 24 || !isoUtc.test(s)) return false
  const year = two(s, 0) * 100 + two(s, 2)
  const month = two(s, 5)
  const day = two(s, 8)
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) &&
    two(s, 11) <= 23 && two(s, 14) <= 59 && two(s, 17) <= 59
}

/** The reference for `isCanonicalTimestamp`: parse, normalise, compare. */
export const isCanonicalTimestampByParsing = (s: string): boolean => isoUtc.test(s) && canonicalOf(s) === s

/**
 * What generators (property tests, the API fuzz harness) draw timestamps from: every match is a real instant (days
 * 01–28 exist in every month), so generation never has to discard a sample the strict check refuses.
 */
export const validInstantPattern = /^(19[7-9][0-9]|20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z$/

/** The canonical form only, and a real instant (`2026-02-30T00:00:00.000Z` is refused, not rolled over). */
export const Timestamp = Schema.String.pipe(
  Schema.check(Schema.makeFilter(isCanonicalTimestamp, {
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
export const fromDate = (date: Date): Timestamp => date.toISOString() as Timestamp
/** Normalises any parseable date-time string to the canonical form. */
export const normalize = (s: string): Timestamp => new Date(Date.parse(s)).toISOString() as Timestamp
export const toMillis = (t: Timestamp): number => Date.parse(t)

/** The current time as a Timestamp, from Effect's Clock so tests can move time with TestClock. */
export const now: Effect.Effect<Timestamp> = Effect.map(Clock.currentTimeMillis, fromMillis)
