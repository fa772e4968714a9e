/** Shared pieces of the benchmarks: HTTP load with autocannon, provisioning, databases and printing. */
import { PgClient } from "@effect/sql-pg"
import { type DatabaseTarget, DEFAULT_SCHEMA } from "@feedback/adapter-postgres"
import autocannon from "autocannon"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as inspector from "node:inspector/promises"
import { tmpdir } from "node:os"
import * as Path from "node:path"

/** `BENCH_SECONDS`: the factor every benchmark scales its measured durations by (1 unless set). */
export const benchScale = Number(process.env["BENCH_SECONDS"] ?? "1")

export const OPERATOR_TOKEN = "bench-operator-token-of-at-least-32-characters"

/** A PostgreSQL server for the benchmarks, when one is configured; otherwise they use embedded PGlite. */
export const benchDatabaseServer: string | undefined = process.env["BENCH_DATABASE_URL"] ||
  process.env["TEST_DATABASE_URL"] || undefined

const onServer = (serverUrl: string, statement: string) =>
  Effect.runPromise(Effect.scoped(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })))
  ))

/**
 * Run after `CREATE DATABASE`: the baselines' own connections (psql, pg, a bare PgClient) name the store's tables
 * without a schema, as the store's connections do through their `search_path` (docs/DECISIONS.md §58).
 */
export const storeSearchPath = (database: string) =>
  `ALTER DATABASE ${database} SET search_path = ${DEFAULT_SCHEMA}, public`

/** A new empty database on the server; returns its URL and a function that drops it. */
export const freshDatabase = async (serverUrl: string) => {
  const name = `feedback_bench_${randomBytes(6).toString("hex")}`
  await onServer(serverUrl, `CREATE DATABASE ${name}`)
  await onServer(serverUrl, storeSearchPath(name))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    drop: () => onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
  }
}

/**
 * The store of a benchmark that runs it in its own process: a fresh database on `benchDatabaseServer` (`url` for the
 * baselines' own connections), else embedded PGlite in a temporary directory; `cleanup` drops or deletes it.
 */
export const benchDatabaseTarget = async (): Promise<
  { target: DatabaseTarget; url: string | undefined; cleanup: () => Promise<void>; label: string }
> => {
  if (benchDatabaseServer === undefined) {
    const dataDir = mkdtempSync(Path.join(tmpdir(), "fb-bench-pglite-"))
    return {
      target: { _tag: "Embedded", dataDir },
      url: undefined,
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
      label: "embedded PGlite (set BENCH_DATABASE_URL for a server)"
    }
  }
  const db = await freshDatabase(benchDatabaseServer)
  return {
    target: { _tag: "Server", url: db.url, maxConnections: 4 },
    url: db.url,
    cleanup: db.drop,
    label: `PostgreSQL server (fresh database ${db.name})`
  }
}

/**
 * An organization with the largest allowance (so a load run is never refused) and a key that can read it (and
 * whatever else `permissions` asks for).
 */
export const provision = async (
  baseUrl: string,
  apiRequestsPerMinute = 1_000_000,
  permissions: ReadonlyArray<string> = ["settings:read"]
) => {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${baseUrl}/operator${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    if (res.status !== 201) throw new Error(`provisioning ${path} failed: ${res.status} ${await res.text()}`)
    return (await res.json()) as Record<string, string>
  }
  const org = await post("/organizations", { name: "Bench organization", apiRequestsPerMinute })
  const key = await post(`/organizations/${org["id"]}/keys`, { permissions })
  return { organizationId: org["id"]!, key: key["secretKey"]! }
}

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc (Linux); `undefined` elsewhere. Tick
 * resolution is 10 ms, plenty over a run of seconds.
 */
export const cpuMillis = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return undefined
  }
}

export interface LoadResult {
  /**
   * The server's CPU time per answered request, in µs: the figure that stays comparable when other work shares the
   * machine (throughput and latency do not).
   */
  readonly serverCpuMicrosPerRequest: number | undefined
  readonly requestsPerSecond: number
  readonly latencyMeanMs: number
  readonly latencyP99Ms: number
  readonly total: number
  readonly non2xx: number
  readonly errors: number
}

/** `GET <url>` with a bearer key: a warm-up, then the measured run. */
export const load = async (
  url: string,
  key: string,
  options: {
    readonly seconds: number
    readonly warmupSeconds: number
    readonly connections: number
    readonly serverPid?: number
  }
): Promise<LoadResult> => {
  const base = { url, connections: options.connections, headers: { authorization: `Bearer ${key}` } }
  if (options.warmupSeconds > 0) await autocannon({ ...base, duration: options.warmupSeconds })
  const cpuBefore = options.serverPid === undefined ? undefined : cpuMillis(options.serverPid)
  const r = await autocannon({ ...base, duration: options.seconds })
  const cpuAfter = options.serverPid === undefined ? undefined : cpuMillis(options.serverPid)
  return {
    serverCpuMicrosPerRequest: cpuBefore === undefined || cpuAfter === undefined || r.requests.total === 0
      ? undefined
      : ((cpuAfter - cpuBefore) * 1000) / r.requests.total,
    requestsPerSecond: r.requests.average,
    latencyMeanMs: r.latency.average,
    latencyP99Ms: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts
  }
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
/** value / baseline, with two significant digits below 0.1 (a PostgreSQL decision is a tiny fraction of a no-op). */
export const ratio = (value: number, baseline: number) => {
  const r = value / baseline
  return `${r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}×`
}

/** Prints rows as an aligned table. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  console.log(line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const r of rows) console.log(line(r))
}

export const describeMachine = async () => {
  const os = await import("node:os")
  return `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${
    (os.totalmem() / 2 ** 30).toFixed(0)
  } GiB`
}

/**
 * `BENCH_CPU_PROFILE=file.cpuprofile`: starts the inspector's sampling profiler (`BENCH_CPU_PROFILE_INTERVAL` µs, else
 * `intervalUs`); the function returned stops it and writes the profile (open it in DevTools). Without the variable,
 * nothing is profiled. The profile is of wall time on the main thread: a blocking socket write shows as `writeBuffer`.
 */
export const startCpuProfile = async (intervalUs: number): Promise<() => Promise<void>> => {
  const file = process.env["BENCH_CPU_PROFILE"]
  if (file === undefined || file === "") return async () => {}
  const session = new inspector.Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", {
    interval: Number(process.env["BENCH_CPU_PROFILE_INTERVAL"] ?? intervalUs)
  })
  await session.post("Profiler.start")
  return async () => {
    const { profile } = await session.post("Profiler.stop")
    writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}
