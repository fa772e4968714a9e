/**
 * Versioned schema migrations, applied at start-up (or by a deploy step, with the store's `migrate: false`). All
 * pending migrations run in one transaction under an advisory lock of the schema, so several server processes
 * starting against one database apply each migration exactly once, and a failed migration leaves the schema as it was.
 *
 * Everything is made inside the store's schema (`PgSchema.ts`), the record of applied migrations too
 * (`feedback_migrations`: never a host's `schema_migrations`). Every tenant table's primary key and every foreign key
 * start with `organization_id`, so the schema can be distributed by organization (Citus) when one PostgreSQL is
 * outgrown; the migrations table is global.
 */
import { Data, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { MIGRATIONS_TABLE, PgStoreSchema, type PgStoreSchemaService } from "./PgSchema.ts"

export interface Migration {
  readonly id: number
  readonly name: string
  /** Statements run in order inside the migration transaction, with the store's schema as the `search_path`. */
  readonly statements: ReadonlyArray<string>
}

/**
 * An earlier version kept every table in `public` with its record in `public.schema_migrations`. Moving them, or
 * naming `public` as the schema, is the operator's choice (docs/EMBEDDING.md, "Upgrading an existing install"), never
 * made silently: migrating an empty schema beside them would start a new, empty store.
 */
export class LegacyInstallFound extends Data.TaggedError("LegacyInstallFound")<{ readonly message: string }> {}

/** An arbitrary constant that names "the schema migration lock" among advisory locks (with the schema's hash). */
const MIGRATION_LOCK = 7_240_113

/**
 * The store's functions (triggers included) run with the schema as their `search_path`, so that a statement from a
 * session of any `search_path` (a host's tooling, a DBA's `psql`) that fires a trigger finds the store's tables.
 * Immutable functions name no table and stay inlinable (`search_fold`, which indexes hold); extensions' are theirs.
 */
const functionsInTheirSchema = (schema: PgStoreSchemaService) =>
  `DO $do$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = '${schema.quoted}'::regnamespace AND p.provolatile <> 'i'
      AND (p.proname LIKE 'feedback\\_%' OR p.proname = 'rate_limit_spend')
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
        AND d.deptype = 'e')
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = ${schema.quoted}, pg_temp', f);
  END LOOP;
END
$do$`

/** A table of the earlier layout's shape: `(id, name, applied_at)` with migration 1 recorded as `organizations`. */
const earlierRecord = (sql: SqlClient.SqlClient, schema: string) =>
  Effect.gen(function*() {
    const [found] = yield* sql<{ readonly found: boolean }>`SELECT count(*) = 3 AS found FROM information_schema.columns
      WHERE table_schema = ${schema} AND table_name = 'schema_migrations' AND column_name IN ('id', 'name', 'applied_at')`
    if (found?.found !== true) return false
    const rows = yield* sql.unsafe<{ readonly id: number }>(
      `SELECT id FROM "${schema}".schema_migrations WHERE id = 1 AND name = 'organizations'`
    )
    return rows.length > 0
  })

const tableExists = (sql: SqlClient.SqlClient, schema: string, table: string) =>
  sql<{ readonly found: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = ${schema}
    AND tablename = ${table}) AS found`.pipe(Effect.map(([row]) => row?.found === true))

/**
 * Applies the pending migrations to the store's schema (`PgStoreSchema`, provided with the connection) and answers
 * their names. Makes the schema when it is missing (which
 * needs the right to create schemas in the database; a schema made beforehand by its owner needs only that owner).
 */
export const runMigrations = (migrations: ReadonlyArray<Migration>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const schema = yield* PgStoreSchema
    const ids = new Set<number>()
    for (const m of migrations) {
      if (ids.has(m.id)) return yield* Effect.die(new Error(`duplicate migration id ${m.id}`))
      ids.add(m.id)
    }
    const ordered = [...migrations].sort((a, b) => a.id - b.id)
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}, hashtext(${schema.name}))`
      const [present] = yield* sql<{ readonly found: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_namespace
        WHERE nspname = ${schema.name}) AS found`
      if (present?.found !== true) yield* sql.unsafe(`CREATE SCHEMA ${schema.quoted}`)
      // The connection may belong to a host's pool: the schema is set for this transaction only.
      yield* sql`SELECT set_config('search_path', ${schema.quoted}, true)`
      if (!(yield* tableExists(sql, schema.name, MIGRATIONS_TABLE))) {
        if (yield* earlierRecord(sql, schema.name)) {
          // The earlier layout in this very schema (`public`, or moved here whole): its record is adopted.
          yield* sql.unsafe(`ALTER TABLE ${schema.quoted}.schema_migrations RENAME TO ${MIGRATIONS_TABLE}`)
        } else if (schema.name !== "public" && (yield* earlierRecord(sql, "public"))) {
          return yield* new LegacyInstallFound({
            message: `The store's tables are in schema "public" (an earlier version's layout), not in ` +
              `"${schema.name}". Either keep them there (DATABASE_SCHEMA=public, or the layer's schema option) or ` +
              `move them: ALTER SCHEMA public RENAME TO ${schema.name}; CREATE SCHEMA public; (docs/EMBEDDING.md)`
          })
        }
      }
      yield* sql.unsafe(`CREATE TABLE IF NOT EXISTS ${schema.quoted}.${MIGRATIONS_TABLE} (
        id integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`)
      const applied = new Set(
        (yield* sql.unsafe<{ id: number }>(`SELECT id FROM ${schema.quoted}.${MIGRATIONS_TABLE}`)).map((r) =>
          Number(r.id)
        )
      )
      const pending = ordered.filter((m) => !applied.has(m.id))
      for (const migration of pending) {
        for (const statement of migration.statements) yield* sql.unsafe(statement)
        yield* sql.unsafe(`INSERT INTO ${schema.quoted}.${MIGRATIONS_TABLE} (id, name) VALUES ($1, $2)`, [
          migration.id,
          migration.name
        ])
      }
      if (pending.length > 0) yield* sql.unsafe(functionsInTheirSchema(schema))
      return pending.map((m) => `${m.id}_${m.name}`)
    }))
  })

export interface MigrationStatus {
  readonly applied: ReadonlyArray<{ readonly id: number; readonly name: string; readonly appliedAt: string }>
  readonly pending: ReadonlyArray<{ readonly id: number; readonly name: string }>
}

/** What `runMigrations` would do, without doing it (`feedback-admin-api migrate --status`); needs only reads. */
export const migrationStatus = (migrations: ReadonlyArray<Migration>) =>
  Effect.gen(function*() {
    const schema = yield* PgStoreSchema
    // Raw rows: the client may be a host's, whatever its column naming.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const rows = (yield* tableExists(sql, schema.name, MIGRATIONS_TABLE))
      ? yield* sql.unsafe<{ id: number; name: string; applied_at: Date | string }>(
        `SELECT id, name, applied_at FROM ${schema.quoted}.${MIGRATIONS_TABLE} ORDER BY id`
      )
      : []
    const applied = rows.map((r) => ({
      id: Number(r.id),
      name: r.name,
      appliedAt: new Date(r.applied_at).toISOString()
    }))
    const done = new Set(applied.map((m) => m.id))
    const pending = [...migrations].sort((a, b) => a.id - b.id).filter((m) => !done.has(m.id)).map(({ id, name }) => ({
      id,
      name
    }))
    return { applied, pending } satisfies MigrationStatus
  })
