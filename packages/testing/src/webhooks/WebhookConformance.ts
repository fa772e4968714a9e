/**
 * Conformance of the webhook store: registration through the core's use-cases, and the dispatcher's storage
 * operations (fan-out, claim, complete, interruption) that at-most-once delivery rests on. Runs on every store.
 *
 * One store (one layer) serves the whole suite, as booting an embedded database is the slow part. The dispatcher
 * operations are global (they see every organization's events), so each test that uses them first drains what
 * earlier tests left behind.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Clock, Deferred, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import { CoreLayer, Kernel, Organizations, type StoreServices, Webhooks } from "@feedback/core"
import { recordEvent, transactional } from "../TestTransactions.ts"
import { asKey } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"

const { fromMillis } = Kernel.Timestamp

const all: ReadonlyArray<Kernel.Permission> = ["settings:read", "settings:write"]

const as = (organizationId: Kernel.OrganizationId, permissions: ReadonlyArray<Kernel.Permission> = all) =>
  asKey(organizationId, permissions)

const newOrganization = (name: string) =>
  Effect.map(Organizations.Organizations.use((o) => o.createOrganization({ name })), (o) => o.id)

const eventsOf = (organizationId: Kernel.OrganizationId) =>
  Kernel.EventOutbox.use((o) => o.listForOrganization(organizationId)).pipe(Effect.map((es) => es.map((e) => e.event)))

const HOOK = "https://hooks.example.com/receive"

/**
 * Fans out and finishes everything earlier tests left, so claims below see only this test's deliveries. Rounds until
 * nothing moves: an organization at its queue cap has its further events fanned out only as its deliveries finish.
 */
const drain = Effect.gen(function*() {
  const repo = yield* Webhooks.WebhookRepository
  for (;;) {
    let moved = 0
    while ((yield* Webhooks.fanOutOnce(1000)).events > 0) moved++
    yield* repo.failInterrupted(fromMillis(Date.UTC(9999, 0, 1)), "drained")
    for (;;) {
      const claimed = yield* repo.claimDeliveries({
        dispatcherId: DRAIN,
        at: fromMillis(0),
        limit: 1000,
        perWebhookLimit: 1000
      })
      if (claimed.length === 0) break
      moved++
      yield* repo.completeDeliveries(
        DRAIN,
        claimed.map((c) => ({
          organizationId: c.delivery.organizationId,
          id: c.delivery.id,
          outcome: { status: "failed", responseStatus: null, error: "drained", durationMs: null }
        }))
      )
    }
    if (moved === 0) return
  }
})
const DRAIN = "00000000-0000-4000-8000-00000000d0d0"

type It = Parameters<
  Parameters<
    ReturnType<
      typeof layer<
        StoreServices | Kernel.IdGenerator | Webhooks.HostResolver | Webhooks.Webhooks | Organizations.Organizations,
        never
      >
    >
  >[1]
>[0]

/**
 * Events of records the host owns (docs/DECISIONS.md §13): recorded in the host's unit of work (gone with it when it
 * rolls back), fanned out to subscribed webhooks like the service's own, and reported as emitted.
 */
const hostEvents = (it: It) =>
  describe("host events", () => {
    const HostLayer = Layer.fresh(Webhooks.HostEvents.layer).pipe(
      Layer.provide(Layer.succeed(Webhooks.HostEventNames, ["loyaltyTransaction.created", "loyaltyMembership.created"]))
    )
    const order = { id: "ord_1001", status: "fulfilled" }

    it.effect("a host records its own event inside its unit of work; a rolled-back one leaves nothing", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Host events")
        const host = yield* Webhooks.HostEvents
        const uow = yield* Kernel.UnitOfWork
        yield* uow.transaction(host.record(org, "loyaltyTransaction.created", order))
        const failed = yield* Effect.exit(
          uow.transaction(
            Effect.andThen(
              host.record(org, "loyaltyTransaction.created", { ...order, id: "ord_lost" }),
              Effect.fail("host write failed")
            )
          )
        )
        assert.isTrue(Exit.isFailure(failed))
        const events = yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))
        assert.deepStrictEqual(events.map((e) => [e.event, e.data]), [["loyaltyTransaction.created", order]])
        // Undeclared names are the host's bug, not data: a defect that records nothing.
        const undeclared = yield* Effect.exit(host.record(org, "wishlist.created", {}))
        assert.isTrue(Exit.isFailure(undeclared) && Cause.hasDies(undeclared.cause))
        assert.strictEqual((yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))).length, 1)
      }).pipe(Effect.provide(HostLayer)))

    it.effect("a host event reaches the webhooks subscribed to it, and only those", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Host delivery")
        const orders = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: `${HOOK}/orders`, events: ["loyaltyTransaction.created"] })
        ).pipe(as(org))
        yield* Webhooks.Webhooks.use((w) => w.create({ url: `${HOOK}/reviews`, events: ["review.created"] })).pipe(
          as(org)
        )
        yield* Webhooks.HostEvents.use((h) => h.record(org, "loyaltyTransaction.created", order)).pipe(transactional)
        yield* drain
        const deliveries = yield* Webhooks.WebhookRepository.use((r) =>
          r.listDeliveries(org, orders.id, { after: undefined, limit: 10 })
        )
        assert.deepStrictEqual(deliveries.map((d) => d.event), ["loyaltyTransaction.created"])
      }).pipe(Effect.provide(HostLayer)))

    it("declarations are checked: unknown names and the service's own names are refused", () => {
      assert.include(Webhooks.hostEventNamesProblem(["order.shipped"]) ?? "", "not in the event catalog: order.shipped")
      assert.include(Webhooks.hostEventNamesProblem(["review.created"]) ?? "", "recorded by the service itself")
      assert.isUndefined(Webhooks.hostEventNamesProblem(["loyaltyTransaction.created", "wishlist.created"]))
      assert.deepStrictEqual(Webhooks.emittedEventNames(["loyaltyTransaction.created"]), [
        ...Webhooks.SERVICE_EVENT_NAMES,
        "loyaltyTransaction.created"
      ])
    })
  })

/** Secret rotation (docs/DECISIONS.md §17): what the store keeps and what a claim hands the dispatcher. */
const rotation = (it: It) =>
  it.effect("a rotation keeps the replaced secret until the overlap ends; a PATCH of the secret or no overlap keeps none", () =>
    Effect.gen(function*() {
      yield* drain
      const org = yield* newOrganization("Rotation")
      const hook = yield* Webhooks.Webhooks.use((w) =>
        w.create({ url: HOOK, events: ["review.created"], hmacSecret: "first-secret-0123456789" })
      ).pipe(as(org))
      const rotatedAt = yield* Clock.currentTimeMillis
      yield* Webhooks.Webhooks.use((w) =>
        w.rotateSecret(hook.id, { hmacSecret: "second-secret-0123456789", overlapSeconds: 3_600 })
      ).pipe(as(org))
      const repo = yield* Webhooks.WebhookRepository
      const stored = Option.getOrThrow(yield* repo.findById(org, hook.id))
      assert.deepInclude(stored, {
        hmacSecret: "second-secret-0123456789",
        previousHmacSecret: "first-secret-0123456789",
        previousSecretExpiresAt: fromMillis(rotatedAt + 3_600_000)
      })
      yield* transactional(recordEvent(org, "review.created", { id: "r" }))
      yield* Webhooks.fanOutOnce(1000)
      const [claim] = yield* repo.claimDeliveries({
        dispatcherId: "00000000-0000-4000-8000-0000000000e1",
        at: fromMillis(rotatedAt),
        limit: 10,
        perWebhookLimit: 10
      })
      assert.deepStrictEqual([claim!.hmacSecret, claim!.previousSecret], ["second-secret-0123456789", {
        hmacSecret: "first-secret-0123456789",
        expiresAt: fromMillis(rotatedAt + 3_600_000)
      }])
      yield* Webhooks.Webhooks.use((w) => w.update(hook.id, { hmacSecret: "third-secret-0123456789" })).pipe(as(org))
      assert.deepInclude(Option.getOrThrow(yield* repo.findById(org, hook.id)), {
        previousHmacSecret: null,
        previousSecretExpiresAt: null
      })
      yield* Webhooks.Webhooks.use((w) =>
        w.rotateSecret(hook.id, { hmacSecret: "fourth-secret-0123456789", overlapSeconds: 0 })
      )
        .pipe(as(org))
      assert.deepInclude(Option.getOrThrow(yield* repo.findById(org, hook.id)), {
        hmacSecret: "fourth-secret-0123456789",
        previousHmacSecret: null
      })
      const missing = yield* Effect.flip(
        Webhooks.Webhooks.use((w) =>
          w.rotateSecret("00000000-0000-4000-8000-000000000000" as Kernel.WebhookId, {
            hmacSecret: "fifth-secret-0123456789"
          })
        ).pipe(as(org))
      )
      assert.strictEqual(missing._tag, "NotFound")
    }))

