/**
 * A set-based statement's event ids (`eventIdSeed`, `eventIdSql`; docs/DECISIONS.md §40): from one Node-made
 * UUIDv7 seed, the n-th row's id is a UUIDv7 with the seed's milliseconds, ascending in row order, after every id
 * this process made before the seed and before every id it makes after; the addition never reaches the variant
 * bits, even from the largest low bits a seed can have. Embedded PGlite, or TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel } from "@feedback/core"
import { UUID_V7_PATTERN } from "@feedback/testing"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import { eventIdSeed, eventIdSql } from "../src/kernel/EventIds.ts"
import { PgDatabase } from "../src/kernel/PgDatabase.ts"
import { withoutTransforms } from "../src/kernel/RawRows.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

/** The milliseconds of a UUIDv7. */
const millisOf = (id: string) => parseInt(id.replaceAll("-", "").slice(0, 12), 16)

layer(freshLayer((target) => PgDatabase(target)), { timeout: 120_000 })(
  `event ids of a statement (${storeName})`,
  (it) => {
    const idsFrom = (seed: readonly [string, string], rows: number) =>
      SqlClient.SqlClient.use((sql) =>
        withoutTransforms(sql).unsafe<{ id: string }>(
          `SELECT ${eventIdSql("$1", "$2", "ORDER BY g")} AS id FROM generate_series(1, $3::int) g ORDER BY g`,
          [seed[0], seed[1], rows]
        )
      ).pipe(Effect.map((rows) => rows.map((r) => r.id)))

    it.effect("UUIDv7 with the seed's milliseconds, ascending in row order, between the ids made before and after", () =>
      Effect.gen(function*() {
        for (
          const [millis, rows] of fc.sample(
            fc.tuple(fc.integer({ min: 0, max: 2 ** 47 }), fc.integer({ min: 1, max: 3_000 })),
            20
          )
        ) {
          const before = Kernel.uuidV7(millis)
          const ids = yield* idsFrom(eventIdSeed(millis), rows)
          const after = Kernel.uuidV7(millis)
          assert.strictEqual(ids.length, rows)
          assert.strictEqual(new Set(ids).size, rows)
          for (const id of ids) {
            assert.match(id, UUID_V7_PATTERN)
            assert.isTrue(millisOf(id) >= millis)
          }
          const all = [before, ...ids, after]
          for (let i = 1; i < all.length; i++) assert.isTrue(all[i - 1]! < all[i]!, `${all[i - 1]} < ${all[i]}`)
        }
      }).pipe(Effect.orDie))

    it.effect("the largest low bits a seed can have leave room for a statement's rows without touching the variant", () =>
      Effect.gen(function*() {
        // Variant 10, then the highest random bit cleared by the seed, then all ones: 0x9fff…ff as a signed bigint.
        const largest = (0x9fffffffffffffffn - (1n << 64n)).toString()
        const ids = yield* idsFrom(["0190f0000000" + "7abc", largest], 100_000)
        assert.strictEqual(ids[0], "0190f000-0000-7abc-a000-000000000000")
        assert.strictEqual(ids[99_999], "0190f000-0000-7abc-a000-00000001869f")
        for (const id of ids) assert.match(id, UUID_V7_PATTERN)
      }).pipe(Effect.orDie))
  }
)
