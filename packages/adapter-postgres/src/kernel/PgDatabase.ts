/**
 * The connection to PostgreSQL: a server (`postgres://…`) or embedded PGlite in a data directory.
 *
 * Embedded PGlite is driven through `@electric-sql/pglite-socket`, which speaks the PostgreSQL wire protocol, so the
 * very same `@effect/sql-pg` client and SQL run against both (the `@effect/sql-pglite` beta still imports effect's
 * old `unstable/` paths). The socket is a Unix socket inside the data directory, whose mode is 0700, so no other
 * local user can reach the database; when the path would exceed the platform's socket-path limit it falls back to
 * loopback on a random port. PGlite is single-connection: the pool is capped at one connection, because a second
 * connection's query waits for the first's open transaction.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { randomBytes } from "node:crypto"
import { chmodSync, mkdirSync, rmSync } from "node:fs"
import * as Path from "node:path"
import { PgStoreSchema, type PgStoreSchemaService, resolveStoreSchema } from "./PgSchema.ts"

export type DatabaseTarget =
  | {
    readonly _tag: "Server"
    readonly url: string
    readonly maxConnections?: number | undefined
    /** How idle background workers wait: `notify` (LISTEN/NOTIFY, the default) or `poll` (docs/DECISIONS.md §23). */
    readonly workSignals?: "notify" | "poll" | undefined
    /** The schema holding the store's objects (default: `DATABASE_SCHEMA`, else `feedback`; `PgSchema.ts`). */
    readonly schema?: string | undefined
  }
  | { readonly _tag: "Embedded"; readonly dataDir: string; readonly schema?: string | undefined }

/**
 * Column and field names are a small, fixed set, but the client renames every column of every row read, a regex
 * replace per cell (docs/DECISIONS.md §26). Each name is renamed once; the cache is
 * bounded so that names a host invents at run time cannot grow it without end.
 */
const memoized = (rename: (s: string) => string) => {
  const cache = new Map<string, string>()
  return (s: string): string => {
    let renamed = cache.get(s)
    if (renamed === undefined) {
      renamed = rename(s)
      if (cache.size < 10_000) cache.set(s, renamed)
    }
    return renamed
  }
}
const camelCase = memoized((s) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))
const snakeCase = memoized((s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))

/**
 * The column renames every pool of the store uses (exported for tests that open a pool of their own). Only column
 * names: the client's default also renamed the keys inside every jsonb value it read, so a merchant's metadata key
 * `order_id` came back as `orderId` from PostgreSQL and as sent from memory. JSON is stored and read as sent.
 */
export const naming = { transformResultNames: camelCase, transformQueryNames: snakeCase, transformJson: false } as const

/** Unix socket paths are limited to about 107 bytes on Linux (sun_path). */
const MAX_SOCKET_PATH = 100

/**
 * Every connection starts with the store's schema as its `search_path` (and nothing else: no host object can be
 * named by accident), so the statements name objects without a schema (`PgSchema.ts`).
 */
const searchPath = (schema: PgStoreSchemaService) => ({ search_path: schema.quoted })

const embedded = (
  dataDir: string,
  schema: PgStoreSchemaService
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  Layer.unwrap(Effect.gen(function*() {
    const dir = Path.resolve(dataDir)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    chmodSync(dir, 0o700)
    const socketPath = Path.join(dir, ".s.PGSQL.pglite")
    const useSocket = Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH
    const { PGlite } = yield* Effect.promise(() => import("@electric-sql/pglite"))
    // Trigram indexes serve search (migration 92); PGlite ships the extension but loads it only when asked.
    const { pg_trgm } = yield* Effect.promise(() => import("@electric-sql/pglite/contrib/pg_trgm"))
    const { PGLiteSocketServer } = yield* Effect.promise(() => import("@electric-sql/pglite-socket"))
    const server = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const db = await PGlite.create(Path.join(dir, "pgdata"), { extensions: { pg_trgm } })
        // PGlite is one session whatever the socket's clients send at start-up: the schema is set on the session.
        await db.exec(`SET search_path TO ${schema.quoted}`)
        if (useSocket) rmSync(socketPath, { force: true })
        const server = new PGLiteSocketServer(
          useSocket ? { db, path: socketPath } : { db, port: 0, host: "127.0.0.1" }
        )
        await server.start()
        return { db, server }
      }),
      ({ db, server }) =>
        Effect.promise(async () => {
          await server.stop()
          await db.close()
        })
    )
    const address = useSocket
      ? { path: socketPath }
      : { host: "127.0.0.1", port: Number(server.server.getServerConn().split(":").pop()) }
    return PgClient.layer({
      ...address,
      database: "postgres",
      username: "postgres",
      maxConnections: 1,
      startupParameters: searchPath(schema),
      ...naming
    })
  }))

/**
 * Each pool's own `application_name`: what `pg_stat_activity` lists for its connections, so `/metrics` can count this
 * pool's open and busy connections (and an operator sees which process holds what).
 */
const poolName = (prefix = "feedback-admin-api") => `${prefix}/${randomBytes(4).toString("hex")}`

export type PgDatabaseServices = PgClient.PgClient | SqlClient.SqlClient | PgStoreSchema

const withSchema = (
  schema: string | undefined,
  connect: (schema: PgStoreSchemaService) => Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError>
): Layer.Layer<PgDatabaseServices, SqlError> =>
  Layer.unwrap(
    Effect.map(resolveStoreSchema(schema), (resolved) =>
      Layer.merge(connect(resolved), Layer.succeed(PgStoreSchema, resolved)))
  )

/** The store's own pool to `target`, its connections in the store's schema, with the store's column naming. */
export const PgDatabase = (target: DatabaseTarget): Layer.Layer<PgDatabaseServices, SqlError> =>
  withSchema(target.schema, (schema) =>
    target._tag === "Server"
      ? PgClient.layer({
        url: Redacted.make(target.url),
        maxConnections: target.maxConnections ?? 10,
        applicationName: poolName(),
        startupParameters: searchPath(schema),
        ...naming
      })
      : embedded(target.dataDir, schema))

export interface PgHostDatabaseOptions {
  /** The schema holding the store's objects (default: `DATABASE_SCHEMA`, else `feedback`). */
  readonly schema?: string | undefined
  /** The store pool's size (default 10). */
  readonly maxConnections?: number | undefined
}

/**
 * The store's pool over a host's own `PgClient`: the same server, credentials, TLS and connection settings as the
 * host's client, whatever its column naming or `search_path`. The store opens a pool of its own with them, because
 * every store connection carries the store's schema and naming from its start, which a shared connection could not
 * without a statement before each of the store's; the host's client and its context are left as they are.
 */
export const PgHostDatabase = (
  options: PgHostDatabaseOptions = {}
): Layer.Layer<PgDatabaseServices, SqlError, PgClient.PgClient> =>
  Layer.unwrap(Effect.gen(function*() {
    const host = yield* PgClient.PgClient
    const config = { ...host.config } as PgClient.PgPoolConfig
    return withSchema(options.schema, (schema) =>
      PgClient.layer({
        ...config,
        maxConnections: options.maxConnections ?? 10,
        applicationName: poolName(config.applicationName),
        startupParameters: { ...config.startupParameters, ...searchPath(schema) },
        types: undefined,
        ...naming
      }))
  }))

/** The store's schema, read from a layer's context (for tests and tools that hold a `PgDatabase`). */
export const storeSchemaOf = (context: Context.Context<PgStoreSchema>) => Context.get(context, PgStoreSchema)
