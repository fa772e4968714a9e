/** Conversions between PostgreSQL row values and the core's value types. */
import type { Timestamp } from "@feedback/core"

/** timestamptz arrives as a Date; the core speaks canonical ISO strings. */
export const toTimestamp = (value: Date | string): Timestamp.Timestamp =>
  (value instanceof Date ? value : new Date(value)).toISOString() as Timestamp.Timestamp

export const toNullableTimestamp = (value: Date | string | null): Timestamp.Timestamp | null =>
  value === null ? null : toTimestamp(value)

/** jsonb arrives parsed, or as text from some drivers and through PGlite: both become the JSON value. */
export const jsonValue = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A
