/**
 * Wake-ups on a PostgreSQL server (migration 93, `PgWorkSignals`): a worker idling with a long poll is woken when
 * work commits in another connection — not before the commit, not by a rollback — and a listener whose connection
 * is killed, or stalls without closing, goes back to polling, then listens again.
 */
import { DEFAULT_SCHEMA, PgStoreSchema, storeSchema } from "../src/kernel/PgSchema.ts"
import { assert, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Kernel, Organizations, Webhooks } from "@feedback/core"
import { recordEvent, transactional } from "@feedback/testing"
import { Context, Effect, Exit, Fiber, Layer, Redacted, Ref, Schedule, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { PgStoreServices } from "../src/PgStore.ts"
import { PgDatabase } from "../src/kernel/PgDatabase.ts"
import { PgWorkSignals } from "../src/kernel/PgWorkSignals.ts"
import { stallingProxy } from "./StallingProxy.ts"
import { describeWithServer, freshServerDatabase } from "./TestDatabase.ts"

const LONG_POLL = 60_000

describeWithServer("work signals over LISTEN/NOTIFY", (serverUrl) => {
  // Two pools on one fresh database: the listener's (the worker's process) and the writer's (another process).
  let databaseUrl = ""
  const pool = (name: string, url = databaseUrl) =>
    PgClient.layer({ url: Redacted.make(url), maxConnections: 4, applicationName: name })
  const writer = Layer.unwrap(Effect.map(freshServerDatabase(serverUrl), (url) => {
    databaseUrl = url
    return Organizations.Organizations.layer.pipe(
      Layer.provideMerge(PgStoreServices()),
      Layer.provideMerge(Kernel.IdGenerator.uuidV7),
      // The store's own client (its column naming), so the writer can also read through the repositories.
      Layer.provideMerge(PgDatabase({ _tag: "Server", url, maxConnections: 4 }))
    )
  })).pipe(Layer.orDie)

  // The listener's process names the default schema, as the writer's store does.
  const listenerSchema = Layer.succeed(PgStoreSchema, storeSchema(DEFAULT_SCHEMA))

  layer(writer, { timeout: 60_000, excludeTestServices: true })("a worker in another process", (it) => {
    // The worker's process: its own pool, listening, as `PgStoreLayer` builds it for a server.
    const withListener = <A, E, R>(
      channel: Kernel.WorkChannel,
      body: (signals: Kernel.WorkSignalsService) => Effect.Effect<A, E, R>
    ) =>
      Effect.gen(function*() {
        const signals = yield* Kernel.WorkSignals
        // Settle: the first idle returns at once (work may have committed before the listener started).
        yield* signals.idle(channel, LONG_POLL).pipe(Effect.timeout("2 seconds"))
        return yield* body(signals)
      }).pipe(
        Effect.provide(
          PgWorkSignals({ fallbackMs: LONG_POLL }).pipe(
            Layer.provide(Layer.merge(pool("listener"), listenerSchema)),
            Layer.orDie
          )
        )
      )

    /**
     * Returns once the listener has heard every notification committed before: PostgreSQL delivers them in commit
     * order, so a mark sent now on a channel nobody here writes (`jobs`) is heard after all of them. What did not
     * wake a waiter by then never will, without waiting a fixed time.
     */
    const heardSoFar = (signals: Kernel.WorkSignalsService) =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const mark = yield* signals.subscribe!("jobs") // PgWorkSignals has subscriptions
        yield* mark(LONG_POLL) // a subscription starts open
        yield* sql`SELECT pg_notify(${storeSchema(DEFAULT_SCHEMA).channel}, 'jobs')`.pipe(Effect.orDie)
        assert.isTrue(yield* mark(LONG_POLL).pipe(Effect.timeout("30 seconds")), "the mark was not heard")
        // A waiter woken by an earlier notification resumed before the mark's: let it finish its turn.
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      }))

    it.effect("is woken by committed events, not by uncommitted or rolled-back ones", () =>
      withListener("events", (signals) =>
        Effect.gen(function*() {
          const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Signals" }))
          const waiting = yield* Effect.forkChild(signals.idle("events", LONG_POLL))
          // A rolled-back event wakes nobody.
          yield* transactional(Effect.andThen(recordEvent(org.id, "review.created", { id: "x" }), Effect.fail("undo")))
            .pipe(Effect.ignore)
          yield* heardSoFar(signals)
          assert.isTrue(waiting.pollUnsafe() === undefined, "woken by a rollback")
          // An event committed by the other pool wakes it, well before the 60 s poll would (a generous bound: a loaded
          // machine may be slow, never that slow).
          yield* transactional(recordEvent(org.id, "review.created", { id: "y" }))
          yield* Fiber.join(waiting).pipe(Effect.timeout("30 seconds"))
          // Other channels stay asleep (once settled: the listener's start wakes every channel once).
          yield* signals.idle("email", LONG_POLL).pipe(Effect.timeout("2 seconds"))
          const email = yield* Effect.forkChild(signals.idle("email", LONG_POLL))
          yield* heardSoFar(signals)
          assert.isTrue(email.pollUnsafe() === undefined, "the email channel woke for an event")
          yield* Fiber.interrupt(email)
        })))

    it.effect("deliveries: new pending ones and recorded outcomes wake dispatchers, claims do not", () =>
      withListener("deliveries", (signals) =>
        Effect.gen(function*() {
          const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Delivery signals" }))
          const repo = yield* Webhooks.WebhookRepository
          const at = Kernel.Timestamp.fromMillis(Date.now() - 1_000)
          const hook = "00000000-0000-4000-8000-00000000a001" as Kernel.WebhookId
          yield* repo.insert({
            id: hook,
            organizationId: org.id,
            url: "https://hooks.example.com/x",
            events: ["review.created"],
            hmacSecret: null,
            previousHmacSecret: null,
            previousSecretExpiresAt: null,
            createdAt: at,
            updatedAt: at
          })
          // A subscription of its own per write: it hears only what commits after every earlier notification.
          const wokenBy = <A, R>(write: Effect.Effect<A, never, R>) =>
            Effect.scoped(Effect.gen(function*() {
              yield* heardSoFar(signals)
              const wait = yield* signals.subscribe!("deliveries")
              yield* wait(LONG_POLL) // a subscription starts open
              const waiting = yield* Effect.forkScoped(wait(LONG_POLL))
              const result = yield* write
              yield* heardSoFar(signals)
              return { woken: waiting.pollUnsafe() !== undefined, result }
            }))
          yield* transactional(recordEvent(org.id, "review.created", { id: "r1" }))
          assert.isTrue((yield* wokenBy(Webhooks.fanOutOnce(100))).woken, "a new pending delivery wakes")
          const D = "00000000-0000-4000-8000-00000000a0d1"
          const claim = yield* wokenBy(repo.claimDeliveries({ dispatcherId: D, at, limit: 10, perWebhookLimit: 10 }))
          assert.strictEqual(claim.result.length, 1)
          assert.isFalse(claim.woken, "a claim (in flight) wakes nobody")
          const c = claim.result[0]!.delivery
          const record = yield* wokenBy(repo.completeDeliveries(D, [
            {
              organizationId: org.id,
              id: c.id,
              outcome: { status: "delivered", responseStatus: 200, error: null, durationMs: 1 }
            }
          ]))
          assert.isTrue(record.woken, "a recorded outcome wakes (the webhook has a free slot again)")
        })))

    it.effect("a signal that arrives while the worker is busy is kept for its next idle", () =>
      withListener("events", (signals) =>
        Effect.gen(function*() {
          const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Busy" }))
          yield* transactional(recordEvent(org.id, "review.created", { id: "z" }))
          yield* heardSoFar(signals) // delivered while nobody waits
          yield* signals.idle("events", LONG_POLL).pipe(Effect.timeout("2 seconds"))
        })))

    it.effect("a killed listening connection falls back to polling, then listens again", () =>
      withListener("events", (signals) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name LIKE 'listener%' AND query ILIKE 'LISTEN%'`
          // The waiters look once, and while it reconnects, idle is the caller's poll.
          yield* signals.idle("events", 50).pipe(Effect.timeout("2 seconds"))
          yield* signals.idle("events", 50).pipe(Effect.timeout("2 seconds"))
          // The listener reconnects (it retries every second): kept keys are trusted again once it listens.
          const credentials = yield* Organizations.CredentialChanges
          yield* Effect.suspend(() =>
            credentials.version() === undefined ? Effect.fail("not listening yet" as const) : Effect.void
          ).pipe(Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 600 }))
          const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Again" }))
          yield* signals.idle("events", LONG_POLL).pipe(Effect.timeout("2 seconds")) // the reconnect opens every latch
          const waiting = yield* Effect.forkChild(signals.idle("events", LONG_POLL))
          yield* transactional(recordEvent(org.id, "review.created", { id: "w" }))
          yield* Fiber.join(waiting).pipe(Effect.timeout("5 seconds"))
        })))

    it.effect("a listening connection that stalls is replaced, and the worker keeps working meanwhile", () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // The worker's process reaches the database through a proxy that can stall its listening connection.
        const proxy = yield* stallingProxy(databaseUrl)
        const signals = yield* Layer.build(
          PgWorkSignals({ fallbackMs: LONG_POLL, heartbeatMs: 300, heartbeatDeadlineMs: 1_000 }).pipe(
            Layer.provide(pool("stalling", proxy.url)),
            Layer.orDie
          )
        ).pipe(Effect.map((context) => Context.get(context, Kernel.WorkSignals)))
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Stalled" }))
        const committed = Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM domain_events WHERE organization_id = ${org.id}`,
          (rows) => rows[0]!.n
        ).pipe(Effect.orDie)
        // A worker as the real ones are: idle with a short poll (the fallback when listening), then look for work.
        const seen = yield* Ref.make(0)
        yield* Effect.forkScoped(Effect.forever(
          Effect.andThen(signals.idle("events", 200), Effect.flatMap(committed, (n) => Ref.set(seen, n)))
        ))
        const sees = (n: number) =>
          Ref.get(seen).pipe(
            Effect.flatMap((m) => (m >= n ? Effect.void : Effect.fail("not yet" as const))),
            Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 600 })
          )
        const listeners = Effect.map(
          sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE application_name = 'stalling-listen'`,
          (rows) => rows.map((r) => r.pid)
        ).pipe(Effect.orDie)
        yield* transactional(recordEvent(org.id, "review.created", { id: "before" }))
        yield* sees(1)
        const [stalledPid] = yield* listeners
        assert.strictEqual(proxy.stall("stalling-listen"), 1)
        // The notification for this event is stuck in the stalled connection; without a heartbeat the worker would
        // wait out its 60 s fallback.
        yield* transactional(recordEvent(org.id, "review.created", { id: "stalled" }))
        yield* sees(2)
        // A replacement listens (the stalled one may linger on the server, as it would behind a dead network path).
        yield* listeners.pipe(
          Effect.flatMap((pids) =>
            pids.some((pid) => pid !== stalledPid) ? Effect.void : Effect.fail("not replaced" as const)
          ),
          Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 300 })
        )
        // And it is heard: a worker idling on the 60 s fallback is woken by the next commit.
        yield* signals.idle("events", LONG_POLL).pipe(Effect.timeout("5 seconds"), Effect.ignore)
        const waiting = yield* Effect.forkChild(signals.idle("events", LONG_POLL))
        yield* transactional(recordEvent(org.id, "review.created", { id: "after" }))
        yield* Fiber.join(waiting).pipe(Effect.timeout("30 seconds"))
        yield* sees(3)
      })))

    it.effect("a listener whose connection stalls still stops: its UNLISTEN is not waited for past the deadline", () =>
      Effect.scoped(Effect.gen(function*() {
        const proxy = yield* stallingProxy(databaseUrl)
        const scope = yield* Scope.make()
        // No heartbeat during the test: the stall is only met by the shutdown.
        const signals = yield* Layer.buildWithScope(
          PgWorkSignals({ fallbackMs: LONG_POLL, heartbeatMs: LONG_POLL, heartbeatDeadlineMs: 1_000 }).pipe(
            Layer.provide(pool("frozen", proxy.url)),
            Layer.orDie
          ),
          scope
        ).pipe(Effect.map((context) => Context.get(context, Kernel.WorkSignals)))
        yield* signals.idle("events", LONG_POLL).pipe(Effect.timeout("5 seconds"))
        assert.strictEqual(proxy.stall("frozen-listen"), 1)
        // Closed in a fiber of its own: a close stuck in an uninterruptible finalizer would otherwise hang the test.
        const closing = yield* Effect.forkDetach(Scope.close(scope, Exit.void))
        const closed = yield* Fiber.await(closing).pipe(Effect.timeoutOption("30 seconds"))
        assert.isTrue(closed._tag === "Some", "the listener did not stop with its connection stalled")
      })))
  })
})