/** Redeliveries (docs/DECISIONS.md §17): extra rows for the same event; the first delivery stays unique. */
const redelivery = (it: It) =>
  it.effect("a redelivery is another row of the same event with a new key; a repeated first delivery is still ignored", () =>
    Effect.gen(function*() {
      const org = yield* newOrganization("Redelivery")
      const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
        as(org)
      )
      yield* transactional(recordEvent(org, "review.created", { id: "r1" }))
      yield* drain
      const repo = yield* Webhooks.WebhookRepository
      const [first] = yield* repo.listDeliveries(org, hook.id, { after: undefined, limit: 10 })
      const again = yield* Webhooks.Webhooks.use((w) => w.redeliver(hook.id, first!.id)).pipe(as(org))
      const twice = yield* Webhooks.Webhooks.use((w) => w.redeliver(hook.id, first!.id)).pipe(as(org))
      assert.deepInclude(again, { eventId: first!.eventId, redeliveryOf: first!.id, status: "pending" })
      assert.notStrictEqual(again.idempotencyKey, twice.idempotencyKey)
      assert.deepStrictEqual(again.payload, { ...JSON.parse(first!.body), idempotencyKey: again.idempotencyKey })
      // The fan-out's guarantee still holds for first deliveries.
      yield* repo.insertDeliveries([{
        ...first!,
        id: "00000000-0000-4000-8000-00000000f1f1" as never,
        idempotencyKey: "00000000-0000-4000-8000-00000000f2f2",
        status: "pending"
      }])
      const log = yield* repo.listDeliveries(org, hook.id, { after: undefined, limit: 10 })
      assert.strictEqual(log.length, 3)
      assert.strictEqual(log.filter((d) => d.redeliveryOf === null).length, 1)
      assert.strictEqual(
        (yield* Effect.flip(
          Webhooks.Webhooks.use((w) => w.redeliver(hook.id, "00000000-0000-4000-8000-000000000000" as never)).pipe(
            as(org)
          )
        ))._tag,
        "NotFound"
      )
    }))

/** A ping or redelivery stored after its webhook was deleted (a race with the delete) stores nothing, and fails nothing. */
const orphanDelivery = (it: It) =>
  it.effect("a delivery outside the fan-out for a webhook deleted meanwhile is not stored, and is no error", () =>
    Effect.gen(function*() {
      const org = yield* newOrganization("Orphan")
      const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
        as(org)
      )
      yield* Webhooks.Webhooks.use((w) => w.delete(hook.id)).pipe(as(org))
      const id = "00000000-0000-4000-8000-0000000a0f01"
      const record = Webhooks.pendingDelivery({
        id: id as never,
        organizationId: org,
        webhookId: hook.id,
        eventId: "00000000-0000-4000-8000-0000000a0f02" as never,
        event: "webhook.ping",
        idempotencyKey: "00000000-0000-4000-8000-0000000a0f03",
        body: "{}",
        createdAt: fromMillis(Date.UTC(2026, 0, 1)),
        redeliveryOf: null,
        recordKey: null
      })
      const repo = yield* Webhooks.WebhookRepository
      yield* repo.insertDeliveries([record])
      assert.isTrue(Option.isNone(yield* repo.findDelivery(org, hook.id, id as never)))
    }))

/**
 * A delivery's body is stored byte for byte, whatever it holds: a store may send the bodies of one event's
 * deliveries as shared parts around each idempotency key (PostgreSQL, docs/DECISIONS.md §38), so these bodies hold
 * the key once, twice, not at all, next to escapes and other characters.
 */
const bodies = (it: It) =>
  it.effect("delivery bodies are stored exactly, wherever the idempotency key appears in them", () =>
    Effect.gen(function*() {
      const org = yield* newOrganization("Bodies")
      const hookA = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
        as(org)
      )
      const hookB = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
        as(org)
      )
      const eventId = "00000000-0000-4000-8000-0000000b0d1e"
      const key = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
      const shapes: ReadonlyArray<(k: string) => string> = [
        (k) => `{"event":"review.created","idempotencyKey":${JSON.stringify(k)},"data":{"t":"caf\u00e9 \\ \"q\""}}`,
        (k) => `{"idempotencyKey":${JSON.stringify(k)},"data":{"echo":${JSON.stringify(k)}}}`,
        () => `{"event":"review.created","data":{"no":"key"}}`,
        (k) => `${JSON.stringify(k)}`,
        (k) => `{"idempotencyKey":${JSON.stringify(k)},"data":{"other":"ünï ✓ 𝄞"}}`,
        (k) => `{"idempotencyKey":${JSON.stringify(k)},"data":{"other":"ünï ✓ 𝄞"}}`
      ]
      const at = fromMillis(Date.UTC(2026, 0, 1))
      const records: Array<Webhooks.WebhookDeliveryRecord> = shapes.flatMap((shape, i) =>
        [hookA.id, hookB.id].map((webhookId, j) =>
          Webhooks.pendingDelivery({
            id: key(100 + i * 2 + j) as never,
            organizationId: org,
            webhookId,
            eventId: eventId as never,
            event: "review.created",
            idempotencyKey: key(200 + i * 2 + j),
            body: shape(key(200 + i * 2 + j)),
            createdAt: at,
            redeliveryOf: key(300) as never,
            recordKey: null
          })
        )
      )
      // A key in upper case, and a delivery already finished, in the same batch: a store may write such rows
      // another way than new pending ones with a canonical key (PostgreSQL, docs/DECISIONS.md §41).
      const upper = key(500).toUpperCase()
      records.push(
        { ...records[0]!, id: key(501) as never, idempotencyKey: upper, body: shapes[0]!(upper) },
        {
          ...records[1]!,
          id: key(502) as never,
          idempotencyKey: key(503),
          body: shapes[1]!(key(503)),
          status: "failed",
          error: "HTTP 500",
          responseStatus: 500,
          durationMs: 3,
          attemptedAt: at
        }
      )
      const repo = yield* Webhooks.WebhookRepository
      yield* repo.insertDeliveries(records)
      for (const r of records) {
        const stored = yield* repo.findDelivery(org, r.webhookId, r.id)
        assert.strictEqual(Option.getOrThrow(stored).body, r.body)
      }
      yield* drain
    }))

/** The event feed (docs/DECISIONS.md §17). */
const feed = (it: It) =>
  describe("event feed", () => {
    const read = (org: Kernel.OrganizationId, query: Parameters<Webhooks.Webhooks["Service"]["feed"]>[0]) =>
      Webhooks.Webhooks.use((w) => w.feed(query)).pipe(as(org, ["settings:read"]))
    it.effect("lists every event oldest first, resumes from a cursor that is never null, and filters by name", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Feed")
        const other = yield* newOrganization("Feed neighbour")
        yield* transactional(recordEvent(other, "review.created", { id: "foreign" }))
        for (let i = 0; i < 5; i++) {
          yield* transactional(recordEvent(org, i % 2 === 0 ? "review.created" : "product.updated", { id: `r${i}` }))
        }
        const first = yield* read(org, { limit: 3 })
        assert.deepStrictEqual(first.data.map((e) => (e.data as { id: string }).id), ["r0", "r1", "r2"])
        const rest = yield* read(org, { cursor: first.nextCursor })
        assert.deepStrictEqual(rest.data.map((e) => (e.data as { id: string }).id), ["r3", "r4"])
        // At the end: an empty page and a cursor that picks up what happens next.
        const end = yield* read(org, { cursor: rest.nextCursor })
        assert.deepStrictEqual(end.data, [])
        yield* transactional(recordEvent(org, "review.deleted", { id: "r5" }))
        assert.deepStrictEqual((yield* read(org, { cursor: end.nextCursor })).data.map((e) => e.event), [
          "review.deleted"
        ])
        // Filtered by name; the cursor is bound to the names.
        const reviews = yield* read(org, { events: "review.created,review.deleted", limit: 2 })
        assert.deepStrictEqual(reviews.data.map((e) => (e.data as { id: string }).id), ["r0", "r2"])
        assert.deepStrictEqual(
          (yield* read(org, { events: ["review.deleted", "review.created"], cursor: reviews.nextCursor })).data.map((
            e
          ) => (e.data as { id: string }).id),
          ["r4", "r5"]
        )
        const misuse = yield* Effect.flip(read(org, { events: "product.updated", cursor: reviews.nextCursor }))
        assert.strictEqual(misuse._tag, "InvalidRequest")
        const unknown = yield* Effect.flip(read(org, { events: "review.created,order.shipped" }))
        assert.deepStrictEqual(unknown._tag === "InvalidRequest" ? unknown.issues.map((i) => i.path) : [], [
          "events[1]"
        ])
        // Each entry is the event as recorded; other organizations' events never show.
        const all = yield* read(org, { limit: 250 })
        const stored = yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))
        assert.deepStrictEqual(
          all.data,
          stored.map((e) => ({ id: e.id, event: e.event, timestamp: e.occurredAt, data: e.data }))
        )
        assert.strictEqual(
          (yield* Effect.flip(read(org, { cursor: (yield* read(other, {})).nextCursor })))._tag,
          "InvalidRequest"
        )
      }))

    it.effect("purging removes only old events that were fanned out, in bounded batches", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Purge")
        yield* transactional(recordEvent(org, "review.created", { id: "old" }))
        yield* drain
        const cutoff = fromMillis(Date.UTC(9999, 0, 1))
        yield* transactional(recordEvent(org, "review.created", { id: "waiting" }))
        const outbox = yield* Kernel.EventOutbox
        let purged = 0
        for (;;) {
          const n = yield* outbox.purge(cutoff, 1_000)
          purged += n
          if (n === 0) break
        }
        assert.isAtLeast(purged, 1)
        assert.deepStrictEqual((yield* read(org, {})).data.map((e) => (e.data as { id: string }).id), ["waiting"])
        yield* drain
      }))
  })

