/**
 * An import slice's reviews travel as one array literal per column (`reviewColumnsInput`, read by `REVIEW_UNNEST`;
 * docs/DECISIONS.md §36): whatever the text (quotes, backslashes, braces, commas, spaces, the word NULL, any Unicode)
 * they read back as exactly the records `json_to_recordset` makes of the same `reviewInput` rows as JSON, row by row
 * and column by column. Embedded PGlite, or TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import { PgDatabase } from "../src/kernel/PgDatabase.ts"
import { withoutTransforms } from "../src/kernel/RawRows.ts"
import { REVIEW_RECORDSET, REVIEW_UNNEST, reviewColumnsInput } from "../src/reviews/PgReviewRows.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

// Text with what an array literal must escape or quote, and anything else PostgreSQL's text holds (no NUL).
const arbText = fc.oneof(
  fc.string({ unit: fc.constantFrom("\"", "\\", "{", "}", ",", " ", "\t", "\n", "a", "é", "😀", "NULL", "null") }),
  fc.string({ unit: "grapheme" }).map((s) => s.replaceAll("\u0000", "")),
  fc.constantFrom("", "NULL", "null", "\"", "\\", "{}", " x ")
)
const arbUuid = fc.uuid()
const arbTimestamp = fc.date({
  min: new Date("0002-01-01T00:00:00Z"),
  max: new Date("9998-12-31T23:59:59Z"),
  noInvalidDate: true
})
  .map((d) => d.toISOString())
const arbJson = fc.oneof(arbText, fc.integer(), fc.boolean(), fc.constant(null), fc.array(arbText, { maxLength: 3 }))
const optional = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined })

const arbRow = fc.record({
  id: arbUuid,
  site_id: optional(arbUuid),
  product_id: arbUuid,
  product_variant_id: optional(arbUuid),
  customer_id: optional(arbUuid),
  survey_id: optional(arbUuid),
  title: optional(arbText),
  body: optional(arbText),
  original_title: optional(arbText),
  original_body: optional(arbText),
  redacted_at: optional(arbTimestamp),
  rating: fc.double({ noNaN: true, noDefaultInfinity: true }),
  published: fc.boolean(),
  verified_buyer: fc.boolean(),
  flagged: fc.boolean(),
  flags: fc.array(arbText, { maxLength: 3 }),
  moderated_at: optional(arbTimestamp),
  ip_address: optional(arbText),
  browser_fingerprint: optional(arbText),
  ip_country: optional(arbText),
  user_agent: optional(arbText),
  submit_seconds: optional(fc.double({ noNaN: true, noDefaultInfinity: true })),
  metadata: fc.dictionary(arbText, arbJson, { maxKeys: 3 }),
  external_id: optional(arbText),
  import_row: optional(fc.integer({ min: 0, max: 1_000_000 })),
  created_at: arbTimestamp,
  updated_at: arbTimestamp
})

layer(freshLayer((target) => PgDatabase(target)), { timeout: 120_000 })(
  `review rows as columns (${storeName})`,
  (it) => {
    it.effect("read back as the same records as the same rows in JSON", () =>
      Effect.gen(function*() {
        const sql = withoutTransforms(yield* SqlClient.SqlClient)
        const columns = REVIEW_RECORDSET.split(",").map((c) => c.trim().split(/\s+/)[0]!)
        // Each record as text (row_to_json of the typed columns), in input order.
        const asText = `SELECT row_to_json(x)::text AS r FROM `
        for (const rows of fc.sample(fc.array(arbRow, { minLength: 1, maxLength: 40 }), 25)) {
          const input = reviewColumnsInput(rows)
          // $2 and $12… as REVIEW_UNNEST numbers them; $1 and $3…$11 unused here but typed.
          const params: Array<unknown> = [null, input[0], ...Array.from({ length: 9 }, () => null), ...input.slice(1)]
          const fromColumns = yield* sql.unsafe<{ r: string }>(
            `${asText}${REVIEW_UNNEST} WHERE ${
              [1, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((n) => `$${n}::text IS NULL`).join(" AND ")
            }`,
            params
          )
          const fromJson = yield* sql.unsafe<{ r: string }>(
            `${asText}json_to_recordset($1::json) AS x(${REVIEW_RECORDSET})`,
            [JSON.stringify(rows)]
          )
          assert.strictEqual(fromColumns.length, rows.length)
          assert.deepStrictEqual(fromColumns.map((r) => r.r), fromJson.map((r) => r.r))
          assert.deepStrictEqual(Object.keys(JSON.parse(fromColumns[0]!.r)), columns)
        }
      }).pipe(Effect.orDie))
  }
)
