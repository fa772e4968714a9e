/**
 * The delivery queue's statistics say nothing about the next claim (migration 107, docs/DECISIONS.md §38): it is
 * analyzed while its pages hold no live row, then a backlog arrives. Planned on those statistics ("no rows"), the
 * claim without its functions' settings probed the whole queue per candidate, a cost growing with the backlog; with
 * them each read is an index probe, whatever the backlog.
 * Runs on embedded PGlite, or on the PostgreSQL server of TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, Organizations, type StoreServices, Webhooks } from "@feedback/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PgStoreLayer } from "../src/PgStore.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

const BACKLOG = 20_000
const CLAIM = 64
const D = "00000000-0000-4000-8000-0000000c1a1d"

layer(
  Organizations.Organizations.layer.pipe(
    Layer.provideMerge(
      freshLayer(PgStoreLayer).pipe(Layer.provideMerge(Kernel.IdGenerator.uuidV7)) as Layer.Layer<
        SqlClient.SqlClient | Kernel.IdGenerator | StoreServices
      >
    )
  ),
  { timeout: 300_000 }
)(`delivery claim plans (${storeName})`, (it) => {
  it.effect("a claim stays a few index probes when the queue was analyzed empty and a backlog arrived", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* Webhooks.WebhookRepository
      const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Claim plans" }))
      const at = Kernel.Timestamp.fromMillis(Date.UTC(2026, 0, 1))
      const hooks: Array<Kernel.WebhookId> = []
      for (let i = 0; i < 2; i++) {
        const id = yield* Kernel.nextId<Kernel.WebhookId>()
        hooks.push(id)
        yield* repo.insert({
          id,
          organizationId: org.id,
          url: "https://hooks.example.com/x",
          events: ["review.updated"],
          hmacSecret: null,
          previousHmacSecret: null,
          previousSecretExpiresAt: null,
          createdAt: at,
          updatedAt: at
        })
      }
      let n = 0
      const deliveries = (count: number) =>
        Effect.forEach(
          Array.from({ length: count }, () => n++),
          (i) =>
            Effect.map(Kernel.nextId<Kernel.WebhookDeliveryId>(), (id): Webhooks.WebhookDeliveryRecord => ({
              id,
              organizationId: org.id,
              webhookId: hooks[i % hooks.length]!,
              eventId: id as never,
              event: "review.updated",
              idempotencyKey: id,
              status: "pending",
              body: `{"idempotencyKey":"${id}","data":{"n":${i}}}`,
              responseStatus: null,
              error: null,
              durationMs: null,
              createdAt: Kernel.Timestamp.fromMillis(Date.UTC(2026, 0, 1) + i),
              attemptedAt: null,
              claimedBy: null,
              redeliveryOf: null,
              recordKey: `review/${i}`
            }))
        )
      const claim = (limit: number) => repo.claimDeliveries({ dispatcherId: D, at, limit, perWebhookLimit: limit })
      const finish = (claimed: ReadonlyArray<{ readonly delivery: Webhooks.WebhookDeliveryRecord }>) =>
        repo.completeDeliveries(
          D,
          claimed.map((c) => ({
            organizationId: c.delivery.organizationId,
            id: c.delivery.id,
            outcome: { status: "delivered" as const, responseStatus: 200, error: null, durationMs: 1 }
          }))
        )

      // Pages that held deliveries, all finished: the queue has size and no live row when it is analyzed.
      yield* repo.insertDeliveries(yield* deliveries(2_000))
      for (;;) {
        const claimed = yield* claim(1_000)
        if (claimed.length === 0) break
        yield* finish(claimed)
      }
      yield* sql`ANALYZE webhook_delivery_queue`
      yield* repo.insertDeliveries(yield* deliveries(BACKLOG))

      // The claim's cost in buffers (pages read, from memory or disk), which the plan decides and the machine's load
      // does not: a claim planned on the "no rows" statistics probes the whole queue per candidate.
      const claimBuffers = Effect.map(
        sql.unsafe<{ "QUERY PLAN": unknown }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM feedback_claim_with_outcomes('{}'::uuid[], '{}'::uuid[],
            '{}'::text[], '{}'::integer[], '{}'::text[], '{}'::integer[], $1::uuid, $2::timestamptz, $3::int, $3::int)`,
          [D, at, CLAIM]
        ),
        (rows) => {
          const raw = rows[0]!["QUERY PLAN"]
          const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<
            { readonly Plan: Record<string, number> }
          >
          return plan[0]!.Plan["Shared Hit Blocks"]! + plan[0]!.Plan["Shared Read Blocks"]!
        }
      )
      // The explained claim claims: its rows are finished as the dispatcher would finish them.
      const finishHeld = Effect.flatMap(
        sql<
          { organizationId: string; id: string }
        >`SELECT organization_id, id FROM webhook_delivery_queue WHERE claimed_by = ${D}`,
        (held) => {
          assert.strictEqual(held.length, CLAIM)
          return finish(
            held.map((h) => ({
              delivery: { organizationId: h.organizationId, id: h.id } as Webhooks.WebhookDeliveryRecord
            }))
          )
        }
      )
      const buffers: Array<number> = []
      for (let turn = 0; turn < 5; turn++) {
        buffers.push(yield* claimBuffers)
        yield* finishHeld
      }
      const claimed = yield* claim(CLAIM)
      assert.strictEqual(claimed.length, CLAIM)
      // A few dozen pages per claimed row (index probes), whatever the backlog; a claim planned on the statistics
      // reads the queue (hundreds of pages) for every candidate: tens of thousands of pages a claim.
      const median = [...buffers].sort((a, b) => a - b)[2]!
      assert.isBelow(median, 100 * CLAIM, `claims read ${buffers.join(", ")} buffers`)
    }))
})
