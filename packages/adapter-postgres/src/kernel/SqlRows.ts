/** Conversions between PostgreSQL row values and the core's value types. */
import type { Kernel } from "@feedback/core"

const PG_EPOCH_MS = 946_684_800_000
/** 400 Gregorian years in ms: `Date.UTC` reads years 0–99 as 1900–1999, so those are shifted by a whole cycle. */
const CYCLE_MS = 12_622_780_800_000

/** The decimal number in `text[from, to)`, or -1 if any of it is not a digit. */
const digitsAt = (text: string, from: number, to: number): number => {
  let n = 0
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/**
 * The milliseconds of a timestamptz as PostgreSQL writes it in JSON (`to_json`): `YYYY-MM-DDTHH:MM:SS`, up to six
 * fraction digits, then the session zone's offset `±HH:MM` (with `:SS` for local mean times). Microseconds are cut
 * as the client cuts a column's (toward 2000-01-01, its epoch), so a value reads the same through JSON as through a
 * column (JsonTimestamps.test.ts). Undefined for any other form. Read by character codes, cheaper than a regular
 * expression or `new Date(text)` on a path that reads hundreds per page (docs/DECISIONS.md §33).
 */
const jsonTimestampMillis = (text: string): number | undefined => {
  if (
    text.length < 25 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58
  ) return undefined
  const year = digitsAt(text, 0, 4), month = digitsAt(text, 5, 7), day = digitsAt(text, 8, 10)
  const hours = digitsAt(text, 11, 13), minutes = digitsAt(text, 14, 16), seconds = digitsAt(text, 17, 19)
  let i = 19
  let micros = 0
  if (text.charCodeAt(i) === 46) {
    const end = i + 1 + Math.min(6, text.length - i - 1)
    let j = i + 1
    while (j < end && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++
    if (j === i + 1) return undefined
    micros = digitsAt(text, i + 1, j) * 10 ** (6 - (j - i - 1))
    i = j
  }
  const sign = text.charCodeAt(i)
  const rest = text.length - i
  if (
    (sign !== 43 && sign !== 45) || (rest !== 6 && rest !== 9) || text.charCodeAt(i + 3) !== 58 ||
    (rest === 9 && text.charCodeAt(i + 6) !== 58)
  ) return undefined
  const oh = digitsAt(text, i + 1, i + 3),
    om = digitsAt(text, i + 4, i + 6),
    os = rest === 9 ? digitsAt(text, i + 7, i + 9) : 0
  if ((year | month | day | hours | minutes | seconds | oh | om | os) < 0) return undefined
  const offsetSeconds = (sign === 45 ? -1 : 1) * (oh * 3600 + om * 60 + os)
  const wholeMs = Date.UTC(year < 100 ? year + 400 : year, month - 1, day, hours, minutes, seconds) -
    (year < 100 ? CYCLE_MS : 0) - offsetSeconds * 1000
  // Whole seconds are whole milliseconds, so only the fraction is cut: down after the epoch, up before it.
  return wholeMs + (wholeMs >= PG_EPOCH_MS ? Math.floor(micros / 1000) : Math.ceil(micros / 1000))
}

const pad2 = (n: number) => (n < 10 ? "0" : "") + n
const pad3 = (n: number) => (n < 10 ? "00" : n < 100 ? "0" : "") + n
const DAY_MS = 86_400_000

/**
 * `new Date(ms).toISOString()` for years 0–9999, by arithmetic (civil date from days, H. Hinnant's algorithm): about
 * half its cost, and a page reads hundreds of timestamps. Other years go to `toISOString` (its `±YYYYYY` form).
 */
const isoOfMillis = (ms: number): string => {
  if (!(ms >= -62_167_219_200_000 && ms < 253_402_300_800_000)) return new Date(ms).toISOString()
  const days = Math.floor(ms / DAY_MS)
  let rest = ms - days * DAY_MS
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const y = String(year)
  return "0000".slice(y.length) + y + "-" + pad2(month) + "-" + pad2(day) + "T" + pad2(hours) + ":" + pad2(minutes) +
    ":" + pad2(seconds) + "." + pad3(rest - seconds * 1000) + "Z"
}

/** timestamptz arrives as a Date (a column) or as text (inside JSON); the core speaks canonical ISO strings. */
export const toTimestamp = (value: Date | string): Kernel.Timestamp.Timestamp => {
  if (value instanceof Date) {
    const ms = value.getTime()
    return (Number.isNaN(ms) ? value.toISOString() : isoOfMillis(ms)) as Kernel.Timestamp.Timestamp
  }
  const ms = jsonTimestampMillis(value)
  return (ms === undefined ? new Date(value).toISOString() : isoOfMillis(ms)) as Kernel.Timestamp.Timestamp
}

export const toNullableTimestamp = (value: Date | string | null): Kernel.Timestamp.Timestamp | null =>
  value === null ? null : toTimestamp(value)

/** jsonb arrives parsed, or as text from some drivers and through PGlite: both become the JSON value. */
export const jsonValue = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A
