/**
 * The memory store's delivery queue is bounded per organization (docs/FAIRNESS.md, docs/DECISIONS.md §59): an
 * organization whose fan-out multiplies many events by every webhook it may have keeps at most its queue cap (plus one
 * fan-out unit) of deliveries in memory; the rest of its events wait in the outbox, in order, and another
 * organization's events recorded after them are fanned out at once.
 */
import { assert, layer } from "@effect/vitest"
import { CoreLayer, Kernel, Organizations, Webhooks } from "@feedback/core"
import { ConformanceDns, recordEvent, transactional } from "@feedback/testing"
import { Effect, Layer } from "effect"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { webhookDeliveries } from "../src/kernel/MemoryTables.ts"

const as = (organizationId: Kernel.OrganizationId) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(
    effect,
    Kernel.CurrentCaller,
    new Kernel.SecretKeyCaller({
      organizationId,
      keyId: "00000000-0000-4000-8000-0000000000aa" as Kernel.SecretKeyId,
      permissions: new Set(["settings:read", "settings:write"])
    })
  )

const newOrganization = (name: string) =>
  Organizations.Organizations.use((o) => o.createOrganization({ name })).pipe(
    Effect.map((o) => o.id as Kernel.OrganizationId)
  )

const FAN_OUT_UNIT = 200

layer(CoreLayer.pipe(Layer.provideMerge(Layer.mergeAll(MemoryStoreLayer, Kernel.IdGenerator.uuidV7, ConformanceDns))), {
  timeout: 120_000
})("bounded fan-out (memory)", (it) => {
  it.effect("an organization's queued deliveries stay under its cap; another's events are fanned out meanwhile", () =>
    Effect.gen(function*() {
      const repo = yield* Webhooks.WebhookRepository
      const aggressor = yield* newOrganization("Fan-out")
      const victim = yield* newOrganization("Neighbour")
      for (let i = 0; i < Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION; i++) {
        yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: `https://hooks.example.com/${i}`, events: ["review.updated"] })
        )
          .pipe(as(aggressor))
      }
      yield* Webhooks.Webhooks.use((w) => w.create({ url: "https://hooks.example.com/v", events: ["review.updated"] }))
        .pipe(
          as(victim)
        )
      // Every webhook's own `webhook.created` is not subscribed: only the events below fan out.
      while ((yield* Webhooks.fanOutOnce(FAN_OUT_UNIT)).events > 0) { /* fan out what creating them recorded */ }

      // One bulk change's worth of events: each fans out to 20 webhooks, a hundred times the cap in all.
      const events = 5 * Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION
      yield* transactional(Effect.gen(function*() {
        for (let i = 0; i < events; i++) yield* recordEvent(aggressor, "review.updated", { id: `r${i}`, n: i })
      }))
      yield* transactional(recordEvent(victim, "review.updated", { id: "v", n: 0 }))

      const deliveries = webhookDeliveries(yield* MemoryDatabase)
      /** What the organization holds in memory as deliveries not yet sent. */
      const queuedOf = (organizationId: Kernel.OrganizationId) =>
        Effect.sync(() =>
          [...deliveries.values()].filter((d) => d.organizationId === organizationId && d.status === "pending").length
        )
      let rounds = 0
      while ((yield* Webhooks.fanOutOnce(FAN_OUT_UNIT)).events > 0) rounds++
      const queued = yield* queuedOf(aggressor)
      assert.isAtMost(
        queued,
        Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION + FAN_OUT_UNIT * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION
      )
      assert.isAtLeast(
        queued,
        Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION,
        "the fan-out stopped at the cap, not before"
      )
      assert.isBelow(queued, events * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION, "the rest waits as events")
      assert.strictEqual(yield* queuedOf(victim), 1, "the neighbour's event recorded after them is fanned out")
      assert.isAtLeast(rounds, 1)

      // As the aggressor's deliveries go out, the rest of its events follow: every subscribed delivery, none refused.
      const D = "00000000-0000-4000-8000-0000000000d1"
      const at = Kernel.Timestamp.fromMillis(Date.UTC(2030, 0, 1))
      const sent: Array<number> = []
      for (;;) {
        yield* Webhooks.fanOutOnce(FAN_OUT_UNIT)
        const claimed = yield* repo.claimDeliveries({ dispatcherId: D, at, limit: 5_000, perWebhookLimit: 5_000 })
        if (claimed.length === 0) break
        assert.isAtMost(yield* queuedOf(aggressor), Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION + 4_000)
        for (const c of claimed) {
          if (c.delivery.organizationId === aggressor) sent.push((JSON.parse(c.delivery.body).data as { n: number }).n)
          yield* repo.completeDelivery(D, c.delivery.organizationId, c.delivery.id, {
            status: "delivered",
            responseStatus: 200,
            error: null,
            durationMs: 1
          })
        }
      }
      assert.strictEqual(
        sent.length,
        events * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION,
        "every subscribed delivery went out"
      )
    }))
})
