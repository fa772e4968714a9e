/**
 * Migration 180: an export's chunks are compressed with lz4 where the server has it, and read back as written. On a
 * build without lz4 (the migration must still apply) they keep the default compression. Embedded PGlite, or
 * TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../src/kernel/Migrations.ts"
import { PgDatabase } from "../src/kernel/PgDatabase.ts"
import { migrations } from "../src/migrations/index.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

const ORG = "0190a000-0000-7000-8000-00000000180a"
const JOB = "0190a000-0000-7000-8000-00000000180b"

layer(freshLayer((target) => PgDatabase(target)), { timeout: 120_000 })(
  `export chunk compression (${storeName})`,
  (it) => {
    it.effect("a chunk is stored compressed, with lz4 where the server has it, and reads back as written", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* runMigrations(migrations)
        const lz4 = Exit.isSuccess(
          yield* Effect.exit(sql.unsafe(`CREATE TEMP TABLE lz4_probe (t text COMPRESSION lz4)`))
        )
        yield* sql.unsafe(
          `INSERT INTO organizations (organization_id, name, api_requests_per_minute, created_at)
          VALUES ($1, 'Chunks', 60, now())`,
          [ORG]
        )
        yield* sql.unsafe(
          `INSERT INTO jobs (organization_id, id, action, status, receiving, created_at, record)
          VALUES ($1, $2, 'export', 'running', false, now(), '{}')`,
          [ORG, JOB]
        )
        const text = Array.from({ length: 2_000 }, (_, i) => `{"externalId":"row-${i}","product":null,"title":null}\n`)
          .join("")
        yield* sql.unsafe(`INSERT INTO export_chunks (organization_id, job_id, seq, data) VALUES ($1, $2, 0, $3)`, [
          ORG,
          JOB,
          text
        ])
        const [row] = yield* sql.unsafe<{ data: string; method: string | null; stored: number; raw: number }>(
          `SELECT data, pg_column_compression(data) AS method, pg_column_size(data) AS stored,
          octet_length(data) AS raw FROM export_chunks WHERE organization_id = $1 AND job_id = $2`,
          [ORG, JOB]
        )
        assert.strictEqual(row!.data, text)
        assert.isBelow(Number(row!.stored), Number(row!.raw) / 4)
        assert.strictEqual(row!.method, lz4 ? "lz4" : "pglz")
      }))
  }
)
