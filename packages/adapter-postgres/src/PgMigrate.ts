/**
 * The migration step on its own, for deploy pipelines that migrate with an owner's rights before the servers start
 * with a DML-only role and `migrate: false` (docs/EMBEDDING.md). `feedback-pg-migrate` runs it from a shell.
 */
import type { PgClient } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { type LegacyInstallFound, migrationStatus, type MigrationStatus, runMigrations } from "./kernel/Migrations.ts"
import { type DatabaseTarget, PgDatabase, PgHostDatabase } from "./kernel/PgDatabase.ts"
import { migrations } from "./migrations/index.ts"

const pending = runMigrations(migrations)
const status = migrationStatus(migrations)

/** Applies the store's pending migrations to `target` (its `schema`); answers the ones it applied. */
export const migrateStore = (
  target: DatabaseTarget
): Effect.Effect<ReadonlyArray<string>, SqlError | LegacyInstallFound> =>
  pending.pipe(Effect.provide(PgDatabase(target)))

/** The applied and pending migrations of `target`'s schema, changing nothing. */
export const storeMigrationStatus = (target: DatabaseTarget): Effect.Effect<MigrationStatus, SqlError> =>
  status.pipe(Effect.provide(PgDatabase(target)))

/** Applies the pending migrations through a host's own `PgClient` (its connection settings; `PgHostDatabase`). */
export const migrateWithClient = (
  options: { readonly schema?: string | undefined } = {}
): Effect.Effect<ReadonlyArray<string>, SqlError | LegacyInstallFound, PgClient.PgClient> =>
  pending.pipe(Effect.provide(PgHostDatabase({ ...options, maxConnections: 1 }).pipe(Layer.fresh)))

/** `migrateStore` as a promise, for a pipeline that is not an Effect program: `await migratePostgres({ url })`. */
export const migratePostgres = (options: {
  readonly url: string
  readonly schema?: string | undefined
}): Promise<ReadonlyArray<string>> =>
  Effect.runPromise(
    migrateStore({ _tag: "Server", url: options.url, schema: options.schema, maxConnections: 1 }).pipe(Effect.scoped)
  )
