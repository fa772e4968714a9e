/**
 * `npm run bench -- idle`: how often an idle server queries its PostgreSQL. A standalone server (`src/main.ts`) runs
 * on a fresh database of BENCH_DATABASE_URL / TEST_DATABASE_URL's server with no traffic; after a warm-up, the
 * database's committed transactions (`pg_stat_database.xact_commit`, every statement outside a transaction is
 * one) are counted over BENCH_SECONDS (default 30 s), minus this benchmark's own two readings. The warm-up
 * (BENCH_WARMUP_SECONDS, default 70 s) lets autovacuum's first visit of the fresh database pass: its transactions
 * count too.
 * The baseline in the same run is the same server with its workers polling (`WORK_SIGNALS=poll`).
 */
import { startServerProcess } from "../packages/adapter-http/test/ServerProcess.ts"
import { benchDatabaseServer, freshDatabase } from "./support/common.ts"
import { execFileSync } from "node:child_process"
import { recordRow } from "./support/targets.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "30")
const warmupSeconds = Number(process.env["BENCH_WARMUP_SECONDS"] ?? "70")
if (benchDatabaseServer === undefined) {
  console.error("Set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server")
  process.exit(2)
}

const commits = (url: string, name: string) =>
  Number(execFileSync("psql", [url, "-Atc", `SELECT xact_commit FROM pg_stat_database WHERE datname = '${name}'`], { encoding: "utf8" }).trim())

const measure = async (label: string, env: Record<string, string>) => {
  const db = await freshDatabase(benchDatabaseServer!)
  const name = new URL(db.url).pathname.slice(1)
  const server = await startServerProcess({ DATABASE_URL: db.url, LOG_REQUESTS: "false", ...env })
  try {
    await new Promise((r) => setTimeout(r, warmupSeconds * 1_000))
    const before = commits(db.url, name)
    await new Promise((r) => setTimeout(r, seconds * 1_000))
    const after = commits(db.url, name)
    const perSecond = (after - before - 1) / seconds
    return { label, perSecond }
  } finally {
    await server.stop()
    await db.drop()
  }
}

const polling = await measure("workers polling (WORK_SIGNALS=poll, the baseline)", { WORK_SIGNALS: "poll" })
const notified = await measure("workers woken by LISTEN/NOTIFY (default)", {})
console.log(`\nIdle server: committed statements per second on its database over ${seconds} s\n`)
recordRow("idle", notified.perSecond, seconds === 30 && warmupSeconds === 70 ? {} : { note: `${seconds} s after ${warmupSeconds} s` })
for (const r of [polling, notified]) console.log(`  ${r.label.padEnd(52)} ${r.perSecond.toFixed(2)}/s   ${(r.perSecond / polling.perSecond).toFixed(2)}×`)
