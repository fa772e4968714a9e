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
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { randomBytes } from "node:crypto"
import { chmodSync, mkdirSync, rmSync } from "node:fs"
import * as Path from "node:path"

export type DatabaseTarget =
  | {
    readonly _tag: "Server"
    readonly url: string
    readonly maxConnections?: number | undefined
    /** How idle background workers wait: `notify` (LISTEN/NOTIFY, the default) or `poll` (docs/DECISIONS.md §23). */
    readonly workSignals?: "notify" | "poll" | undefined
  }
  | { readonly _tag: "Embedded"; readonly dataDir: string }

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

const embedded = (dataDir: string): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
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
    return PgClient.layer({ ...address, database: "postgres", username: "postgres", maxConnections: 1, ...naming })
  }))

/**
 * Each pool's own `application_name`: what `pg_stat_activity` lists for its connections, so `/metrics` can count this
 * pool's open and busy connections (and an operator sees which process holds what).
 */
const poolName = () => `feedback-admin-api/${randomBytes(4).toString("hex")}`

export const PgDatabase = (target: DatabaseTarget): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  target._tag === "Server"
    ? Layer.suspend(() =>
      PgClient.layer({
        url: Redacted.make(target.url),
        maxConnections: target.maxConnections ?? 10,
        applicationName: poolName(),
        ...naming
      })
    )
    : embedded(target.dataDir)
