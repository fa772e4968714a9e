/**
 * Authenticated keys kept across requests on a PostgreSQL server (migration 101, `PgWorkSignals`, core
 * `AuthenticationCache`): a process keeps a key it authenticated, and drops it when any process revokes a key or
 * changes an organization — its own at once, another's when the notification arrives — and keeps nothing while its
 * listening connection is down or stalled.
 */
import { assert, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { PgStoreLayer, PgStoreServices } from "../src/PgStore.ts"
import { PgWorkSignals } from "../src/kernel/PgWorkSignals.ts"
import { PgHostDatabase } from "../src/kernel/PgDatabase.ts"
import { stallingProxy } from "./StallingProxy.ts"
import { describeWithServer, freshEmbeddedTarget, freshServerDatabase } from "./TestDatabase.ts"

describeWithServer("authenticated keys kept while changes are heard", (serverUrl) => {
  /** One server process: its own pool, store, listener and `Organizations` (so its own cache). */
  const serverProcess = (
    url: string,
    name: string,
    heartbeat?: { heartbeatMs: number; heartbeatDeadlineMs: number }
  ) => {
    const pool = PgHostDatabase({ maxConnections: 4 }).pipe(
      Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1, applicationName: name }))
    )
    const store = Layer.mergeAll(
      Layer.fresh(PgStoreServices()),
      PgWorkSignals({ fallbackMs: 60_000, ...heartbeat }),
      Kernel.IdGenerator.uuidV7
    )
    return Layer.fresh(Organizations.Organizations.layer).pipe(
      Layer.provideMerge(store),
      Layer.provideMerge(pool),
      Layer.orDie
    )
  }

  /** Runs `body` with two processes on one fresh database. */
  const twoProcesses = <A, E>(
    body: (a: Layer.Layer<any>, b: Layer.Layer<any>) => Effect.Effect<A, E, any>
  ) =>
    Effect.flatMap(freshServerDatabase(serverUrl), (url) =>
      Effect.scoped(Effect.gen(function*() {
        const a = yield* Layer.build(serverProcess(url, "process-a"))
        const b = yield* Layer.build(serverProcess(url, "process-b"))
        return yield* body(Layer.succeedContext(a), Layer.succeedContext(b))
      })))

  const authenticates = (key: string) =>
    Organizations.Organizations.use((o) => o.authenticateSecretKey(key)).pipe(
      Effect.as(true),
      Effect.catchTag("Unauthorized", () => Effect.succeed(false))
    )

  /** Runs SQL in `on` with the credential triggers off: a change nobody announces, to see what a process kept. */
  const unannounced = (statement: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe("ALTER TABLE secret_keys DISABLE TRIGGER secret_keys_credentials")
        yield* sql.unsafe(statement)
        yield* sql.unsafe("ALTER TABLE secret_keys ENABLE TRIGGER secret_keys_credentials")
      }))
    })

  const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, times = 100) =>
    check.pipe(
      Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail("not yet" as const))),
      Effect.retry({ schedule: Schedule.spaced("20 millis"), times })
    )

  const setUp = Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Cached" }))
    const key = yield* Organizations.Organizations.use((o) =>
      o.issueSecretKey(org.id, { permissions: ["settings:read"] })
    )
    return { org: org.id as Kernel.OrganizationId, key: key.secretKey, keyId: key.id }
  })

  it.live(
    "a key is kept; a revocation by another process drops it when its notification arrives",
    () =>
      twoProcesses((a, b) =>
        Effect.gen(function*() {
          const first = yield* setUp.pipe(Effect.provide(b))
          const second = yield* setUp.pipe(Effect.provide(b))
          assert.isTrue(yield* authenticates(first.key).pipe(Effect.provide(a)))
          assert.isTrue(yield* authenticates(second.key).pipe(Effect.provide(a)))
          // Revoked behind every process's back: process A still answers from what it kept (the cache is in use).
          yield* unannounced(`UPDATE secret_keys SET revoked_at = now() WHERE id = '${first.keyId}'`).pipe(
            Effect.provide(b)
          )
          assert.isTrue(yield* authenticates(first.key).pipe(Effect.provide(a)))
          // Process B revokes the other key: B refuses it as soon as the revocation returns, A once notified.
          yield* Organizations.Organizations.use((o) => o.revokeSecretKey(second.org, second.keyId as never)).pipe(
            Effect.provide(b)
          )
          assert.isFalse(yield* authenticates(second.key).pipe(Effect.provide(b)))
          yield* eventually(Effect.map(authenticates(second.key), (ok) => !ok)).pipe(Effect.provide(a))
          // The notification dropped everything A kept, so the unannounced revocation is seen too.
          assert.isFalse(yield* authenticates(first.key).pipe(Effect.provide(a)))
        })
      ),
    { timeout: 60_000 }
  )

  it.live(
    "a plan change by another process reaches the kept organization",
    () =>
      twoProcesses((a, b) =>
        Effect.gen(function*() {
          const { key, org } = yield* setUp.pipe(Effect.provide(b))
          const plan = Organizations.Organizations.use((o) => o.authenticateSecretKey(key)).pipe(
            Effect.map((x) => x.organization.plan.apiRequestsPerMinute)
          )
          assert.strictEqual(yield* plan.pipe(Effect.provide(a)), 600)
          yield* Organizations.Organizations.use((o) => o.updatePlan(org, { apiRequestsPerMinute: 42 })).pipe(
            Effect.provide(b)
          )
          yield* eventually(Effect.map(plan, (n) => n === 42)).pipe(Effect.provide(a))
        })
      ),
    { timeout: 60_000 }
  )

  it.live(
    "nothing is kept while the listening connection is down",
    () =>
      twoProcesses((a, b) =>
        Effect.gen(function*() {
          const { key, keyId } = yield* setUp.pipe(Effect.provide(b))
          assert.isTrue(yield* authenticates(key).pipe(Effect.provide(a)))
          const sql = yield* SqlClient.SqlClient.pipe(Effect.provide(b))
          yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name LIKE 'process-a/%-listen'`
          yield* eventually(Effect.map(Organizations.CredentialChanges, (c) => c.version() === undefined)).pipe(
            Effect.provide(a)
          )
          yield* unannounced(`UPDATE secret_keys SET revoked_at = now() WHERE id = '${keyId}'`).pipe(Effect.provide(b))
          assert.isFalse(yield* authenticates(key).pipe(Effect.provide(a)))
        })
      ),
    { timeout: 60_000 }
  )
  it.live(
    "a listening connection that stalls misses its heartbeat: kept keys are dropped, and a replacement listens",
    () =>
      Effect.flatMap(freshServerDatabase(serverUrl), (url) =>
        Effect.scoped(Effect.gen(function*() {
          // Process A reaches the database through a proxy that stalls its listening connection without closing it.
          const proxy = yield* stallingProxy(url)
          const a = Layer.succeedContext(
            yield* Layer.build(serverProcess(proxy.url, "process-a", { heartbeatMs: 300, heartbeatDeadlineMs: 1_000 }))
          )
          const b = Layer.succeedContext(yield* Layer.build(serverProcess(url, "process-b")))
          const { key, keyId, org } = yield* setUp.pipe(Effect.provide(b))
          assert.isTrue(yield* authenticates(key).pipe(Effect.provide(a)))
          // The store's pool names itself `process-a/<id>`; its listener adds `-listen`.
          assert.strictEqual(proxy.stall(/process-a\/[0-9a-f]+-listen/), 1)
          // B revokes; its notification is stuck in A's stalled connection. A's heartbeat misses its deadline and A
          // drops what it kept, well before the 60 s a kept key may otherwise live (a generous bound: 30 s).
          yield* Organizations.Organizations.use((o) => o.revokeSecretKey(org, keyId as never)).pipe(Effect.provide(b))
          yield* eventually(Effect.map(authenticates(key), (ok) => !ok), 1_500).pipe(Effect.provide(a))
          // A replacement connection listens again: keys are kept again, and B's next change reaches A.
          yield* eventually(Effect.map(Organizations.CredentialChanges, (c) => c.version() !== undefined), 1_500).pipe(
            Effect.provide(a)
          )
          const other = yield* setUp.pipe(Effect.provide(b))
          const plan = Organizations.Organizations.use((o) => o.authenticateSecretKey(other.key)).pipe(
            Effect.map((x) => x.organization.plan.apiRequestsPerMinute)
          )
          assert.strictEqual(yield* plan.pipe(Effect.provide(a)), 600)
          yield* Organizations.Organizations.use((o) => o.updatePlan(other.org, { apiRequestsPerMinute: 42 })).pipe(
            Effect.provide(b)
          )
          yield* eventually(Effect.map(plan, (n) => n === 42), 1_500).pipe(Effect.provide(a))
        }))),
    { timeout: 90_000 }
  )
})

// Embedded PGlite has no other process: every change to a key or an organization is this process's own, announced by
// `Organizations`, so keys are kept there too (docs/DECISIONS.md §31).
it.live(
  "embedded PGlite keeps authenticated keys until this process changes them",
  () =>
    Effect.scoped(Effect.gen(function*() {
      const target = yield* freshEmbeddedTarget
      const context = yield* Layer.build(
        Organizations.Organizations.layer.pipe(
          Layer.provideMerge(Layer.merge(PgStoreLayer(target), Kernel.IdGenerator.uuidV7)),
          Layer.orDie
        )
      )
      yield* Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const organization = yield* organizations.createOrganization({ name: "Embedded" })
        const issued = yield* organizations.issueSecretKey(organization.id, { permissions: ["settings:read"] })
        const kept = () => organizations.keptAuthentication(issued.secretKey, Date.now())
        const authenticated = yield* organizations.authenticateSecretKey(issued.secretKey)
        assert.deepStrictEqual(kept(), authenticated)
        yield* organizations.revokeSecretKey(organization.id, issued.id)
        assert.isUndefined(kept())
      }).pipe(Effect.provide(context))
    })),
  60_000
)
