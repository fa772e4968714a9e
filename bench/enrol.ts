/**
 * `npm run bench -- enrol`, on a PostgreSQL server: `PATCH /orders/bulk-update` moving BENCH_ORDERS (default
 * 100,000) open orders to `fulfilled` under an active flow triggered on `order.fulfilled` (the guided setup's, asking
 * after 7 days so nothing becomes due), through a standalone server, vs the floor of ONE set-based `INSERT … SELECT`
 * creating the same surveys: the rows the bulk update created, copied under another flow id into the same table (same
 * indexes, same wake-up trigger), run through `psql` and timed by the server (`\timing`). The orders are imported
 * first (`POST /orders/import` starts no survey) and the tables vacuumed and analysed before either is measured.
 * Target ≤ 2×.
 */
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { fmt } from "./support/common.ts"
import { call, flowServer, importOrders } from "./support/surveys.ts"
import { recordRow } from "./support/targets.ts"

const orders = Number(process.env["BENCH_ORDERS"] ?? "100000")

const psql = (url: string, script: string) =>
  execFileSync("psql", [url, "-q", "-At", "-v", "ON_ERROR_STOP=1"], {
    input: script,
    encoding: "utf8",
    maxBuffer: 2 ** 26
  })

const s = await flowServer({ REQUEST_TIMEOUT_MS: "600000" }, { delayDays: 7 })
try {
  const started = performance.now()
  await importOrders(s, orders, "open")
  console.log(`imported ${fmt(orders)} open orders in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  psql(s.databaseUrl, "VACUUM ANALYZE;")

  const t0 = performance.now()
  const moved = await call(s.base, "PATCH", "/orders/bulk-update", s.key, { status: "fulfilled" })
  const bulkMs = performance.now() - t0
  const flowId = psql(s.databaseUrl, `SELECT DISTINCT flow_id FROM surveys`).trim()
  const created = Number(psql(s.databaseUrl, `SELECT count(*) FROM surveys WHERE flow_id = '${flowId}'`).trim())
  if (moved.count !== orders || created !== orders) {
    throw new Error(`expected ${orders} orders moved and surveys created, got ${moved.count} and ${created}`)
  }

  psql(s.databaseUrl, "VACUUM ANALYZE;")
  const out = psql(
    s.databaseUrl,
    `\\timing on
    INSERT INTO surveys (organization_id, id, flow_id, order_id, customer_id, status, reason, products, steps, token, url,
      expires_at, completed_at, created_at, updated_at, next_due_at, next_position)
    SELECT organization_id, gen_random_uuid(), '${randomUUID()}', order_id, customer_id, status, reason, products, steps,
      md5(random()::text) || md5(random()::text), url, expires_at, completed_at, now(), now(), next_due_at, next_position
    FROM surveys WHERE flow_id = '${flowId}';`
  )
  const floorMs = Number(/Time: ([\d.]+) ms/.exec(out)?.[1])
  const r = bulkMs / floorMs
  console.log(`\nEnrolment of ${fmt(orders)} orders under one active flow (PostgreSQL server)\n`)
  console.log(`  baseline: one INSERT … SELECT of the same surveys   ${(floorMs / 1000).toFixed(2)} s   1.00×`)
  console.log(
    `  PATCH /orders/bulk-update {status: fulfilled}       ${(bulkMs / 1000).toFixed(2)} s   ${
      r.toFixed(2)
    }×   (target ≤ 2×)`
  )
  recordRow("enrol", r, orders === 100_000 ? {} : { note: `${fmt(orders)} orders` })
} finally {
  await s.stop()
}
