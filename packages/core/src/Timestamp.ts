/**
 * Timestamps are ISO 8601 strings in UTC with a trailing `Z`, always with millisecond precision
 * (`2026-11-22T10:00:00.000Z`, the form of `Date.prototype.toISOString`). One fixed width means two timestamps
 * compare correctly as strings, which keeps sorting and keyset cursors identical in memory and in SQL.
 */
import { Clock, Effect, Schema } from "effect"

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

export const Timestamp = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => isoUtc.test(s) && !Number.isNaN(Date.parse(s)), {
    expected: "an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00.000Z"
  })),
  Schema.brand("Timestamp")
)
export type Timestamp = typeof Timestamp.Type

/** Any ISO 8601 date-time a caller may send (with or without milliseconds, any offset), normalised to a Timestamp. */
export const TimestampInput = Schema.String.pipe(
  Schema.check(Schema.makeFilter((s: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)), {
    expected: "an ISO 8601 date-time such as 2026-01-31T12:00:00Z"
  }))
)

export const fromMillis = (millis: number): Timestamp => new Date(millis).toISOString() as Timestamp
export const fromDate = (date: Date): Timestamp => date.toISOString() as Timestamp
/** Normalises any parseable date-time string to the canonical form. */
export const normalize = (s: string): Timestamp => new Date(Date.parse(s)).toISOString() as Timestamp
export const toMillis = (t: Timestamp): number => Date.parse(t)

/** The current time as a Timestamp, from Effect's Clock so tests can move time with TestClock. */
export const now: Effect.Effect<Timestamp> = Effect.map(Clock.currentTimeMillis, fromMillis)
