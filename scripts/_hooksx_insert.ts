import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
const url = "postgres://postgres@127.0.0.1:5443/bench_350c2a3a"
const prog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const base = (yield* sql<any>`SELECT organization_id, webhook_id, event, payload FROM webhook_deliveries LIMIT 1`)[0]
  const ev = (yield* sql<any>`SELECT organization_id, id FROM domain_events LIMIT 800`)
  const rows = () => ev.map((e: any, i: number) => ({ organizationId: base.organization_id, id: randomUUID(), webhookId: base.webhook_id, eventId: randomUUID(), event: base.event, idempotencyKey: randomUUID(), status: "pending", body: base.payload, responseStatus: null, error: null, durationMs: null, createdAt: new Date().toISOString(), attemptedAt: null, claimedBy: null, redeliveryOf: null, recordKey: "review/z" + i }))
  const variants: Record<string, (c: ReturnType<typeof rows>) => Effect.Effect<unknown, unknown>> = {
    values: (chunk) => sql`INSERT INTO webhook_deliveries (organization_id, id, webhook_id, event_id, event, idempotency_key, status, payload, response_status, error, duration_ms, created_at, attempted_at, claimed_by, redelivery_of, record_key, event_seq)
      SELECT v.*, CASE WHEN v.record_key IS NOT NULL THEN (SELECT e.seq FROM domain_events e WHERE e.organization_id = v.organization_id AND e.id = v.event_id) END
      FROM (VALUES ${sql.csv(chunk.map((d) => sql`(${d.organizationId}::uuid, ${d.id}::uuid, ${d.webhookId}::uuid, ${d.eventId}::uuid, ${d.event}::text, ${d.idempotencyKey}::uuid, ${d.status}::text, ${d.body}::text, ${d.responseStatus}::integer, ${d.error}::text, ${d.durationMs}::integer, ${d.createdAt}::timestamptz, ${d.attemptedAt}::timestamptz, ${d.claimedBy}::uuid, ${d.redeliveryOf}::uuid, ${d.recordKey}::text)`))})
      AS v(organization_id, id, webhook_id, event_id, event, idempotency_key, status, payload, response_status, error, duration_ms, created_at, attempted_at, claimed_by, redelivery_of, record_key)
      ON CONFLICT (organization_id, webhook_id, event_id) WHERE redelivery_of IS NULL DO NOTHING`,
    insertOnly: (chunk) => {
      const r = chunk.map((d) => ({ organization_id: d.organizationId, id: d.id, webhook_id: d.webhookId, event_id: d.eventId, event: d.event, idempotency_key: d.idempotencyKey, status: d.status, payload: d.body, response_status: d.responseStatus, error: d.error, duration_ms: d.durationMs, created_at: d.createdAt, attempted_at: d.attemptedAt, claimed_by: d.claimedBy, redelivery_of: d.redeliveryOf, record_key: d.recordKey }))
      return sql`INSERT INTO webhook_deliveries ${sql.insert(r as any)} ON CONFLICT (organization_id, webhook_id, event_id) WHERE redelivery_of IS NULL DO NOTHING`.pipe(Effect.andThen(sql`UPDATE webhook_deliveries d SET event_seq = e.seq
                  FROM domain_events e
                  WHERE d.id IN ${sql.in(chunk.map((x) => x.id))}
                    AND e.organization_id = d.organization_id AND e.id = d.event_id AND d.event_seq IS NULL`))
    },
    json: (chunk) => sql`INSERT INTO webhook_deliveries (organization_id, id, webhook_id, event_id, event, idempotency_key, status, payload, response_status, error, duration_ms, created_at, attempted_at, claimed_by, redelivery_of, record_key, event_seq)
      SELECT v.*, CASE WHEN v.record_key IS NOT NULL THEN (SELECT e.seq FROM domain_events e WHERE e.organization_id = v.organization_id AND e.id = v.event_id) END
      FROM json_to_recordset(${JSON.stringify(chunk.map((d) => ({ organization_id: d.organizationId, id: d.id, webhook_id: d.webhookId, event_id: d.eventId, event: d.event, idempotency_key: d.idempotencyKey, status: d.status, payload: d.body, response_status: d.responseStatus, error: d.error, duration_ms: d.durationMs, created_at: d.createdAt, attempted_at: d.attemptedAt, claimed_by: d.claimedBy, redelivery_of: d.redeliveryOf, record_key: d.recordKey })))}::json)
      AS v(organization_id uuid, id uuid, webhook_id uuid, event_id uuid, event text, idempotency_key uuid, status text, payload text, response_status integer, error text, duration_ms integer, created_at timestamptz, attempted_at timestamptz, claimed_by uuid, redelivery_of uuid, record_key text)
      ON CONFLICT (organization_id, webhook_id, event_id) WHERE redelivery_of IS NULL DO NOTHING`,
    unnest: (chunk) => {
      const lit = (xs: ReadonlyArray<string | number | null>) => "{" + xs.map((x) => x === null ? "NULL" : typeof x === "number" ? String(x) : "\"" + x.replace(/[\\"]/g, "\\$&") + "\"").join(",") + "}"
      const col = <K extends keyof typeof chunk[0]>(k: K) => lit(chunk.map((d) => d[k] as any))
      return sql`INSERT INTO webhook_deliveries (organization_id, id, webhook_id, event_id, event, idempotency_key, status, payload, response_status, error, duration_ms, created_at, attempted_at, claimed_by, redelivery_of, record_key, event_seq)
      SELECT v.*, CASE WHEN v.record_key IS NOT NULL THEN (SELECT e.seq FROM domain_events e WHERE e.organization_id = v.organization_id AND e.id = v.event_id) END
      FROM unnest(${col("organizationId")}::uuid[], ${col("id")}::uuid[], ${col("webhookId")}::uuid[], ${col("eventId")}::uuid[], ${col("event")}::text[], ${col("idempotencyKey")}::uuid[], ${col("status")}::text[], ${col("body")}::text[], ${col("responseStatus")}::integer[], ${col("error")}::text[], ${col("durationMs")}::integer[], ${col("createdAt")}::timestamptz[], ${col("attemptedAt")}::timestamptz[], ${col("claimedBy")}::uuid[], ${col("redeliveryOf")}::uuid[], ${col("recordKey")}::text[])
      AS v(organization_id, id, webhook_id, event_id, event, idempotency_key, status, payload, response_status, error, duration_ms, created_at, attempted_at, claimed_by, redelivery_of, record_key)
      ON CONFLICT (organization_id, webhook_id, event_id) WHERE redelivery_of IS NULL DO NOTHING`
    }
  }
  const pid = (yield* sql<any>`SELECT pg_backend_pid() AS pid`)[0].pid
  const { readFileSync } = yield* Effect.promise(() => import("node:fs"))
  const cpu = () => { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" "); return (Number(f[11]) + Number(f[12])) * 10 }
  for (let rep = 0; rep < 25; rep++) for (const [name, f] of Object.entries(variants)) {
    const chunk = rows()
    const c0 = cpu(); const t0 = performance.now(); const n0 = process.cpuUsage()
    const ex = yield* Effect.exit(sql.withTransaction(Effect.andThen(f(chunk), Effect.fail("rollback"))))
    if (ex._tag === "Failure" && !String(ex.cause).includes("rollback")) console.log(String(ex.cause).slice(0, 300))
    const n1 = process.cpuUsage(n0)
    console.log(name.padEnd(12), "wall", (performance.now() - t0).toFixed(1), "ms  backend cpu", cpu() - c0, "ms  node cpu", ((n1.user + n1.system) / 1000).toFixed(1))
  }
})
await Effect.runPromise(prog.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.scoped) as any)
