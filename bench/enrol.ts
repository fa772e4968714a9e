/**
 * `npm run bench -- enrol`, on a PostgreSQL server: `PATCH /orders/bulk-update` moving BENCH_ORDERS (default
 * 100,000) open orders to `fulfilled` under an active flow triggered on `order.fulfilled` (the guided setup's, asking
 * after 7 days so nothing becomes due), through a standalone server, vs the floor of ONE set-based `INSERT … SELECT`
 * creating the same surveys: the rows the bulk update created, copied under another flow id into the same table (same
 * indexes, same wake-up trigger), on a connection of its own. The orders are imported
 * first (`POST /orders/import` starts no survey), and before either side is measured the server's fan-out of the
 * events so far is waited for and the tables vacuumed and analysed.
 * Target ≤ 2× (wall). Also printed: the database's CPU (its client backends, from /proc, on a local server) for each
 * side and the server process's CPU for the bulk update, steadier than wall time on a loaded machine, with a verdict on
 * the bulk update's CPU (database + server) against the floor's (database) by the same bound; and the statements the
 * server sent for the bulk update (it reaches its database through `support/statement-counter.ts`'s proxy).
 */
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import pg from "pg"
import { cpuMillis, fmt } from "./support/common.ts"
import { call, flowServer, importOrders } from "./support/surveys.ts"
import { recordRow } from "./support/targets.ts"

const orders = Number(process.env["BENCH_ORDERS"] ?? "100000")

const psql = (url: string, script: string) =>
  execFileSync("psql", [url, "-q", "-At", "-v", "ON_ERROR_STOP=1"], {
    input: script,
    encoding: "utf8",
    maxBuffer: 2 ** 26
  })

/** CPU (ms) the database's client backends (the server's pool, or the floor's connection) used so far, by pid. */
const backendCpu = (url: string) =>
  new Map(
    psql(url, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`)
      .trim().split("\n").filter((l) => l !== "").map((pid) => [Number(pid), cpuMillis(Number(pid)) ?? 0] as const)
  )
const cpuSince = (before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>) => {
  let used = 0
  for (const [pid, ms] of after) used += ms - (before.get(pid) ?? 0)
  return used
}

/**
 * Waits until the server has fanned out every event recorded so far (the import's and the bulk update's
 * `order.updated`, 1 each per order): that work runs after the request answers and would otherwise overlap the
 * next measurement.
 */
const settled = async (url: string) => {
  while (Number(psql(url, `SELECT count(*) FROM domain_events WHERE fan_out_pending`).trim()) > 0) {
    await new Promise((r) => setTimeout(r, 500))
  }
}

const s = await flowServer({ REQUEST_TIMEOUT_MS: "600000" }, { delayDays: 7 }, { countStatements: true })
try {
  const started = performance.now()
  await importOrders(s, orders, "open")
  console.log(`imported ${fmt(orders)} open orders in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  await settled(s.databaseUrl)
  psql(s.databaseUrl, "VACUUM ANALYZE;")

  const textsBefore = s.statements!.texts()
  const dbBefore = backendCpu(s.databaseUrl)
  const nodeBefore = cpuMillis(s.server.pid) ?? 0
  const t0 = performance.now()
  const moved = await call(s.base, "PATCH", "/orders/bulk-update", s.key, { status: "fulfilled" })
  const bulkMs = performance.now() - t0
  const nodeMs = (cpuMillis(s.server.pid) ?? 0) - nodeBefore
  const bulkDbMs = cpuSince(dbBefore, backendCpu(s.databaseUrl))
  const sent = [...s.statements!.texts()].map(([text, n]) => [text, n - (textsBefore.get(text) ?? 0)] as const)
    .filter(([, n]) => n > 0)
  const flowId = psql(s.databaseUrl, `SELECT DISTINCT flow_id FROM surveys`).trim()
  const created = Number(psql(s.databaseUrl, `SELECT count(*) FROM surveys WHERE flow_id = '${flowId}'`).trim())
  if (moved.count !== orders || created !== orders) {
    throw new Error(`expected ${orders} orders moved and surveys created, got ${moved.count} and ${created}`)
  }

  await settled(s.databaseUrl)
  psql(s.databaseUrl, "VACUUM ANALYZE;")
  // The floor on a connection of its own, so its backend's CPU can be read before and after.
  const client = new pg.Client({ connectionString: s.databaseUrl })
  await client.connect()
  let floorMs: number
  let floorDbMs: number
  try {
    const pid = Number((await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid)
    const cpuBefore = cpuMillis(pid) ?? 0
    const f0 = performance.now()
    await client.query(
      `INSERT INTO surveys (organization_id, id, flow_id, order_id, customer_id, status, reason, products, steps, token,
        url, expires_at, completed_at, created_at, updated_at, next_due_at, next_position)
      SELECT organization_id, gen_random_uuid(), '${randomUUID()}', order_id, customer_id, status, reason, products,
        steps, md5(random()::text) || md5(random()::text), url, expires_at, completed_at, now(), now(), next_due_at,
        next_position
      FROM surveys WHERE flow_id = '${flowId}'`
    )
    floorMs = performance.now() - f0
    floorDbMs = (cpuMillis(pid) ?? 0) - cpuBefore
  } finally {
    await client.end()
  }
  const r = bulkMs / floorMs
  const cpuRatio = (bulkDbMs + nodeMs) / floorDbMs
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
  const verdict = (x: number) => x <= 2 ? "met" : "not met"
  console.log(`\nEnrolment of ${fmt(orders)} orders under one active flow (PostgreSQL server)\n`)
  console.log(
    `  baseline: one INSERT … SELECT of the same surveys   ${seconds(floorMs)}   1.00×   (database CPU ${
      seconds(floorDbMs)
    })`
  )
  console.log(
    `  PATCH /orders/bulk-update {status: fulfilled}       ${seconds(bulkMs)}   ${r.toFixed(2)}×   (target ≤ 2×; ` +
      `database CPU ${seconds(bulkDbMs)}, ${(bulkDbMs / floorDbMs).toFixed(2)}×; server CPU ${seconds(nodeMs)})`
  )
  console.log(
    `\n  wall: ${r.toFixed(2)}× (${verdict(r)}); CPU, database + server vs the floor's database: ${
      cpuRatio.toFixed(2)
    }× (${seconds(bulkDbMs + nodeMs)} vs ${seconds(floorDbMs)}, ${verdict(cpuRatio)})`
  )
  console.log(`\n  statements the server sent for the bulk update:`)
  for (const [text, n] of sent) console.log(`    ${String(n).padStart(3)}  ${text}`)
  const note = orders === 100_000 ? {} : { note: `${fmt(orders)} orders` }
  recordRow("enrol", r, note)
  recordRow("enrol-cpu", cpuRatio, note)
} finally {
  await s.stop()
}
