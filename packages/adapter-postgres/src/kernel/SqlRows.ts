/** Conversions between PostgreSQL row values and the core's value types. */
import type { Timestamp } from "@feedback/core"

/**
 * timestamptz as PostgreSQL writes it in JSON (`to_json`): ISO 8601 with a 4-digit year, up to microseconds, and
 * the session zone's offset (with seconds for local mean times, e.g. `-07:52:58`).
 */
const JSON_TIMESTAMPTZ = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d):(\d\d)(?::(\d\d))?$/
const PG_EPOCH_MS = 946_684_800_000
/** 400 Gregorian years in ms: `Date.UTC` reads years 0–99 as 1900–1999, so those are shifted by a whole cycle. */
const CYCLE_MS = 12_622_780_800_000

/**
 * The milliseconds of a timestamptz written by `to_json`, cut as the client cuts a column's microseconds (toward
 * 2000-01-01, its epoch), so a value reads the same through JSON as through a column (JsonTimestamps.test.ts).
 * Undefined for any other form. `new Date(text)` cost 2–3 µs a value, the largest single cost of a page with includes.
 */
const jsonTimestampMillis = (text: string): number | undefined => {
  const m = JSON_TIMESTAMPTZ.exec(text)
  if (m === null) return undefined
  const year = Number(m[1])
  const offsetSeconds = (m[8] === "-" ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10]) * 60 + Number(m[11] ?? 0))
  const wholeMs = Date.UTC(year < 100 ? year + 400 : year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) -
    (year < 100 ? CYCLE_MS : 0) - offsetSeconds * 1000
  const fraction = m[7] === undefined ? 0 : Number(m[7].padEnd(6, "0")) / 1000
  // Whole seconds are whole milliseconds, so only the fraction is cut: down after the epoch, up before it.
  return wholeMs + (wholeMs >= PG_EPOCH_MS ? Math.floor(fraction) : Math.ceil(fraction))
}

/** timestamptz arrives as a Date (a column) or as text (inside JSON); the core speaks canonical ISO strings. */
export const toTimestamp = (value: Date | string): Timestamp.Timestamp => {
  if (value instanceof Date) return value.toISOString() as Timestamp.Timestamp
  const ms = jsonTimestampMillis(value)
  return (ms === undefined ? new Date(value) : new Date(ms)).toISOString() as Timestamp.Timestamp
}

export const toNullableTimestamp = (value: Date | string | null): Timestamp.Timestamp | null =>
  value === null ? null : toTimestamp(value)

/** jsonb arrives parsed, or as text from some drivers and through PGlite: both become the JSON value. */
export const jsonValue = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A
