#!/usr/bin/env node
/**
 * `feedback-pg-migrate [--status]`: the store's migration step from a shell or a deploy pipeline, with an owner's
 * rights, before servers start with `migrate: false` and a DML-only role (docs/EMBEDDING.md). Reads `DATABASE_URL`
 * (a PostgreSQL server) or `DATA_DIR` (embedded PGlite, default `./.data`) and `DATABASE_SCHEMA` (default `feedback`).
 * Exits 1 with the reason on a failure.
 */
import { Effect } from "effect"
import type { DatabaseTarget } from "../kernel/PgDatabase.ts"
import { migrateStore, storeMigrationStatus } from "../PgMigrate.ts"

const url = process.env["DATABASE_URL"]
const target: DatabaseTarget = url !== undefined && url !== ""
  ? { _tag: "Server", url, maxConnections: 1 }
  : { _tag: "Embedded", dataDir: process.env["DATA_DIR"] || "./.data" }

const program = process.argv.includes("--status")
  ? Effect.map(storeMigrationStatus(target), ({ applied, pending }) => {
    for (const m of pending) console.log(`pending  ${String(m.id).padStart(4, "0")}_${m.name}`)
    console.log(`${applied.length} applied, ${pending.length} pending`)
  })
  : Effect.map(migrateStore(target), (ran) => {
    console.log(ran.length === 0 ? "up to date" : `applied ${ran.join(", ")}`)
  })

Effect.runPromise(program).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`feedback-pg-migrate: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
