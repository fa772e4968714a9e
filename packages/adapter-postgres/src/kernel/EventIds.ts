/**
 * Ids for the events a set-based statement records (an import slice, a bulk moderation: up to 100,000 rows), made
 * in SQL from one UUIDv7 made in Node (docs/DECISIONS.md §40). The statement's n-th event gets that id with n added
 * to its random low bits: its 48-bit milliseconds, version, 12-bit sequence and variant stay, so
 *
 * - the ids are RFC 9562 UUIDv7 (monotonic random, method 2 of §6.2) and unique: another statement's ids start
 *   from other random bits (or another millisecond or sequence), and n never carries into the variant bits;
 * - they sort in the statement's row order, after every id this process made before and before every id it makes
 *   after (the seed took its place in `uuidV7`'s millisecond and sequence);
 * - a row costs an addition, `to_hex` and a uuid cast instead of a `clock_timestamp()` and a `gen_random_uuid()`.
 */
import { Kernel } from "@feedback/core"

/**
 * The two parameters of a statement's event ids: the seed's high 64 bits as 16 hex digits and its low 64 as a
 * bigint (values), or the placeholders that carry them in a statement (`$5`, `$6`).
 */
export type EventIdSeed = readonly [high: string, low: string]

// The low 64 bits are variant `10` then 62 random bits; clearing the highest random bit leaves 2^61 ids of room
// before an addition could reach the variant. As a signed bigint the low half is negative (its top bit is set), and
// `to_hex` of a bigint prints its 64 bits unsigned, so the sum always prints as 16 digits starting 8–b.
const ROOM = 1n << 61n
const TWO_64 = 1n << 64n

/** A fresh seed for one statement's event ids. */
export const eventIdSeed = (millis = Date.now()): EventIdSeed => {
  const hex = Kernel.uuidV7(millis).replaceAll("-", "")
  const low = BigInt(`0x${hex.slice(16)}`) & ~ROOM
  return [hex.slice(0, 16), (low - TWO_64).toString()]
}

/**
 * The SQL of the n-th event id, n the row's number in `order` (a window's ORDER BY, empty for the rows' own order),
 * from the seed's two parameters (`high`, `low`: placeholders such as `$5`, `$6`).
 */
export const eventIdSql = (high: string, low: string, order = "") =>
  eventIdOfRowSql(high, low, `row_number() OVER (${order})`)

/** The SQL of the n-th id, n an expression already numbering the rows from 1 (a `row_number()` computed earlier). */
export const eventIdOfRowSql = (high: string, low: string, n: string) =>
  `(${high}::text || to_hex(${low}::bigint + ${n}))::uuid`
