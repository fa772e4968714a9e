/**
 * Test databases. With TEST_DATABASE_URL (CI always sets it) each layer build gets a fresh database on that server;
 * without it, a fresh embedded PGlite in a temporary directory. Tests that need a real server (several connections
 * or processes) use `describeWithServer`, which says plainly why it skipped.
 */
import { describe } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { randomBytes } from "node:crypto"
import type { DatabaseTarget } from "../src/kernel/PgDatabase.ts"

export const serverUrl: string | undefined = process.env["TEST_DATABASE_URL"] || undefined

/**
 * The prefix of this test run's databases: the run's id (set once by `vitest.config.ts` for every worker) lets the
 * run's teardown (`scripts/test-databases.ts`) drop exactly the databases it made, and never another run's.
 */
export const testDatabasePrefix = `feedback_test_${process.env["FEEDBACK_TEST_RUN"] ?? "adhoc"}_`

/** Creates a fresh, empty database on the test server and returns its URL. */
export const freshServerDatabase = (url: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const name = `${testDatabasePrefix}${randomBytes(6).toString("hex")}`
    yield* Effect.scoped(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`CREATE DATABASE ${name}`)
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
    )
    const u = new URL(url)
    u.pathname = `/${name}`
    return u.toString()
  }).pipe(Effect.orDie)

/** Drops every database of this run left on the server (connections too); answers how many. */
export const dropRunDatabases = (serverUrl: string): Promise<number> =>
  Effect.runPromise(Effect.scoped(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const names = yield* sql<
        { datname: string }
      >`SELECT datname FROM pg_database WHERE starts_with(datname, ${testDatabasePrefix})`
      for (const { datname } of names) yield* sql.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
      return names.length
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })))
  ))

/** Drops a database made by `freshServerDatabase` (its processes' connections too); failures are ignored. */
export const dropServerDatabase = (serverUrl: string, databaseUrl: string): Promise<void> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const name = new URL(databaseUrl).pathname.slice(1)
        yield* sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })))
    ).pipe(Effect.ignore)
  )

/** A new embedded PGlite in a temporary directory, removed with the scope. */
export const freshEmbeddedTarget: Effect.Effect<DatabaseTarget, never, import("effect").Scope.Scope> = Effect
  .acquireRelease(
    Effect.sync((): DatabaseTarget => ({ _tag: "Embedded", dataDir: mkdtempSync(Path.join(tmpdir(), "fb-pglite-")) })),
    (t) => Effect.sync(() => t._tag === "Embedded" && rmSync(t.dataDir, { recursive: true, force: true }))
  )

/** A fresh database target for each build: a new database on the server, else a new embedded PGlite. */
export const freshTarget = (
  options?: { readonly maxConnections?: number }
): Effect.Effect<DatabaseTarget, never, import("effect").Scope.Scope> =>
  serverUrl !== undefined
    ? Effect.map(
      freshServerDatabase(serverUrl),
      (url): DatabaseTarget => ({ _tag: "Server", url, maxConnections: options?.maxConnections })
    )
    : freshEmbeddedTarget

export const storeName = serverUrl !== undefined ? "postgres server" : "embedded PGlite"

/** Declares a block that needs a real PostgreSQL server; without one it is skipped with the reason. */
export const describeWithServer = (name: string, body: (url: string) => void) => {
  if (serverUrl === undefined) {
    describe.skip(`${name} — skipped: needs a PostgreSQL server (several connections or processes); set TEST_DATABASE_URL`, () => {})
    return
  }
  describe(name, () => body(serverUrl!))
}

export const freshLayer = <A, E, R>(
  make: (target: DatabaseTarget) => Layer.Layer<A, E, R>,
  options?: { readonly maxConnections?: number }
) => Layer.unwrap(Effect.map(freshTarget(options), make))
