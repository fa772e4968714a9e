/**
 * The floor for the hot-path benchmark on a PostgreSQL server: bare `node:http` and `pg` (node-postgres), written by
 * hand, doing the essential work of `GET /reviews/{id}` in three round trips — the key and its organization in one
 * query, the organization bucket spent by the same single-statement `rate_limit_spend` the store uses, the review —
 * and nothing else (no framework, no schema, no headers beyond the JSON). Prints the same "Admin API listening on
 * <url>" line as main.ts. `DATABASE_URL` is a database the admin API has migrated and filled.
 */
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env["DATABASE_URL"], max: 10 })
const route = /^\/reviews\/([0-9a-f-]{36})$/
const camel = new Map<string, string>()
const camelCase = (s: string) => {
  let c = camel.get(s)
  if (c === undefined) camel.set(s, c = s.replace(/_([a-z])/g, (_, x: string) => x.toUpperCase()))
  return c
}

const answer = (res: import("node:http").ServerResponse, status: number, value: unknown) => {
  const body = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const server = createServer(async (req, res) => {
  try {
    const id = req.method === "GET" ? route.exec(req.url ?? "")?.[1] : undefined
    const auth = req.headers.authorization ?? ""
    if (id === undefined || !auth.startsWith("Bearer ")) return answer(res, 404, { error: { code: "NOT_FOUND" } })
    const hash = createHash("sha256").update(auth.slice(7)).digest("hex")
    const key = await pool.query(
      `SELECT k.organization_id, o.api_requests_per_minute FROM secret_keys k
       JOIN organizations o ON o.organization_id = k.organization_id
       WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [hash]
    )
    const found = key.rows[0] as { organization_id: string; api_requests_per_minute: number } | undefined
    if (found === undefined) return answer(res, 401, { error: { code: "UNAUTHORIZED" } })
    // The organization bucket in TokenBucket's units (1/60,000,000 token, per millisecond); cost 1 token.
    const perMinute = found.api_requests_per_minute
    const buckets = JSON.stringify([{ key: "org", c: perMinute * 60_000_000, r: perMinute * 1_000 }])
    const spent = await pool.query(
      `SELECT a FROM rate_limit_spend($1::uuid, $2::jsonb, 60000000::bigint, $3::bigint) LIMIT 1`,
      [
        found.organization_id,
        buckets,
        Date.now()
      ]
    )
    if (spent.rows[0]?.a !== true) return answer(res, 429, { error: { code: "RATE_LIMITED" } })
    const review = await pool.query(`SELECT * FROM reviews WHERE organization_id = $1 AND id = $2`, [
      found.organization_id,
      id
    ])
    const row = review.rows[0] as Record<string, unknown> | undefined
    if (row === undefined) return answer(res, 404, { error: { code: "NOT_FOUND" } })
    const out: Record<string, unknown> = {}
    for (const k in row) if (k !== "organization_id") out[camelCase(k)] = row[k]
    answer(res, 200, out)
  } catch (error) {
    answer(res, 500, { error: { code: "INTERNAL", message: String(error) } })
  }
})
server.listen(Number(process.env["PORT"] ?? 0), "127.0.0.1", () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  process.stdout.write(`Admin API listening on http://127.0.0.1:${port} (bare node:http + pg)\n`)
})
const stop = () => {
  server.close(() => void pool.end().then(() => process.exit(0)))
  server.closeAllConnections()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
