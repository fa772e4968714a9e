/**
 * The PostgreSQL schema that holds every object of the store (tables, indexes, functions, sequences, its migrations
 * table), so that it can live in a host's own database beside the host's tables (docs/DECISIONS.md §58). The store's
 * connections have it as their `search_path`, so statements name objects without a schema and every process of one
 * schema reads and writes only that schema; `DATABASE_SCHEMA` names it when the layer's option does not.
 */
import { Config, Context, Effect } from "effect"

/** The schema when neither the option nor `DATABASE_SCHEMA` names one. */
export const DEFAULT_SCHEMA = "feedback"

/** The migrations table, inside the schema: its own name, so that it never meets a host's `schema_migrations`. */
export const MIGRATIONS_TABLE = "feedback_migrations"

/**
 * Lower-case identifiers only: no quoting surprises between SQL, `LISTEN` and an operator's `psql`, and room for the
 * `_work` suffix of the schema's notification channel within PostgreSQL's 63-byte names. `pg_` is PostgreSQL's own.
 */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,57}$/

export interface PgStoreSchemaService {
  /** The schema's name (validated). */
  readonly name: string
  /** Its name quoted as an identifier, for SQL text. */
  readonly quoted: string
  /** The `LISTEN`/`NOTIFY` channel of this schema's work signals: one per schema, so two never wake each other. */
  readonly channel: string
}

/** The store's schema, provided with its connection (`PgDatabase`). */
export class PgStoreSchema extends Context.Service<PgStoreSchema, PgStoreSchemaService>()(
  "@feedback/adapter-postgres/PgStoreSchema"
) {}

/** The channel a schema's triggers notify on; migration 151's `feedback_work_channel()` computes the same. */
export const workChannel = (schema: string) => `${schema}_work`

/** A schema's names, or a defect naming the rule when the name is not one the store accepts. */
export const storeSchema = (name: string): PgStoreSchemaService => {
  if (!SCHEMA_NAME.test(name) || name.startsWith("pg_")) {
    throw new Error(
      `DATABASE_SCHEMA / schema: ${JSON.stringify(name)} is not a schema name the store accepts ` +
        "(lower-case letters, digits and _, starting with a letter or _, at most 58 characters, not pg_…)"
    )
  }
  return { name, quoted: `"${name}"`, channel: workChannel(name) }
}

/** The schema named by the option, else by `DATABASE_SCHEMA`, else `feedback`. */
export const resolveStoreSchema = (schema: string | undefined): Effect.Effect<PgStoreSchemaService> =>
  Effect.gen(function*() {
    const name = schema ?? (yield* Config.String("DATABASE_SCHEMA").pipe(Config.withDefault(DEFAULT_SCHEMA)))
    return yield* Effect.try({ try: () => storeSchema(name === "" ? DEFAULT_SCHEMA : name), catch: (e) => e })
  }).pipe(Effect.orDie)
