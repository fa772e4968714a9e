/**
 * `domain_events` keeps its foreign key's guarantee without the per-row check (migration 104, docs/DECISIONS.md
 * §29): an event's organization must exist (one statement trigger), its `organization_id` cannot move to a missing
 * one, deleting or truncating organizations takes their events along, and an organization's id cannot change
 * under its events. On a server, the organization of an uncommitted event cannot be deleted until that
 * transaction ends — the lock a foreign key's check takes.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, Organizations } from "@feedback/core"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { isSqlError } from "effect/sql/SqlError"
import { randomUUID } from "node:crypto"
import { PgStoreLayer } from "../src/PgStore.ts"
import { sqlStateOf } from "../src/kernel/SqlErrors.ts"
import { describeWithServer, freshLayer, storeName } from "./TestDatabase.ts"

const services = freshLayer((target) =>
  Organizations.Organizations.layer.pipe(
    Layer.provideMerge(PgStoreLayer(target)),
    Layer.provideMerge(Kernel.IdGenerator.uuidV7)
  )
)

/** The SQLSTATE an effect fails with (it must fail with an SQL error). */
const failsWith = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.flip(effect).pipe(Effect.map((e) => (isSqlError(e) ? sqlStateOf(e) : `not an SQL error: ${String(e)}`)))

const newOrganization = (name: string) =>
  Organizations.Organizations.use((o) => o.createOrganization({ name })).pipe(
    Effect.map((o) => o.id as Kernel.OrganizationId)
  )

const insertEvents = (organizationIds: ReadonlyArray<string>) =>
  SqlClient.SqlClient.use((sql) =>
    sql.unsafe(
      `INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
       SELECT o::uuid, gen_random_uuid(), 'review.updated', '{}', now() FROM jsonb_array_elements_text($1::jsonb) AS o`,
      [JSON.stringify(organizationIds)]
    )
  )

const eventCount = (organizationId: string) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM domain_events WHERE organization_id = ${organizationId}`
  ).pipe(
    Effect.map((rows) => Number(rows[0]!.n))
  )

layer(services, { timeout: 60_000, excludeTestServices: true })(`domain_events' organization (${storeName})`, (it) => {
  it.effect("an event of a missing organization is refused as a foreign-key violation, alone or among others", () =>
    Effect.gen(function*() {
      const org = yield* newOrganization("Present")
      assert.strictEqual(yield* failsWith(insertEvents([randomUUID()])), "23503")
      assert.strictEqual(yield* failsWith(insertEvents([org, org, randomUUID(), org])), "23503")
      assert.strictEqual(yield* eventCount(org), 0, "the failed statements wrote nothing")
      yield* insertEvents([org, org, org])
      assert.strictEqual(yield* eventCount(org), 3)
    }).pipe(Effect.orDie))

  it.effect("an event cannot move to a missing organization, nor an organization's id change under its events", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const org = yield* newOrganization("Keyed")
      const other = yield* newOrganization("Other")
      yield* insertEvents([org])
      const missing = randomUUID()
      assert.strictEqual(
        yield* failsWith(sql`UPDATE domain_events SET organization_id = ${missing} WHERE organization_id = ${org}`),
        "23503"
      )
      assert.strictEqual(
        yield* failsWith(sql`UPDATE organizations SET organization_id = ${missing} WHERE organization_id = ${org}`),
        "23503"
      )
      // Moving to an organization that exists is what the key allowed.
      yield* sql`UPDATE domain_events SET organization_id = ${other} WHERE organization_id = ${org}`
      assert.strictEqual(yield* eventCount(other), 1)
    }).pipe(Effect.orDie))

  it.effect("deleting an organization deletes its events, and only its events", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const gone = yield* newOrganization("Gone")
      const kept = yield* newOrganization("Kept")
      yield* insertEvents([gone, gone, kept])
      yield* sql`DELETE FROM organizations WHERE organization_id = ${gone}`
      assert.strictEqual(yield* eventCount(gone), 0)
      assert.strictEqual(yield* eventCount(kept), 1)
    }).pipe(Effect.orDie))
})

describeWithServer("domain_events' organization under concurrency", () => {
  layer(
    freshLayer(
      (target) =>
        Organizations.Organizations.layer.pipe(
          Layer.provideMerge(PgStoreLayer(target)),
          Layer.provideMerge(Kernel.IdGenerator.uuidV7)
        ),
      {
        maxConnections: 4
      }
    ),
    {
      timeout: 60_000,
      excludeTestServices: true
    }
  )("two connections", (it) => {
    it.effect("the organization of an uncommitted event cannot be deleted until that transaction ends", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const org = yield* newOrganization("Locked")
        const inserted = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const writer = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
          yield* insertEvents([org])
          yield* Deferred.succeed(inserted, undefined)
          yield* Deferred.await(finish)
        })))
        yield* Deferred.await(inserted)
        const deleting = sql.withTransaction(Effect.gen(function*() {
          yield* sql.unsafe("SET LOCAL lock_timeout = '300ms'")
          yield* sql`DELETE FROM organizations WHERE organization_id = ${org}`
        }))
        assert.strictEqual(yield* failsWith(deleting), "55P03", "the delete waits for the inserting transaction")
        yield* Deferred.succeed(finish, undefined)
        yield* Fiber.join(writer)
        assert.strictEqual(yield* eventCount(org), 1)
        yield* deleting
        assert.strictEqual(yield* eventCount(org), 0, "then it goes, with its event")
      }).pipe(Effect.orDie))
  })
})
