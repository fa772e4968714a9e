/**
 * The floor of webhook delivery on PostgreSQL, for `bench webhooks`: the least an at-most-once sender does per
 * delivery, with none of the product's rules. Each delivery is written once (the fan-out, 500 rows a statement),
 * marked in flight before its POST and given its outcome after, in one statement per turn that records the finished
 * and claims the next (64 at most, `FOR UPDATE SKIP LOCKED`, by a partial index), signed like a Standard Webhooks
 * request and POSTed 16 at a time on keep-alive connections. No event log, per-record order, per-webhook limits,
 * leases, attempts history, wake-ups or retries. What the dispatcher costs beyond this is ours; what this costs
 * beyond plain POSTs is the database's work sharing the machine's cores.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, randomUUID } from "node:crypto"
import * as http from "node:http"

const SCHEMA = [
  `
  CREATE TABLE IF NOT EXISTS floor_deliveries (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    body text NOT NULL,
    in_flight boolean NOT NULL DEFAULT false,
    done boolean NOT NULL DEFAULT false,
    status integer,
    finished_at timestamptz,
    PRIMARY KEY (organization_id, id)
  )`,
  `
  CREATE INDEX IF NOT EXISTS floor_deliveries_open ON floor_deliveries (organization_id, id) WHERE NOT in_flight AND NOT done`
]

// Records the turn's outcomes and claims the next rows in one statement; the claim cannot see the rows the same
// statement records (one snapshot), which only keeps them out of this claim. `= ANY (ARRAY(…))` keeps the claim's
// update on the key's index (a semi-join was planned as a scan of the table). Claims start after the last id claimed,
// so they do not walk earlier claims' dead entries in the open index.
const TURN = `
  WITH recorded AS (
    UPDATE floor_deliveries d
    SET in_flight = false, done = true, status = ($3::int[])[array_position($2::uuid[], d.id)], finished_at = now()
    WHERE d.organization_id = $1 AND d.id = ANY ($2::uuid[])
    RETURNING 1
  ), claimed AS (
    UPDATE floor_deliveries d SET in_flight = true
    WHERE d.organization_id = $1 AND d.id = ANY (ARRAY(
      SELECT id FROM floor_deliveries
      WHERE organization_id = $1 AND NOT in_flight AND NOT done AND id > $5
      ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED
    ))
    RETURNING d.id, d.body
  )
  SELECT id, body, (SELECT count(*) FROM recorded) FROM claimed`

/**
 * The table, vacuumed and with statistics as a running server's would be (the dispatcher's rounds run after an
 * ANALYZE too). Every round sends for the same organization, so the statistics know it: for an organization they do
 * not know, the generic plans read its whole key range by `organization_id` alone and filter the ids.
 */
export const prepareFloor = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.forEach([...SCHEMA, "VACUUM ANALYZE floor_deliveries"], (statement) => sql.unsafe(statement))
)

const organizationId = randomUUID()

/**
 * Writes `n` deliveries of `body` and sends them all to `url`, 16 at a time; every outcome is stored when it
 * returns. Answers the seconds taken.
 */
export const floorDeliveries = (url: string, n: number, body: string, secret: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(Effect.orDie(effect))
    const started = performance.now()
    // The fan-out: one multi-row INSERT per 500 deliveries.
    for (let done = 0; done < n; done += 500) {
      const ids = Array.from({ length: Math.min(500, n - done) }, () => randomUUID())
      yield* sql.unsafe(
        `INSERT INTO floor_deliveries (organization_id, id, body) SELECT $1, id, $3 FROM unnest($2::uuid[]) AS t(id)`,
        [organizationId, `{${ids.join(",")}}`, body]
      )
    }
    yield* Effect.promise(() => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
      const target = new URL(url)
      const queue: Array<{ id: string; body: string }> = []
      let finished: Array<{ id: string; status: number }> = []
      let claimed = 0
      let after = "00000000-0000-0000-0000-000000000000"
      let recorded = 0
      let posting = 0
      let turning = false
      return new Promise<void>((resolve, reject) => {
        // A turn whenever none is running and there is something to record or room in the queue.
        const turn = () => {
          if (turning) return
          const outcomes = finished
          const limit = queue.length < 32 ? Math.min(64, n - claimed) : 0
          if (outcomes.length === 0 && limit === 0) return
          finished = []
          turning = true
          run(
            sql.unsafe(TURN, [
              organizationId,
              `{${outcomes.map((o) => o.id).join(",")}}`,
              `{${outcomes.map((o) => o.status).join(",")}}`,
              limit,
              after
            ]).values
          ).then((rows) => {
            turning = false
            claimed += rows.length
            recorded += outcomes.length
            for (const row of rows) {
              const id = String(row[0])
              // Lower-case hex of one length: text order is the uuid's byte order.
              if (id > after) after = id
              queue.push({ id, body: String(row[1]) })
            }
            pump()
            if (recorded === n) resolve()
            else turn()
          }, reject)
        }
        const post = (delivery: { id: string; body: string }) => {
          posting++
          const timestamp = Math.floor(Date.now() / 1000)
          const signature = createHmac("sha256", secret).update(`${delivery.id}.${timestamp}.${delivery.body}`).digest(
            "base64"
          )
          const req = http.request(target, {
            method: "POST",
            agent,
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(delivery.body),
              "webhook-id": delivery.id,
              "webhook-timestamp": String(timestamp),
              "webhook-signature": `v1,${signature}`
            }
          }, (res) => {
            res.resume()
            res.on("end", () => {
              posting--
              finished.push({ id: delivery.id, status: res.statusCode ?? 0 })
              pump()
              turn()
            })
          })
          req.on("error", reject)
          req.end(delivery.body)
        }
        const pump = () => {
          while (posting < 16 && queue.length > 0) post(queue.shift()!)
        }
        turn()
      }).finally(() => agent.destroy())
    })
    return (performance.now() - started) / 1000
  })
