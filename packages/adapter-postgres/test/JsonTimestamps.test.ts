/**
 * A timestamptz read inside JSON (`to_json`, how the review page reads its includes: docs/DECISIONS.md §33) gives the
 * same canonical Timestamp as the same value read as a column, whatever its microseconds, its era and the session's
 * time zone. Embedded PGlite, or TEST_DATABASE_URL.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import { PgDatabase } from "../src/kernel/PgDatabase.ts"
import { withoutTransforms } from "../src/kernel/RawRows.ts"
import { toTimestamp } from "../src/kernel/SqlRows.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

// Microseconds since 1970 from year 2 to 9998 (4-digit years AD in every zone: the API's timestamps have no others),
// with the edges that round differently around PostgreSQL's epoch.
const arbMicros = fc.oneof(
  fc.bigInt({ min: -62_104_060_800_000_000n, max: 253_370_764_799_999_999n }),
  fc.bigInt({ min: 946_684_799_998_000n, max: 946_684_800_002_000n }),
  fc.constantFrom(0n, -1n, 1n, -999n, -1_000n, -1_001n, 946_684_800_000_000n)
)
const arbZone = fc.constantFrom("UTC", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham", "America/Los_Angeles")

layer(freshLayer((target) => PgDatabase(target)), { timeout: 120_000 })(`timestamptz in JSON (${storeName})`, (it) => {
  it.effect("reads as the same Timestamp as the column, in every session time zone", () =>
    Effect.gen(function*() {
      const sql = withoutTransforms(yield* SqlClient.SqlClient)
      const samples = fc.sample(fc.tuple(arbMicros, arbZone), 300)
      for (const zone of new Set(samples.map(([, z]) => z))) {
        const micros = samples.filter(([, z]) => z === zone).map(([m]) => String(m))
        // One connection for the zone and the read: a transaction pins it.
        const rows = yield* sql.withTransaction(Effect.andThen(
          sql.unsafe(`SET LOCAL TIME ZONE '${zone}'`),
          sql.unsafe<{ readonly c: Date; readonly j: unknown; readonly m: string }>(
            // Whole days and the microseconds left, each exact (an interval times a float8 loses microseconds).
            `SELECT t AS c, to_json(t) AS j, m FROM (
               SELECT to_timestamp(0) + div(m::bigint, 86400000000) * interval '1 day'
                 + mod(m::bigint, 86400000000) * interval '1 microsecond' AS t, m
               FROM unnest($1::text[]) AS m) s`,
            [`{${micros.join(",")}}`]
          )
        ))
        assert.strictEqual(rows.length, micros.length)
        for (const r of rows) {
          const text = typeof r.j === "string" && r.j.startsWith("\"") ? JSON.parse(r.j) as string : r.j as string
          const fromJson = Effect.runSync(
            Effect.try(() => toTimestamp(text)).pipe(Effect.orElseSucceed(() => `unreadable: ${text}`))
          )
          assert.strictEqual(fromJson, toTimestamp(r.c), `${r.m} µs in ${zone}: ${text}`)
        }
      }
    }))
})

describe("toTimestamp", () => {
  it("formats a Date as toISOString does, for every millisecond from year -271821 to 275760", () => {
    fc.assert(
      fc.property(fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }), (ms) => {
        assert.strictEqual(toTimestamp(new Date(ms)), new Date(ms).toISOString())
      }),
      { numRuns: 2000 }
    )
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => {
        assert.strictEqual(toTimestamp(new Date(ms)), new Date(ms).toISOString())
      }),
      { numRuns: 20_000 }
    )
    for (
      const ms of [
        0,
        -1,
        1,
        946_684_800_000,
        951_782_400_000,
        253_402_300_799_999,
        -62_167_219_200_000,
        4_107_542_400_000
      ]
    ) {
      assert.strictEqual(toTimestamp(new Date(ms)), new Date(ms).toISOString())
    }
  })
})