/** Order per record (docs/DECISIONS.md §17). */
const ordering = (it: It) =>
  it.effect("deliveries about one record are claimed one at a time in event order; other records are not held up", () =>
    Effect.gen(function*() {
      yield* drain
      const org = yield* newOrganization("Ordering")
      const hook = yield* Webhooks.Webhooks.use((w) =>
        w.create({ url: HOOK, events: ["review.created", "review.updated", "review.deleted"] })
      ).pipe(as(org))
      for (
        const [event, id, n] of [["review.created", "a", 1], ["review.updated", "a", 2], ["review.created", "b", 1], [
          "review.updated",
          "a",
          3
        ], ["review.deleted", "a", 4]] as const
      ) {
        yield* transactional(recordEvent(org, event, { id, n }))
        yield* TestClock.adjust("1 millis")
      }
      while ((yield* Webhooks.fanOutOnce(1_000)).events > 0) { /* fan out */ }
      const repo = yield* Webhooks.WebhookRepository
      const D = "00000000-0000-4000-8000-0000000000e7"
      const at = fromMillis(1_000)
      const seen: Array<string> = []
      for (let round = 0; round < 10; round++) {
        const claimed = (yield* repo.claimDeliveries({ dispatcherId: D, at, limit: 100, perWebhookLimit: 100 })).filter(
          (c) => c.delivery.webhookId === hook.id
        )
        if (claimed.length === 0) break
        const about = claimed.map((c) => JSON.parse(c.delivery.body).data as { id: string; n: number })
        // Never two of one record at once.
        assert.strictEqual(new Set(about.map((d) => d.id)).size, about.length)
        seen.push(...about.map((d) => `${d.id}${d.n}`))
        for (const c of claimed) {
          yield* repo.completeDelivery(D, org, c.delivery.id, {
            status: "delivered",
            responseStatus: 200,
            error: null,
            durationMs: 1
          })
        }
      }
      assert.deepStrictEqual(seen.filter((s) => s.startsWith("a")), ["a1", "a2", "a3", "a4"])
      // b went out in the first round, beside a1, not after a's whole history.
      assert.isBelow(seen.indexOf("b1"), 2)
    }))

