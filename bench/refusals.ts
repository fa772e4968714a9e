/**
 * `npm run bench -- refusals`: what a refused request costs the server, as a ratio to an admitted one (issue 14
 * point 2: a bucket known to be empty refuses without a store write; target ≤ 0.25× of the admitted request's CPU).
 *
 * One server, two organizations: one whose allowance no run exhausts (every `GET /organization` admitted), one of
 * 1 request a minute, spent once, so every request of its run is a 429. Each is loaded with autocannon, twice,
 * interleaved; the figure is the server's CPU per request from /proc. On the memory store and embedded PGlite always; with
 * BENCH_DATABASE_URL (or TEST_DATABASE_URL) also on a PostgreSQL server (a fresh database, dropped after), where
 * the committed transactions per request of each run show whether a refusal reached the database.
 */
import { PgClient } from "@effect/sql-pg"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { startServerProcess } from "../packages/adapter-http/test/ServerProcess.ts"
import {
  benchDatabaseServer,
  benchScale,
  describeMachine,
  fmt,
  freshDatabase,
  load,
  type LoadResult,
  OPERATOR_TOKEN,
  provision,
  ratio,
  table
} from "./support/common.ts"
import { type RowId, recordRow } from "./support/targets.ts"

const scale = benchScale
const SECONDS = 5 * scale
const CONNECTIONS = 32

/** Committed transactions on the database so far (undefined without one). */
const commits = (url: string | undefined) =>
  url === undefined
    ? Promise.resolve(undefined)
    : Effect.runPromise(Effect.scoped(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const name = new URL(url).pathname.slice(1)
        // Statistics are flushed to the view at most every second; ask for a fresh snapshot.
        yield* sql`SELECT pg_stat_clear_snapshot()`
        const rows = yield* sql<
          { c: string }
        >`SELECT xact_commit::text AS c FROM pg_stat_database WHERE datname = ${name}`
        return Number(rows[0]?.c ?? 0)
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
    ))

interface Row {
  readonly store: string
  /** The row of issue 14's table this store's measurement is (`npm run bench -- all`). */
  readonly id: RowId
  readonly admitted: LoadResult
  readonly refused: LoadResult
  readonly commitsAdmitted: number | undefined
  readonly commitsRefused: number | undefined
}

const measure = async (
  store: string,
  id: RowId,
  databaseUrl: string | undefined,
  env: Record<string, string> = { DATABASE_URL: databaseUrl ?? "memory" }
): Promise<Row> => {
  const server = await startServerProcess({ ...env, OPERATOR_TOKEN, LOG_REQUESTS: "false" })
  try {
    const open = await provision(server.url)
    const starved = await provision(server.url, 1)
    const get = (key: string) =>
      fetch(`${server.url}/organization`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)
    if ((await get(starved.key)) !== 200 || (await get(starved.key)) !== 429) {
      throw new Error("the 1-a-minute organization did not refuse")
    }
    let best: Partial<Row> = {}
    for (let round = 0; round < 2; round++) {
      for (const kind of ["admitted", "refused"] as const) {
        const key = kind === "admitted" ? open.key : starved.key
        await load(`${server.url}/organization`, key, {
          seconds: 1 * Math.min(scale, 1),
          warmupSeconds: 0,
          connections: CONNECTIONS
        })
        // Let the statistics collector settle (the pool's own idle work is a handful of commits a minute).
        const before = await commits(databaseUrl)
        const r = await load(`${server.url}/organization`, key, {
          seconds: SECONDS,
          warmupSeconds: 0,
          connections: CONNECTIONS,
          serverPid: server.pid
        })
        await new Promise((resolve) => setTimeout(resolve, 1_100))
        const after = await commits(databaseUrl)
        const perRequest = before === undefined || after === undefined ? undefined : (after - before) / r.total
        const previous = best[kind]
        if (
          previous === undefined ||
          (r.serverCpuMicrosPerRequest ?? Infinity) < (previous.serverCpuMicrosPerRequest ?? Infinity)
        ) {
          best = { ...best, [kind]: r, [kind === "admitted" ? "commitsAdmitted" : "commitsRefused"]: perRequest }
        }
      }
    }
    return { store, id, ...best } as Row
  } finally {
    await server.stop()
  }
}

const main = async () => {
  console.log(`refusals benchmark — ${await describeMachine()}`)
  const rows: Array<Row> = [await measure("memory", "refusals-memory", undefined)]
  // The default store of `npm start`: embedded PGlite in a fresh data directory.
  const dataDir = mkdtempSync(Path.join(tmpdir(), "bench-refusals-"))
  try {
    rows.push(await measure("embedded PGlite", "refusals-pglite", undefined, { DATA_DIR: dataDir }))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  if (benchDatabaseServer !== undefined) {
    const db = await freshDatabase(benchDatabaseServer)
    try {
      rows.push(await measure("PostgreSQL server", "refusals-postgres", db.url))
    } finally {
      await db.drop()
    }
  }
  console.log(
    `\nGET /organization, autocannon ${CONNECTIONS} connections, best of 2 interleaved runs of ${SECONDS} s; target: 429 CPU ≤ 0.25× of admitted\n`
  )
  const cpu = (r: LoadResult) => r.serverCpuMicrosPerRequest ?? NaN
  for (const r of rows) recordRow(r.id, cpu(r.refused) / cpu(r.admitted))
  const perRequest = (n: number | undefined) => (n === undefined ? "n/a" : n.toFixed(3))
  table(
    [
      "store",
      "admitted µs/req",
      "429 µs/req",
      "429 vs admitted",
      "admitted req/s",
      "429 req/s",
      "commits/admitted",
      "commits/429",
      "429s"
    ],
    rows.map((r) => [
      r.store,
      fmt(cpu(r.admitted)),
      fmt(cpu(r.refused)),
      ratio(cpu(r.refused), cpu(r.admitted)),
      fmt(r.admitted.requestsPerSecond),
      fmt(r.refused.requestsPerSecond),
      perRequest(r.commitsAdmitted),
      perRequest(r.commitsRefused),
      `${r.refused.non2xx}/${r.refused.total}`
    ])
  )
}

await main()
