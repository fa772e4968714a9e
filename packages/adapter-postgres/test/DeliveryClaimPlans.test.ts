/**
 * The delivery queue's statistics say nothing about the next claim (migration 107, docs/DECISIONS.md §38): it is
 * analyzed while its pages hold no live row, then a backlog arrives. Planned on those statistics ("no rows"), the
 * claim without its functions' settings probed the whole queue per candidate, a cost growing with the backlog; with
 * them each read is an index probe, whatever the backlog.
 * Runs on embedded PGlite, or on the PostgreSQL server of TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import {
  IdGenerator,
  nextId,
  Organizations,
  type StoreServices,
  Timestamp,
  type WebhookDeliveryId,
  type WebhookDeliveryRecord,
  type WebhookId,
  WebhookRepository
} from "@feedback/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PgStoreLayer } from "../src/PgStore.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

const BACKLOG = 20_000
const CLAIM = 64
const D = "00000000-0000-4000-8000-0000000c1a1d"

layer(
  Organizations.layer.pipe(
    Layer.provideMerge(freshLayer(PgStoreLayer).pipe(Layer.provideMerge(IdGenerator.uuidV7)) as Layer.Layer<SqlClient.SqlClient | IdGenerator | StoreServices>)
  ),
  { timeout: 300_000 }
)(`delivery claim plans (${storeName})`, (it) => {
  it.effect("a claim stays a few index probes when the queue was analyzed empty and a backlog arrived", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* WebhookRepository
      const org = yield* Organizations.use((o) => o.createOrganization({ name: "Claim plans" }))
      const at = Timestamp.fromMillis(Date.UTC(2026, 0, 1))
      const hooks: Array<WebhookId> = []
      for (let i = 0; i < 2; i++) {
        const id = yield* nextId<WebhookId>()
        hooks.push(id)
        yield* repo.insert({
          id, organizationId: org.id, url: "https://hooks.example.com/x", events: ["review.updated"], hmacSecret: null,
          previousHmacSecret: null, previousSecretExpiresAt: null, createdAt: at, updatedAt: at
        })
      }
      let n = 0
      const deliveries = (count: number) =>
        Effect.forEach(Array.from({ length: count }, () => n++), (i) =>
          Effect.map(nextId<WebhookDeliveryId>(), (id): WebhookDeliveryRecord => ({
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
            createdAt: Timestamp.fromMillis(Date.UTC(2026, 0, 1) + i),
            attemptedAt: null,
            claimedBy: null,
            redeliveryOf: null,
            recordKey: `review/${i}`
          })))
      const claim = (limit: number) =>
        repo.claimDeliveries({ dispatcherId: D, at, limit, perWebhookLimit: limit })
      const finish = (claimed: ReadonlyArray<{ readonly delivery: WebhookDeliveryRecord }>) =>
        repo.completeDeliveries(D, claimed.map((c) => ({
          organizationId: c.delivery.organizationId,
          id: c.delivery.id,
          outcome: { status: "delivered" as const, responseStatus: 200, error: null, durationMs: 1 }
        })))

      // Pages that held deliveries, all finished: the queue has size and no live row when it is analyzed.
      yield* repo.insertDeliveries(yield* deliveries(2_000))
      for (;;) {
        const claimed = yield* claim(1_000)
        if (claimed.length === 0) break
        yield* finish(claimed)
      }
      yield* sql`ANALYZE webhook_delivery_queue`
      yield* repo.insertDeliveries(yield* deliveries(BACKLOG))

      const times: Array<number> = []
      let claimedSoFar = 0
      for (let turn = 0; turn < 5; turn++) {
        const started = performance.now()
        const claimed = yield* claim(CLAIM)
        times.push(performance.now() - started)
        assert.strictEqual(claimed.length, CLAIM)
        claimedSoFar += claimed.length
        yield* finish(claimed)
      }
      assert.strictEqual(claimedSoFar, 5 * CLAIM)
      const median = [...times].sort((a, b) => a - b)[2]!
      assert.isBelow(median, 100, `claims took ${times.map((t) => t.toFixed(1)).join(", ")} ms`)
    }))
})