const registration = (it: It) =>
  describe("registration", () => {
    it.effect("creates, reads, updates and deletes, recording an event for each change, never exposing the secret", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Hooks")
        const created = yield* Webhooks.Webhooks.use((w) =>
          w.create({
            url: "HTTPS://Hooks.Example.com/receive",
            events: ["review.created", "review.updated", "review.created"],
            hmacSecret: "s3cret-value-0123456789"
          })
        ).pipe(as(org))
        assert.strictEqual(created.url, HOOK)
        assert.deepStrictEqual(created.events, ["review.created", "review.updated"])
        assert.isTrue(created.hasSecret)
        assert.deepStrictEqual(Object.keys(created).sort(), [
          "createdAt",
          "events",
          "hasSecret",
          "id",
          "updatedAt",
          "url"
        ])
        assert.deepStrictEqual(yield* Webhooks.Webhooks.use((w) => w.get(created.id)).pipe(as(org)), created)

        yield* TestClock.adjust("1 second")
        const kept = yield* Webhooks.Webhooks.use((w) => w.update(created.id, { events: ["productQuestion.created"] }))
          .pipe(
            as(org)
          )
        assert.deepStrictEqual(kept.events, ["productQuestion.created"])
        assert.isTrue(kept.hasSecret, "omitting hmacSecret keeps it")
        assert.isTrue(kept.updatedAt > created.updatedAt)
        const cleared = yield* Webhooks.Webhooks.use((w) => w.update(created.id, { hmacSecret: null })).pipe(as(org))
        assert.isFalse(cleared.hasSecret, "null removes the secret")
        const stored = yield* Webhooks.WebhookRepository.use((r) => r.findById(org, created.id))
        assert.strictEqual(Option.getOrThrow(stored).hmacSecret, null)
        const unchanged = yield* Webhooks.Webhooks.use((w) => w.update(created.id, { url: HOOK })).pipe(as(org))
        assert.deepStrictEqual(unchanged, cleared, "a PATCH that changes nothing changes nothing")

        const deleted = yield* Webhooks.Webhooks.use((w) => w.delete(created.id)).pipe(as(org))
        assert.deepStrictEqual(deleted, cleared)
        const gone = yield* Effect.flip(Webhooks.Webhooks.use((w) => w.get(created.id)).pipe(as(org)))
        assert.strictEqual(gone._tag, "NotFound")

        const outbox = yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))
        assert.deepStrictEqual(outbox.map((e) => e.event), [
          "webhook.created",
          "webhook.updated",
          "webhook.updated",
          "webhook.deleted"
        ])
        assert.deepStrictEqual(outbox[0]?.data, created)
        assert.notInclude(JSON.stringify(outbox), "s3cret-value")
      }))

    it.effect("refuses bad input with a 400 naming the field, and writes nothing", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Invalid")
        const cases: ReadonlyArray<readonly [Webhooks.CreateWebhook, string]> = [
          [{ url: "not a url", events: ["review.created"] }, "body.url"],
          [{ url: "http://hooks.example.com/x", events: ["review.created"] }, "body.url"],
          [{ url: "https://169.254.169.254/latest", events: ["review.created"] }, "body.url"],
          [{ url: "https://127.0.0.1/x", events: ["review.created"] }, "body.url"],
          [{ url: "https://localhost/x", events: ["review.created"] }, "body.url"],
          [{ url: "https://internal.example.com/x", events: ["review.created"] }, "body.url"],
          [{ url: "https://mixed.example.com/x", events: ["review.created"] }, "body.url"],
          [{ url: "https://nowhere.example.com/x", events: ["review.created"] }, "body.url"],
          [{ url: HOOK, events: [] }, "body.events"],
          [{ url: HOOK, events: ["review.created", "review.published"] }, "body.events[1]"],
          [{ url: HOOK, events: ["review.*"] }, "body.events[0]"],
          [{ url: HOOK, events: ["review.created"], hmacSecret: "" }, "body.hmacSecret"]
        ]
        for (const [input, path] of cases) {
          const error = yield* Effect.flip(Webhooks.Webhooks.use((w) => w.create(input)).pipe(as(org)))
          assert.strictEqual(error._tag, "InvalidRequest", JSON.stringify(input))
          if (error._tag === "InvalidRequest") assert.strictEqual(error.issues[0]?.path, path, JSON.stringify(input))
        }
        const list = yield* Webhooks.Webhooks.use((w) => w.list({})).pipe(as(org))
        assert.deepStrictEqual(list.data, [])
        assert.deepStrictEqual(yield* eventsOf(org), [])

        const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
          as(org)
        )
        const badPatch = yield* Effect.flip(
          Webhooks.Webhooks.use((w) => w.update(hook.id, { url: "https://10.1.2.3/", events: ["review.updated"] }))
            .pipe(as(org))
        )
        assert.strictEqual(badPatch._tag, "InvalidRequest")
        assert.deepStrictEqual(yield* Webhooks.Webhooks.use((w) => w.get(hook.id)).pipe(as(org)), hook)
        assert.deepStrictEqual(yield* eventsOf(org), ["webhook.created"])
      }))

    it.effect("the settings can allow http and private hosts", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Local")
        // The service reads its settings when it is built: a host with other settings builds it with them.
        const permissive = Webhooks.Webhooks.layer.pipe(
          Layer.provide(
            Layer.succeed(Webhooks.CurrentWebhookSettings, { allowInsecure: true, allowPrivate: true, timeoutMs: 1000 })
          )
        )
        const hook = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: "http://127.0.0.1:9/x", events: ["review.created"] })
        )
          .pipe(
            as(org),
            Effect.provide(permissive, { local: true })
          )
        assert.strictEqual(hook.url, "http://127.0.0.1:9/x")
        assert.isFalse(hook.hasSecret)
      }))

    it.effect("another organization's webhook is NotFound for every operation", () =>
      Effect.gen(function*() {
        const a = yield* newOrganization("A")
        const b = yield* newOrganization("B")
        const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
          as(a)
        )
        const errors = [
          yield* Effect.flip(Webhooks.Webhooks.use((w) => w.get(hook.id)).pipe(as(b))),
          yield* Effect.flip(
            Webhooks.Webhooks.use((w) => w.update(hook.id, { events: ["review.deleted"] })).pipe(as(b))
          ),
          yield* Effect.flip(Webhooks.Webhooks.use((w) => w.delete(hook.id)).pipe(as(b))),
          yield* Effect.flip(Webhooks.Webhooks.use((w) => w.listDeliveries(hook.id, {})).pipe(as(b)))
        ]
        assert.deepStrictEqual(errors.map((e) => e._tag), ["NotFound", "NotFound", "NotFound", "NotFound"])
        assert.deepStrictEqual(yield* Webhooks.Webhooks.use((w) => w.get(hook.id)).pipe(as(a)), hook)
        assert.deepStrictEqual((yield* Webhooks.Webhooks.use((w) => w.list({})).pipe(as(b))).data, [])
      }))

    it.effect("needs settings:read to read and settings:write to change", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Perms")
        const denied = yield* Effect.flip(
          Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
            as(org, ["settings:read"])
          )
        )
        assert.deepInclude(denied, { _tag: "Forbidden", permission: "settings:write" })
        const cannotList = yield* Effect.flip(Webhooks.Webhooks.use((w) => w.list({})).pipe(as(org, ["reviews:read"])))
        assert.deepInclude(cannotList, { _tag: "Forbidden", permission: "settings:read" })
        const events = yield* Webhooks.Webhooks.use((w) => w.listEvents()).pipe(as(org, ["settings:read"]))
        assert.include(events.data, "webhook.created")
      }))

    it.effect("lists newest first with stable cursors bound to their list", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Pages")
        const created: Array<{ id: Kernel.WebhookId; createdAt: string }> = []
        for (let i = 0; i < 5; i++) {
          created.push(
            yield* Webhooks.Webhooks.use((w) => w.create({ url: `${HOOK}/${i}`, events: ["review.created"] })).pipe(
              as(org)
            )
          )
          if (i % 2 === 0) yield* TestClock.adjust("1 second") // some share a createdAt: id breaks the tie
        }
        const ids = [...created]
          .sort((x, y) => x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1)
          .map((w) => w.id)
        const first = yield* Webhooks.Webhooks.use((w) => w.list({ limit: 2 })).pipe(as(org))
        assert.strictEqual(first.data.length, 2)
        assert.isNotNull(first.nextCursor)
        const second = yield* Webhooks.Webhooks.use((w) => w.list({ limit: 2, cursor: first.nextCursor! })).pipe(
          as(org)
        )
        const third = yield* Webhooks.Webhooks.use((w) => w.list({ limit: 2, cursor: second.nextCursor! })).pipe(
          as(org)
        )
        assert.isNull(third.nextCursor)
        const seen = [...first.data, ...second.data, ...third.data].map((w) => w.id)
        assert.deepStrictEqual(seen, ids)
        const whole = yield* Webhooks.Webhooks.use((w) => w.list({ limit: 5 })).pipe(as(org))
        assert.isNull(whole.nextCursor)

        for (const query of [{ limit: 0 }, { limit: 251 }, { limit: 1.5 }, { cursor: "garbage!" }, { cursor: "e30" }]) {
          const error = yield* Effect.flip(Webhooks.Webhooks.use((w) => w.list(query)).pipe(as(org)))
          assert.strictEqual(error._tag, "InvalidRequest", JSON.stringify(query))
        }
        const foreign = yield* Effect.flip(
          Webhooks.Webhooks.use((w) => w.listDeliveries(ids[0]!, { cursor: first.nextCursor! })).pipe(as(org))
        )
        assert.strictEqual(foreign._tag, "InvalidRequest", "a cursor of another list is refused")
      }))
  })

const transportOf = (answer: (request: Webhooks.OutgoingWebhook) => Webhooks.TransportResult) => {
  const sent: Array<Webhooks.OutgoingWebhook> = []
  const layer = Layer.succeed(
    Webhooks.WebhookTransport,
    Webhooks.WebhookTransport.of({
      post: (request) =>
        Effect.sync(() => {
          sent.push(request)
          return answer(request)
        })
    })
  )
  return { sent, layer }
}

const OK: Webhooks.TransportResult = { _tag: "Response", status: 200, bodyExcerpt: "" }

/**
 * A transport answering 200 to its first `atOnce` POSTs at once and to later ones only when `gate` opens; `sent`
 * holds each POST's `webhook-id`, in order.
 */
const heldTransport = (gate: Deferred.Deferred<void>, atOnce = 0) => {
  const sent: Array<string> = []
  const layer = Layer.succeed(
    Webhooks.WebhookTransport,
    Webhooks.WebhookTransport.of({
      post: (request) =>
        Effect.suspend(() => {
          sent.push(request.headers["webhook-id"]!)
          return sent.length <= atOnce ? Effect.succeed(OK) : Effect.as(Deferred.await(gate), OK)
        })
    })
  )
  return { sent, layer }
}

/** Real time (the suite's clock is a test clock): a running dispatcher waits on the store and on the transport. */
const pause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Polls `done` in real time until it holds; fails naming `what` after about a minute. */
const until = <E, R>(done: Effect.Effect<boolean, E, R>, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 6_000; i++) {
      if (yield* done) return
      yield* pause(10)
    }
    assert.fail(`timed out waiting for ${what}`)
  })

/** An organization with one webhook on `review.created`, and `events` such events (`data` by `dataOf`) fanned out. */
const hookWithDeliveries = (name: string, events: number, dataOf: (i: number) => object = (i) => ({ i })) =>
  Effect.gen(function*() {
    const org = yield* newOrganization(name)
    const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
      as(org)
    )
    for (let i = 0; i < events; i++) yield* transactional(recordEvent(org, "review.created", dataOf(i)))
    yield* Webhooks.fanOutOnce(1000)
    return { org, hook }
  })

/** The webhook's delivery log by delivery id. */
const deliveriesById = (org: Kernel.OrganizationId, hookId: Kernel.WebhookId) =>
  Effect.map(
    Webhooks.WebhookRepository.use((r) => r.listDeliveries(org, hookId, { after: undefined, limit: 10 })),
    (log) => new Map(log.map((d) => [d.id, d]))
  )

/** Outcomes a dispatcher records: a success, and a failure whose text holds a NUL (PostgreSQL text holds none). */
const DELIVERED = { status: "delivered", responseStatus: 200, error: null, durationMs: 3 } as const
const FAILED = { status: "failed", responseStatus: 500, error: "HTTP 500: nope \u0000 here", durationMs: 4 } as const

