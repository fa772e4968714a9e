/**
 * Versioned schema migrations, applied at start-up. All pending migrations run in one transaction under an advisory
 * lock, so several server processes starting against one database apply each migration exactly once, and a failed
 * migration leaves the schema as it was.
 *
 * Every tenant table's primary key and every foreign key start with `organization_id`, so the schema can be
 * distributed by organization (Citus) when one PostgreSQL is outgrown. `schema_migrations` is the only global table.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export interface Migration {
  readonly id: number
  readonly name: string
  /** Statements run in order inside the migration transaction. */
  readonly statements: ReadonlyArray<string>
}

/** An arbitrary constant that names "the schema migration lock" among advisory locks. */
const MIGRATION_LOCK = 7_240_113

export const runMigrations = (migrations: ReadonlyArray<Migration>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = new Set<number>()
    for (const m of migrations) {
      if (ids.has(m.id)) return yield* Effect.die(new Error(`duplicate migration id ${m.id}`))
      ids.add(m.id)
    }
    const ordered = [...migrations].sort((a, b) => a.id - b.id)
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
      yield* sql.unsafe(`CREATE TABLE IF NOT EXISTS schema_migrations (
        id integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`)
      const applied = new Set((yield* sql<{ id: number }>`SELECT id FROM schema_migrations`).map((r) => Number(r.id)))
      const pending = ordered.filter((m) => !applied.has(m.id))
      for (const migration of pending) {
        for (const statement of migration.statements) yield* sql.unsafe(statement)
        yield* sql`INSERT INTO schema_migrations (id, name) VALUES (${migration.id}, ${migration.name})`
      }
      return pending.map((m) => `${m.id}_${m.name}`)
    }))
  })

export interface MigrationStatus {
  readonly applied: ReadonlyArray<{ readonly id: number; readonly name: string; readonly appliedAt: string }>
  readonly pending: ReadonlyArray<{ readonly id: number; readonly name: string }>
}

/** What `runMigrations` would do, without doing it (`feedback-admin-api migrate --status`). */
export const migrationStatus = (migrations: ReadonlyArray<Migration>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [table] = yield* sql<{ exists: boolean }>`SELECT to_regclass('schema_migrations') IS NOT NULL AS exists`
    const rows = table?.exists === true
      ? yield* sql<
        { id: number; name: string; appliedAt: Date | string }
      >`SELECT id, name, applied_at FROM schema_migrations ORDER BY id`
      : []
    const applied = rows.map((r) => ({
      id: Number(r.id),
      name: r.name,
      appliedAt: new Date(r.appliedAt).toISOString()
    }))
    const done = new Set(applied.map((m) => m.id))
    const pending = [...migrations].sort((a, b) => a.id - b.id).filter((m) => !done.has(m.id)).map(({ id, name }) => ({
      id,
      name
    }))
    return { applied, pending } satisfies MigrationStatus
  })
