/**
 * `npm run bench -- idle`: how often an idle server queries its PostgreSQL. A standalone server (`src/main.ts`) runs
 * on a fresh database of BENCH_DATABASE_URL / TEST_DATABASE_URL's server with no traffic, connected through a proxy
 * that counts the statements it sends (`support/statement-counter.ts`: every simple query and every execute, on
 * the pool and the listening connection); after a warm-up they are counted over BENCH_SECONDS (default 30 s), and
 * printed by their text. That is the row's measure: the server's own statements, whatever else runs on the database.
 * Printed beside it, the older measure: the database's committed transactions (`pg_stat_database.xact_commit`, every
 * statement outside a transaction is one) over the same window, minus this benchmark's own readings (two more read
 * the tables' scan counts, printed to say what the idle server reads), which also counts autovacuum's and
 * autoanalyze's transactions on the fresh database. The warm-up (BENCH_WARMUP_SECONDS, default 70 s) lets
 * autovacuum's first visit pass.
 * The baseline in the same run is the same server with its workers polling (`WORK_SIGNALS=poll`). A third run has an
 * organization with an active flow (the guided setup's, asking 7 days after `order.fulfilled`) and BENCH_IDLE_ORDERS
 * (default 100) fulfilled orders whose surveys are scheduled, none due: issue 32's row, against the bare server's
 * own rate (the second run).
 */
import { execFileSync } from "node:child_process"
import { benchDatabaseServer } from "./support/common.ts"
import { call, flowServer, importOrders } from "./support/surveys.ts"
import { recordRow } from "./support/targets.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "30")
const warmupSeconds = Number(process.env["BENCH_WARMUP_SECONDS"] ?? "70")
const flowOrders = Number(process.env["BENCH_IDLE_ORDERS"] ?? "100")
if (benchDatabaseServer === undefined) {
  console.error("Set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server")
  process.exit(2)
}

const commits = (url: string, name: string) =>
  Number(
    execFileSync("psql", [url, "-Atc", `SELECT xact_commit FROM pg_stat_database WHERE datname = '${name}'`], {
      encoding: "utf8"
    }).trim()
  )

/** Scans (sequential and by index) of each table so far, to say what an idle server reads. */
const tableReads = (url: string) =>
  new Map(
    execFileSync("psql", [url, "-Atc", `SELECT relname, seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables`], {
      encoding: "utf8"
    })
      .trim().split("\n").filter((l) => l !== "").map((l) => {
        const [table, n] = l.split("|")
        return [table!, Number(n)] as const
      })
  )

const measure = async (label: string, env: Record<string, string>, flows = false) => {
  const s = await flowServer(env, flows ? { delayDays: 7 } : undefined, { countStatements: true })
  const counter = s.statements!
  try {
    // Active flows with surveys scheduled days ahead: nothing is due during the window.
    if (flows) {
      await importOrders(s, flowOrders, "open")
      await call(s.base, "PATCH", "/orders/bulk-update", s.key, { status: "fulfilled" })
    }
    await new Promise((r) => setTimeout(r, warmupSeconds * 1_000))
    const before = commits(s.databaseUrl, s.databaseName)
    const readsBefore = tableReads(s.databaseUrl)
    const sentBefore = counter.count()
    const textsBefore = counter.texts()
    await new Promise((r) => setTimeout(r, seconds * 1_000))
    const sent = counter.count() - sentBefore
    const texts = [...counter.texts()].map(([text, n]) => [text, n - (textsBefore.get(text) ?? 0)] as const)
      .filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1])
    const after = commits(s.databaseUrl, s.databaseName)
    const readsAfter = tableReads(s.databaseUrl)
    const commitsPerSecond = (after - before - 2) / seconds
    const reads = [...readsAfter].map(([table, n]) => [table, n - (readsBefore.get(table) ?? 0)] as const)
      .filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1])
    return { label, perSecond: sent / seconds, commitsPerSecond, reads, texts }
  } finally {
    await s.stop()
  }
}

const polling = await measure("workers polling (WORK_SIGNALS=poll, the baseline)", { WORK_SIGNALS: "poll" })
const notified = await measure("workers woken by LISTEN/NOTIFY (default)", {})
const withFlows = await measure(`the same with an active flow, ${flowOrders} surveys scheduled`, {}, true)
console.log(
  `\nIdle server over ${seconds} s: statements per second the server sent (its own), and the database's committed ` +
    `transactions per second (autovacuum's included)\n`
)
const note = seconds === 30 && warmupSeconds === 70 ? {} : { note: `${seconds} s after ${warmupSeconds} s` }
recordRow("idle", notified.perSecond, note)
recordRow("idle-flows", withFlows.perSecond, note)
for (const r of [polling, notified, withFlows]) {
  console.log(
    `  ${r.label.padEnd(52)} ${r.perSecond.toFixed(2)}/s   ${(r.perSecond / polling.perSecond).toFixed(2)}×   ` +
      `(xact_commit ${r.commitsPerSecond.toFixed(2)}/s)`
  )
}
console.log(`\n  statements sent during the window, by text:`)
for (const r of [notified, withFlows]) {
  console.log(`    ${r.label}:`)
  for (const [text, n] of r.texts) console.log(`      ${String(n).padStart(3)}  ${text}`)
}
console.log(`\n  tables scanned during the window (scans):`)
for (const r of [notified, withFlows]) {
  console.log(`    ${r.label}: ${r.reads.map(([t, n]) => `${t} ${n}`).join(", ") || "none"}`)
}
const verdict = (perSecond: number) => perSecond <= 1 ? "met" : "not met"
console.log(
  `\n  the server's own statements: bare (notify) ${notified.perSecond.toFixed(2)}/s (${
    verdict(notified.perSecond)
  }), with active flows ${withFlows.perSecond.toFixed(2)}/s (${verdict(withFlows.perSecond)}; target ≤ 1/s)` +
    `\n  xact_commit (older measure): bare ${notified.commitsPerSecond.toFixed(2)}/s, with flows ${
      withFlows.commitsPerSecond.toFixed(2)
    }/s`
)