const delivery = (it: It) =>
  describe("fan-out and delivery state", () => {
    it.effect("fans each committed event out once to the webhooks subscribed to its exact name", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Fan-out")
        const other = yield* newOrganization("Other")
        const reviews = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: HOOK, events: ["review.created", "review.deleted"] })
        ).pipe(as(org))
        const questions = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: HOOK, events: ["productQuestion.created"] })
        ).pipe(
          as(org)
        )
        const both = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: HOOK, events: ["review.created", "productQuestion.created"] })
        ).pipe(as(org))
        const foreign = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
          as(other)
        )
        yield* transactional(Effect.gen(function*() {
          yield* recordEvent(org, "review.created", { id: "r1", n: 1 })
          yield* recordEvent(org, "review.updated", { id: "r1" })
          yield* recordEvent(org, "productQuestion.created", { id: "q1" })
        }))
        const result = yield* Webhooks.fanOutOnce(1000)
        assert.isAtLeast(result.events, 3)
        assert.deepStrictEqual(yield* Webhooks.fanOutOnce(1000), { events: 0, deliveries: 0 })

        const repo = yield* Webhooks.WebhookRepository
        const log = (id: Kernel.WebhookId) => repo.listDeliveries(org, id, { after: undefined, limit: 100 })
        const r = yield* log(reviews.id)
        assert.deepStrictEqual(r.map((d) => d.event), ["review.created"])
        assert.deepStrictEqual((yield* log(questions.id)).map((d) => d.event), ["productQuestion.created"])
        assert.deepStrictEqual((yield* log(both.id)).map((d) => d.event).sort(), [
          "productQuestion.created",
          "review.created"
        ])
        assert.deepStrictEqual(yield* repo.listDeliveries(other, foreign.id, { after: undefined, limit: 100 }), [])

        const d = r[0]!
        assert.strictEqual(d.status, "pending")
        // Top-level keys in the documented order (the data's own key order is the outbox's to keep).
        assert.match(
          d.body,
          /^\{"event":"review\.created","timestamp":"[^"]+","idempotencyKey":"[^"]+","eventId":"[^"]+","data":\{/
        )
        assert.deepStrictEqual(JSON.parse(d.body), {
          event: "review.created",
          timestamp: d.createdAt,
          idempotencyKey: d.idempotencyKey,
          eventId: d.eventId,
          data: { id: "r1", n: 1 }
        })
        const view = Webhooks.toWebhookDelivery(d)
        assert.deepStrictEqual(view.payload, {
          event: "review.created",
          timestamp: d.createdAt,
          idempotencyKey: d.idempotencyKey,
          eventId: d.eventId,
          data: { id: "r1", n: 1 }
        })
        assert.deepInclude(view, {
          status: "pending",
          responseStatus: null,
          error: null,
          durationMs: null,
          attemptedAt: null
        })
        const keys = [...r, ...(yield* log(questions.id)), ...(yield* log(both.id))].map((x) => x.idempotencyKey)
        assert.strictEqual(new Set(keys).size, keys.length)
      }))

    it.effect("a webhook gets only events that occurred after it was registered", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Late")
        yield* transactional(recordEvent(org, "review.created", { before: true }))
        yield* TestClock.adjust("1 second")
        const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
          as(org)
        )
        yield* transactional(recordEvent(org, "review.created", { before: false }))
        yield* Webhooks.fanOutOnce(1000)
        const log = yield* Webhooks.WebhookRepository.use((r) =>
          r.listDeliveries(org, hook.id, { after: undefined, limit: 10 })
        )
        assert.deepStrictEqual(log.map((d) => JSON.parse(d.body).data), [{ before: false }])
      }))

    it.effect("a rolled-back fan-out hands its events out again", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Rollback")
        yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(as(org))
        yield* transactional(recordEvent(org, "review.created", {}))
        const exit = yield* Effect.exit(transactional(Effect.gen(function*() {
          const taken = yield* Webhooks.WebhookRepository.use((r) => r.takeUndispatchedEvents(1000))
          assert.isAbove(taken.length, 0)
          return yield* Effect.fail("boom")
        })))
        assert.isTrue(Exit.isFailure(exit))
        const again = yield* Webhooks.WebhookRepository.use((r) => transactional(r.takeUndispatchedEvents(1000)))
        assert.include(again.map((e) => e.organizationId), org)
      }))

    it.effect("claims oldest first, once, within the per-webhook and batch limits", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Claims")
        const a = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(as(org))
        const b = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(as(org))
        for (let i = 0; i < 4; i++) {
          yield* transactional(recordEvent(org, "review.created", { i }))
          yield* TestClock.adjust("10 millis")
          yield* Webhooks.fanOutOnce(1000)
        }
        const repo = yield* Webhooks.WebhookRepository
        const D1 = "00000000-0000-4000-8000-0000000000d1"
        const D2 = "00000000-0000-4000-8000-0000000000d2"
        const at = fromMillis(1_000)
        const first = yield* repo.claimDeliveries({ dispatcherId: D1, at, limit: 10, perWebhookLimit: 1 })
        assert.deepStrictEqual(first.map((c) => c.delivery.webhookId).sort(), [a.id, b.id].sort())
        for (const c of first) {
          assert.strictEqual(JSON.parse(c.delivery.body).data.i, 0, "oldest first")
          assert.deepInclude(c.delivery, { status: "in_flight", claimedBy: D1, attemptedAt: at })
          assert.strictEqual(c.url, HOOK)
        }
        assert.deepStrictEqual(
          yield* repo.claimDeliveries({ dispatcherId: D2, at, limit: 10, perWebhookLimit: 1 }),
          [],
          "both webhooks are at their limit"
        )
        const more = yield* repo.claimDeliveries({ dispatcherId: D2, at, limit: 1, perWebhookLimit: 3 })
        assert.strictEqual(more.length, 1, "the batch limit holds")
        // Concurrent claimers never get the same delivery.
        const racing = yield* Effect.all(
          Array.from(
            { length: 8 },
            (_, i) => repo.claimDeliveries({ dispatcherId: i % 2 === 0 ? D1 : D2, at, limit: 2, perWebhookLimit: 100 })
          ),
          { concurrency: "unbounded" }
        )
        const ids = [...first, ...more, ...racing.flat()].map((c) => c.delivery.id)
        assert.strictEqual(ids.length, 8)
        assert.strictEqual(new Set(ids).size, 8)

        // Only the claimer records the outcome, once.
        const c = first[0]!
        const outcome = { status: "delivered", responseStatus: 204, error: null, durationMs: 12 } as const
        assert.isFalse(yield* repo.completeDelivery(D2, org, c.delivery.id, outcome))
        assert.isTrue(yield* repo.completeDelivery(D1, org, c.delivery.id, outcome))
        assert.isFalse(yield* repo.completeDelivery(D1, org, c.delivery.id, { ...outcome, status: "failed" }))
        const log = yield* repo.listDeliveries(org, c.delivery.webhookId, { after: undefined, limit: 10 })
        const row = log.find((d) => d.id === c.delivery.id)!
        assert.deepInclude(Webhooks.toWebhookDelivery(row), {
          status: "delivered",
          responseStatus: 204,
          error: null,
          durationMs: 12,
          attemptedAt: at
        })
        assert.strictEqual(Webhooks.toWebhookDelivery(log.find((d) => d.status === "in_flight")!).status, "pending")
        yield* drain
      }))

    it.effect("an organization has at most MAX_WEBHOOKS_PER_ORGANIZATION webhooks; one more is a 400 and writes nothing", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Many hooks")
        const other = yield* newOrganization("Other hooks")
        const create = (o: Kernel.OrganizationId) =>
          Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(as(o))
        for (let i = 0; i < Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION; i++) yield* create(org)
        const refused = yield* Effect.flip(create(org))
        assert.strictEqual(refused._tag, "InvalidRequest")
        assert.include(refused.message, `at most ${Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION} webhooks`)
        const listed = yield* Webhooks.Webhooks.use((w) => w.list({ limit: 100 })).pipe(as(org))
        assert.strictEqual(listed.data.length, Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION, "nothing written")
        yield* create(other) // another organization's cap is its own
        const first = listed.data[0]!
        yield* Webhooks.Webhooks.use((w) => w.delete(first.id)).pipe(as(org))
        yield* create(org) // room again after a delete
      }))

    it.effect("claims organizations in turn, each held to its delivery slots, whatever its backlog", () =>
      Effect.gen(function*() {
        yield* drain
        const noisy = yield* newOrganization("Noisy claims")
        const quiet = yield* newOrganization("Quiet claims")
        const noisyHooks = []
        for (let i = 0; i < 3; i++) {
          noisyHooks.push(
            yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(as(noisy))
          )
        }
        const quietHook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
          as(quiet)
        )
        // The noisy organization's backlog is older than the quiet one's two deliveries.
        for (let i = 0; i < 6; i++) {
          yield* transactional(recordEvent(noisy, "review.created", { i }))
          yield* TestClock.adjust("10 millis")
        }
        for (let i = 0; i < 2; i++) {
          yield* transactional(recordEvent(quiet, "review.created", { i }))
          yield* TestClock.adjust("10 millis")
        }
        yield* Webhooks.fanOutOnce(1000)
        const repo = yield* Webhooks.WebhookRepository
        const D = "00000000-0000-4000-8000-0000000000f1"
        const at = fromMillis(1_000)
        const claim = (limit: number) =>
          repo.claimDeliveries({ dispatcherId: D, at, limit, perWebhookLimit: 4, perOrganizationLimit: 3 })
        const first = yield* claim(4)
        const orgs = first.map((c) => c.delivery.organizationId)
        assert.deepStrictEqual(orgs.slice(0, 2).sort(), [noisy, quiet].sort(), "each organization's oldest first")
        assert.strictEqual(
          orgs.filter((o) => o === quiet).length,
          2,
          "the quiet organization is not behind the backlog"
        )
        assert.strictEqual(orgs.filter((o) => o === noisy).length, 2)
        const second = yield* claim(100)
        assert.deepStrictEqual(
          second.map((c) => c.delivery.organizationId),
          [noisy],
          "the noisy one is held to 3 in flight"
        )
        assert.deepStrictEqual(yield* claim(100), [], "every slot of the noisy organization is taken")
        assert.isTrue(
          [...first, ...second].every((c) =>
            c.delivery.webhookId !== quietHook.id || c.delivery.organizationId === quiet
          )
        )
        // A finished delivery frees one of its organization's slots.
        const done = first.find((c) => c.delivery.organizationId === noisy)!
        yield* repo.completeDeliveries(D, [{
          organizationId: noisy,
          id: done.delivery.id,
          outcome: { status: "failed", responseStatus: null, error: "timed out", durationMs: 1 }
        }])
        const third = yield* claim(100)
        assert.deepStrictEqual(third.map((c) => c.delivery.organizationId), [noisy])
        assert.include(noisyHooks.map((h) => h.id), third[0]!.delivery.webhookId)
      }))

    it.effect("a running dispatcher fans out events held at the queue cap as its own deliveries finish, with no signal", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Capped dispatcher")
        yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.updated"] })).pipe(as(org))
        while ((yield* Webhooks.fanOutOnce(1000)).events > 0) { /* fan out what creating it recorded */ }
        // More events than the cap: one unit queues past it, the rest must wait for deliveries to finish.
        const total = Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION + 100
        yield* transactional(Effect.gen(function*() {
          for (let i = 0; i < total; i++) yield* recordEvent(org, "review.updated", { id: `c${i}`, n: i })
        }))
        const gate = yield* Deferred.make<void>()
        const { layer: held, sent } = heldTransport(gate)
        // No store signal ever comes (a process whose listener hears nothing): only the deliveries this dispatcher
        // finishes may tell its fan-out to look again.
        const silent: Kernel.WorkSignalsService = { idle: () => Effect.never }
        const scope = yield* Scope.make()
        yield* Webhooks.startDispatcher({ pollIntervalMs: 10, fanOutBatchSize: total - 100 }).pipe(
          Effect.provide(held),
          Effect.provideService(Kernel.WorkSignals, silent),
          Scope.provide(scope)
        )
        yield* until(Effect.sync(() => sent.length > 0), "the first POSTs, held while the queue is past the cap")
        yield* Deferred.succeed(gate, undefined)
        yield* until(
          Effect.sync(() => sent.length === total),
          "every event's delivery, the ones held back by the cap included"
        )
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual(new Set(sent).size, total)
        yield* drain
      }))

    it.effect("the fan-out takes organizations in turn and waits at an organization's queue cap; nothing is lost", () =>
      Effect.gen(function*() {
        yield* drain
        const repo = yield* Webhooks.WebhookRepository
        const noisy = yield* newOrganization("Noisy fan-out")
        const quiet = yield* newOrganization("Quiet fan-out")
        const noisyHooks: Array<Kernel.WebhookId> = []
        for (let i = 0; i < Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION; i++) {
          const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.updated"] })).pipe(
            as(noisy)
          )
          noisyHooks.push(hook.id)
        }
        const quietHook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.updated"] }))
          .pipe(as(quiet))
        // Every webhook's own `webhook.created` is not subscribed: only the events below fan out.
        while ((yield* Webhooks.fanOutOnce(1000)).events > 0) { /* fan out what creating them recorded */ }

        // The noisy organization's backlog, one bulk change: its deliveries are 2.4 times the cap. Then the quiet one's
        // single event, recorded after all of them.
        const unit = 50
        const events = 120
        yield* transactional(Effect.gen(function*() {
          for (let i = 0; i < events; i++) yield* recordEvent(noisy, "review.updated", { id: `r${i}`, n: i })
        }))
        yield* transactional(recordEvent(quiet, "review.updated", { id: "q", n: 0 }))

        /** The organization's deliveries not yet sent, read through its webhooks' logs. */
        const pendingOf = (organizationId: Kernel.OrganizationId, hooks: ReadonlyArray<Kernel.WebhookId>) =>
          Effect.gen(function*() {
            let n = 0
            for (const hook of hooks) {
              let after: Webhooks.WebhookListPosition | undefined
              for (;;) {
                const page = yield* repo.listDeliveries(organizationId, hook, { after, limit: 500 })
                n += page.filter((d) => d.status === "pending").length
                if (page.length < 500) break
                after = { createdAt: page[page.length - 1]!.createdAt, id: page[page.length - 1]!.id }
              }
            }
            return n
          })
        const bound = Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION + unit * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION

        // The first unit takes each organization's oldest event in turn: the quiet one is not behind the backlog.
        const first = yield* Webhooks.fanOutOnce(unit)
        assert.strictEqual(first.events, unit)
        assert.strictEqual(yield* pendingOf(quiet, [quietHook.id]), 1, "the quiet event went out in the first unit")
        let units = 1
        while ((yield* Webhooks.fanOutOnce(unit)).events > 0) units++
        const queued = yield* pendingOf(noisy, noisyHooks)
        assert.isAtMost(queued, bound)
        assert.isAtLeast(queued, Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION, "the fan-out stopped at the cap")
        assert.isBelow(queued, events * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION, "the rest waits as events")
        assert.isBelow(units, Math.ceil((events + 1) / unit), "the fan-out waited before the backlog was through")

        // As the deliveries go out, the rest follows: every subscribed delivery, none refused.
        const D = "00000000-0000-4000-8000-0000000000f2"
        const at = fromMillis(1_000)
        const sent: Array<number> = []
        for (;;) {
          yield* Webhooks.fanOutOnce(unit)
          assert.isAtMost(yield* pendingOf(noisy, noisyHooks), bound)
          const claimed = yield* repo.claimDeliveries({ dispatcherId: D, at, limit: 5_000, perWebhookLimit: 5_000 })
          if (claimed.length === 0) break
          for (const c of claimed) {
            if (c.delivery.organizationId === noisy) sent.push((JSON.parse(c.delivery.body).data as { n: number }).n)
          }
          yield* repo.completeDeliveries(
            D,
            claimed.map((c) => ({
              organizationId: c.delivery.organizationId,
              id: c.delivery.id,
              outcome: { status: "delivered", responseStatus: 200, error: null, durationMs: 1 }
            }))
          )
        }
        assert.strictEqual(sent.length, events * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION, "every delivery went out")
        assert.strictEqual(new Set(sent).size, events)
        assert.deepStrictEqual(yield* Webhooks.fanOutOnce(unit), { events: 0, deliveries: 0 })
      }))

    it.effect("outcomes recorded in one batch: only this dispatcher's in-flight rows, each once", () =>
      Effect.gen(function*() {
        yield* drain
        const { hook, org } = yield* hookWithDeliveries("Batch", 4)
        const other = yield* newOrganization("Batch other")
        const repo = yield* Webhooks.WebhookRepository
        const D1 = "00000000-0000-4000-8000-0000000000b1"
        const D2 = "00000000-0000-4000-8000-0000000000b2"
        const at = fromMillis(2_000)
        const mine = yield* repo.claimDeliveries({ dispatcherId: D1, at, limit: 3, perWebhookLimit: 10 })
        const theirs = yield* repo.claimDeliveries({ dispatcherId: D2, at, limit: 1, perWebhookLimit: 10 })
        assert.strictEqual(mine.length, 3)
        assert.strictEqual(theirs.length, 1)
        const [a, b, c] = mine
        // Characters a store's encoding of a batch must carry through (quotes, backslashes, braces, commas, words).
        const tricky = { ...FAILED, error: `HTTP 500: {"a":"b\\"c\\\\d"}, NULL, "", \\N, ' é 𝄞` } as const
        yield* repo.completeDelivery(D1, org, c!.delivery.id, FAILED)
        const recorded = yield* repo.completeDeliveries(D1, [
          { organizationId: org, id: a!.delivery.id, outcome: DELIVERED },
          { organizationId: org, id: b!.delivery.id, outcome: tricky },
          { organizationId: org, id: c!.delivery.id, outcome: DELIVERED }, // already recorded
          { organizationId: org, id: theirs[0]!.delivery.id, outcome: FAILED }, // another dispatcher's
          { organizationId: other, id: a!.delivery.id, outcome: FAILED } // another organization's id
        ])
        assert.deepStrictEqual([...recorded].sort(), [a!.delivery.id, b!.delivery.id].sort())
        assert.deepStrictEqual(yield* repo.completeDeliveries(D1, []), [])
        const byId = yield* deliveriesById(org, hook.id)
        assert.deepInclude(byId.get(a!.delivery.id)!, {
          status: "delivered",
          responseStatus: 200,
          error: null,
          durationMs: 3
        })
        const failed = byId.get(b!.delivery.id)!
        assert.deepInclude(failed, { status: "failed", responseStatus: 500, durationMs: 4 })
        assert.strictEqual(failed.error, tricky.error)
        // PostgreSQL text holds no NUL; a store may replace it, never drop the outcome (here one recorded alone).
        assert.deepInclude(byId.get(c!.delivery.id)!, { status: "failed", responseStatus: 500 })
        assert.match(byId.get(c!.delivery.id)!.error ?? "", /^HTTP 500: nope . here$/)
        assert.deepInclude(byId.get(theirs[0]!.delivery.id)!, { status: "in_flight", claimedBy: D2 })
        yield* drain
      }))

    it.effect("a claim records the outcomes it carries, only its own; the next claim sees them as finished", () =>
      Effect.gen(function*() {
        yield* drain
        const { hook, org } = yield* hookWithDeliveries("Claim and record", 6)
        const repo = yield* Webhooks.WebhookRepository
        const D1 = "00000000-0000-4000-8000-0000000000c1"
        const D2 = "00000000-0000-4000-8000-0000000000c2"
        const at = fromMillis(2_000)
        const [theirs] = yield* repo.claimDeliveries({ dispatcherId: D2, at, limit: 1, perWebhookLimit: 3 })
        const [a, b] = yield* repo.claimDeliveries({ dispatcherId: D1, at, limit: 2, perWebhookLimit: 3 })
        assert.deepStrictEqual(
          yield* repo.claimDeliveries({ dispatcherId: D1, at, limit: 10, perWebhookLimit: 3 }),
          [],
          "at the limit"
        )
        const same = yield* repo.claimDeliveries({
          dispatcherId: D1,
          at,
          limit: 10,
          perWebhookLimit: 3,
          completed: [
            { organizationId: org, id: a!.delivery.id, outcome: DELIVERED },
            { organizationId: org, id: b!.delivery.id, outcome: FAILED },
            { organizationId: org, id: theirs!.delivery.id, outcome: FAILED } // another dispatcher's: left alone
          ]
        })
        assert.isAtMost(same.length, 2, "never more than the slots the recorded deliveries free")
        const next = [...same, ...yield* repo.claimDeliveries({ dispatcherId: D1, at, limit: 10, perWebhookLimit: 3 })]
        assert.strictEqual(next.length, 2, "the two recorded deliveries freed two of the webhook's three slots")
        const byId = yield* deliveriesById(org, hook.id)
        assert.deepInclude(byId.get(a!.delivery.id)!, { status: "delivered", responseStatus: 200, durationMs: 3 })
        assert.deepInclude(byId.get(b!.delivery.id)!, { status: "failed", responseStatus: 500, durationMs: 4 })
        assert.match(byId.get(b!.delivery.id)!.error ?? "", /^HTTP 500: nope . here$/)
        assert.deepInclude(byId.get(theirs!.delivery.id)!, { status: "in_flight", claimedBy: D2 })
        for (const c of next) assert.deepInclude(byId.get(c.delivery.id)!, { status: "in_flight", claimedBy: D1 })
        yield* drain
      }))

    it.effect("released deliveries are pending again, as never claimed, and go out in their order; only the claimer's", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Release")
        const hook = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: HOOK, events: ["review.created", "review.updated"] })
        )
          .pipe(as(org))
        // Two events about one record (ordered) and one about another.
        yield* transactional(recordEvent(org, "review.created", { id: "r1", n: 1 }))
        yield* transactional(recordEvent(org, "review.updated", { id: "r1", n: 2 }))
        yield* transactional(recordEvent(org, "review.created", { id: "r2", n: 3 }))
        yield* Webhooks.fanOutOnce(1000)
        const repo = yield* Webhooks.WebhookRepository
        const D1 = "00000000-0000-4000-8000-0000000000e1"
        const D2 = "00000000-0000-4000-8000-0000000000e2"
        const claimed = yield* repo.claimDeliveries({
          dispatcherId: D1,
          at: fromMillis(3_000),
          limit: 10,
          perWebhookLimit: 10
        })
        assert.deepStrictEqual(
          claimed.map((c) => JSON.parse(c.delivery.body).data.n).sort(),
          [1, 3],
          "r1's second waits"
        )
        const keys = claimed.map((c) => ({ organizationId: org, id: c.delivery.id }))
        assert.strictEqual(yield* repo.releaseDeliveries(D2, keys), 0, "another dispatcher's claims stay")
        assert.strictEqual(
          yield* repo.releaseDeliveries(D1, [...keys, { organizationId: org, id: claimed[0]!.delivery.id }]),
          2
        )
        assert.strictEqual(yield* repo.releaseDeliveries(D1, keys), 0, "released once")
        assert.strictEqual(yield* repo.releaseDeliveries(D1, []), 0)
        for (const d of yield* repo.listDeliveries(org, hook.id, { after: undefined, limit: 10 })) {
          assert.deepInclude(d, { status: "pending", claimedBy: null, attemptedAt: null })
        }
        // Claimed again (by anyone) as if never claimed: r1's first before its second.
        const again = yield* repo.claimDeliveries({
          dispatcherId: D2,
          at: fromMillis(4_000),
          limit: 10,
          perWebhookLimit: 10
        })
        assert.deepStrictEqual(again.map((c) => JSON.parse(c.delivery.body).data.n).sort(), [1, 3])
        assert.deepStrictEqual(again.map((c) => c.delivery.id).sort(), claimed.map((c) => c.delivery.id).sort())
        // A finished delivery is never made pending again.
        const first = again[0]!
        yield* repo.completeDelivery(D2, org, first.delivery.id, {
          status: "delivered",
          responseStatus: 200,
          error: null,
          durationMs: 1
        })
        assert.strictEqual(yield* repo.releaseDeliveries(D2, [{ organizationId: org, id: first.delivery.id }]), 0)
        yield* drain
      }))

    it.effect("a stopping dispatcher finishes its POSTs and hands back what it claimed ahead; nothing is sent twice", () =>
      Effect.gen(function*() {
        yield* drain
        const total = 40
        const { hook, org } = yield* hookWithDeliveries("Ahead", total, (i) => ({ id: `ahead-${i}` }))
        const repo = yield* Webhooks.WebhookRepository
        const gate = yield* Deferred.make<void>()
        // The first four POSTs are answered at once, later ones only when the gate opens: meanwhile the dispatcher,
        // having seen POSTs finish, claims ahead of its two slots.
        const { layer: held, sent } = heldTransport(gate, 4)
        const count = (status: string) =>
          Effect.map(
            repo.listDeliveries(org, hook.id, { after: undefined, limit: 100 }),
            (ds) => ds.filter((d) => d.status === status).length
          )
        const scope = yield* Scope.make()
        yield* Webhooks.startDispatcher({ concurrency: 2, perWebhookConcurrency: 100, pollIntervalMs: 10 }).pipe(
          Effect.provide(held),
          Scope.provide(scope)
        )
        yield* until(Effect.map(count("in_flight"), (n) => sent.length >= 6 && n > 2), "claims ahead of two held POSTs")
        // Stop while two POSTs are held, then let them finish: they are recorded, the rest is handed back.
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
        yield* pause(50)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(closing)
        assert.strictEqual(yield* count("in_flight"), 0, "nothing is left in flight")
        assert.strictEqual(yield* count("delivered"), sent.length, "every POST is recorded")
        assert.strictEqual(yield* count("pending"), total - sent.length, "unsent claims are pending again")

        // Another dispatcher sends the rest; no delivery is sent twice.
        const quick = transportOf(() => OK)
        const rest = yield* Scope.make()
        yield* Webhooks.startDispatcher({ concurrency: 2, perWebhookConcurrency: 100, pollIntervalMs: 10 }).pipe(
          Effect.provide(quick.layer),
          Scope.provide(rest)
        )
        yield* until(Effect.map(count("delivered"), (n) => n === total), "the rest to be delivered")
        yield* Scope.close(rest, Exit.void)
        const keys = [...sent, ...quick.sent.map((r) => r.headers["webhook-id"]!)]
        assert.strictEqual(keys.length, total)
        assert.strictEqual(new Set(keys).size, total)
        yield* drain
      }))

    it.effect("in-flight deliveries of a dispatcher whose lease lapsed fail as interrupted; live ones are kept", () =>
      Effect.gen(function*() {
        yield* drain
        const { hook, org } = yield* hookWithDeliveries("Crash", 3, (i) => ({ n: i + 1 }))
        const repo = yield* Webhooks.WebhookRepository
        const dead = "00000000-0000-4000-8000-00000000dead"
        const live = "00000000-0000-4000-8000-00000000a11e"
        yield* repo.heartbeat(dead, fromMillis(1_000))
        yield* repo.heartbeat(live, fromMillis(1_000))
        const [x] = yield* repo.claimDeliveries({
          dispatcherId: dead,
          at: fromMillis(1_000),
          limit: 1,
          perWebhookLimit: 10
        })
        const [y] = yield* repo.claimDeliveries({
          dispatcherId: live,
          at: fromMillis(1_000),
          limit: 1,
          perWebhookLimit: 10
        })
        yield* repo.heartbeat(live, fromMillis(40_000))
        assert.strictEqual(yield* repo.failInterrupted(fromMillis(10_000), Webhooks.INTERRUPTED), 1)
        const byId = yield* deliveriesById(org, hook.id)
        assert.deepInclude(byId.get(x!.delivery.id)!, { status: "failed", error: "interrupted", claimedBy: dead })
        assert.strictEqual(byId.get(y!.delivery.id)!.status, "in_flight")
        assert.isFalse(
          yield* repo.completeDelivery(dead, org, x!.delivery.id, {
            status: "delivered",
            responseStatus: 200,
            error: null,
            durationMs: 1
          }),
          "a late outcome of the dead dispatcher does not overwrite the failure"
        )
        // A dispatcher that stopped cleanly (lease removed) is dead too; the pending one was never attempted.
        yield* repo.removeDispatcher(live)
        assert.strictEqual(yield* repo.failInterrupted(fromMillis(0), Webhooks.INTERRUPTED), 1)
        const pending = (yield* repo.listDeliveries(org, hook.id, { after: undefined, limit: 10 })).filter((d) =>
          d.status === "pending"
        )
        assert.strictEqual(pending.length, 1)
        // The use-case computes staleness from the clock.
        assert.strictEqual(yield* Webhooks.failInterruptedDeliveries(30_000), 0)
        yield* drain
      }))

    it.effect("sends the stored body, signed, and records the outcome; the destination is checked again", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Send")
        const signed = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: HOOK, events: ["review.created"], hmacSecret: "k3y-0123456789abcdef" })
        ).pipe(as(org))
        const plain = yield* Webhooks.Webhooks.use((w) =>
          w.create({ url: "https://other.example.com/x", events: ["review.created"] })
        ).pipe(as(org))
        yield* transactional(recordEvent(org, "review.created", { id: "r9" }))
        yield* Webhooks.fanOutOnce(1000)
        const repo = yield* Webhooks.WebhookRepository
        const D = "00000000-0000-4000-8000-0000000000d3"
        const claimed = yield* repo.claimDeliveries({
          dispatcherId: D,
          at: fromMillis(5),
          limit: 10,
          perWebhookLimit: 10
        })
        assert.strictEqual(claimed.length, 2)
        const transport = transportOf((r) =>
          r.url.hostname === "hooks.example.com"
            ? { _tag: "Response", status: 200, bodyExcerpt: "" }
            : { _tag: "Response", status: 503, bodyExcerpt: "x".repeat(1024) }
        )
        for (const c of claimed) yield* Webhooks.sendClaimed(D, c).pipe(Effect.provide(transport.layer))
        assert.strictEqual(transport.sent.length, 2)
        const toSigned = transport.sent.find((s) => s.url.hostname === "hooks.example.com")!
        assert.strictEqual(toSigned.address, "93.184.216.34", "connects to the address it checked")
        assert.strictEqual(toSigned.headers["content-type"], "application/json")
        assert.isTrue(
          Webhooks.verifyWebhookSignature(
            toSigned.body,
            toSigned.headers["x-webhook-signature"],
            "k3y-0123456789abcdef"
          )
        )
        const toPlain = transport.sent.find((s) => s.url.hostname === "other.example.com")!
        assert.isUndefined(toPlain.headers["x-webhook-signature"])
        const [sd] = yield* repo.listDeliveries(org, signed.id, { after: undefined, limit: 1 })
        assert.deepInclude(sd!, { status: "delivered", responseStatus: 200, error: null })
        assert.strictEqual(sd!.body, toSigned.body)
        const [pd] = yield* repo.listDeliveries(org, plain.id, { after: undefined, limit: 1 })
        assert.deepInclude(pd!, { status: "failed", responseStatus: 503, error: `HTTP 503: ${"x".repeat(1024)}` })

        // The host now resolves to a private address: refused without a request.
        const current = Option.getOrThrow(yield* repo.findById(org, signed.id))
        yield* repo.update({ ...current, url: "https://internal.example.com/x" })
        yield* transactional(recordEvent(org, "review.created", { id: "r10" }))
        yield* Webhooks.fanOutOnce(1000)
        const again = yield* repo.claimDeliveries({
          dispatcherId: D,
          at: fromMillis(6),
          limit: 10,
          perWebhookLimit: 10
        })
        const refused = again.find((c) => c.delivery.webhookId === signed.id)!
        const quiet = transportOf(() => ({ _tag: "Response", status: 200, bodyExcerpt: "" }))
        const outcome = yield* Webhooks.sendClaimed(D, refused).pipe(Effect.provide(quiet.layer))
        assert.strictEqual(quiet.sent.length, 0)
        assert.strictEqual(outcome.status, "failed")
        assert.match(outcome.error ?? "", /private network address/)
        yield* drain
      }))

    it.effect("deleting a webhook removes its deliveries; its pending ones are never claimed", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Delete")
        const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.created"] })).pipe(
          as(org)
        )
        yield* transactional(recordEvent(org, "review.created", {}))
        yield* Webhooks.fanOutOnce(1000)
        yield* Webhooks.Webhooks.use((w) => w.delete(hook.id)).pipe(as(org))
        const repo = yield* Webhooks.WebhookRepository
        const claimed = yield* repo.claimDeliveries({
          dispatcherId: DRAIN,
          at: fromMillis(0),
          limit: 100,
          perWebhookLimit: 100
        })
        assert.notInclude(claimed.map((c) => c.delivery.webhookId), hook.id)
        assert.deepStrictEqual(yield* repo.listDeliveries(org, hook.id, { after: undefined, limit: 10 }), [])
        yield* drain
      }))

    it.effect("the delivery log lists newest first with cursors", () =>
      Effect.gen(function*() {
        yield* drain
        const org = yield* newOrganization("Log")
        const hook = yield* Webhooks.Webhooks.use((w) => w.create({ url: HOOK, events: ["review.updated"] })).pipe(
          as(org)
        )
        for (let i = 0; i < 3; i++) {
          yield* transactional(recordEvent(org, "review.updated", { i }))
          yield* Webhooks.fanOutOnce(1000)
          yield* TestClock.adjust("1 second")
        }
        const first = yield* Webhooks.Webhooks.use((w) => w.listDeliveries(hook.id, { limit: 2 })).pipe(as(org))
        const second = yield* Webhooks.Webhooks.use((w) =>
          w.listDeliveries(hook.id, { limit: 2, cursor: first.nextCursor! })
        )
          .pipe(as(org))
        assert.isNull(second.nextCursor)
        assert.deepStrictEqual([...first.data, ...second.data].map((d) => (d.payload.data as { i: number }).i), [
          2,
          1,
          0
        ])
        assert.deepStrictEqual(Object.keys(first.data[0]!).sort(), [
          "attemptedAt",
          "createdAt",
          "durationMs",
          "error",
          "event",
          "eventId",
          "id",
          "idempotencyKey",
          "payload",
          "redeliveryOf",
          "responseStatus",
          "status",
          "webhookId"
        ])
        yield* drain
      }))
  })

/** The webhook suites, for `conformanceSuites`. */
export const webhookConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 60_000 })("webhooks", (it) => {
    registration(it)
    delivery(it)
    hostEvents(it)
    rotation(it)
    redelivery(it)
    bodies(it)
    orphanDelivery(it)
    feed(it)
    ordering(it)
  })
