/**
 * The event feed's visibility per organization (migration 144, docs/FAIRNESS.md): an open transaction never holds
 * back another organization's feed, nor its own organization's later commits; and the feed's guarantee stays (a
 * position once handed out is final, nothing that commits late is skipped), checked with concurrent writers and a
 * reader following them.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, Organizations } from "@feedback/core"
import { recordEvent, transactional } from "@feedback/testing"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PgStoreLayer } from "../src/PgStore.ts"
import { describeWithServer, freshLayer } from "./TestDatabase.ts"

const newOrganization = (name: string) =>
  Organizations.Organizations.use((o) => o.createOrganization({ name })).pipe(
    Effect.map((o) => o.id as Kernel.OrganizationId)
  )

const read = (org: Kernel.OrganizationId, after?: string, limit = 250) =>
  Kernel.EventOutbox.use((o) => o.feed(org, { after, limit, events: undefined }))

const ids = (entries: ReadonlyArray<Kernel.FeedEntry>) =>
  entries.map((e) => (e.event.data as { readonly id: string }).id)

/** Runs `body` inside a transaction that records `id` for `org` first and stays open until `release` is done. */
const openTransaction = (org: Kernel.OrganizationId, id: string) =>
  Effect.gen(function*() {
    const inside = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(transactional(Effect.gen(function*() {
      yield* recordEvent(org, "review.created", { id })
      yield* Deferred.succeed(inside, undefined)
      yield* Deferred.await(release)
    })))
    yield* Deferred.await(inside)
    return { commit: Deferred.succeed(release, undefined).pipe(Effect.andThen(Fiber.join(fiber))) }
  })

describeWithServer("event feed per organization", () => {
  layer(
    freshLayer(
      (target) =>
        Organizations.Organizations.layer.pipe(
          Layer.provideMerge(PgStoreLayer(target)),
          Layer.provideMerge(Kernel.IdGenerator.uuidV7)
        ),
      { maxConnections: 8 }
    ),
    { timeout: 120_000, excludeTestServices: true }
  )("several connections", (it) => {
    it.effect("an open transaction holds back neither another organization's feed nor its own later commits", () =>
      Effect.gen(function*() {
        const aggressor = yield* newOrganization("Long transaction")
        const victim = yield* newOrganization("Victim")
        yield* transactional(recordEvent(aggressor, "review.created", { id: "a0" }))
        const long = yield* openTransaction(aggressor, "a-long")

        // Read while the long transaction is open: the feed shows what committed since, at once.
        yield* transactional(recordEvent(victim, "review.created", { id: "v1" }))
        assert.deepStrictEqual(ids(yield* read(victim)), ["v1"])
        yield* transactional(recordEvent(aggressor, "review.created", { id: "a1" }))
        const before = yield* read(aggressor)
        assert.deepStrictEqual(ids(before), ["a0", "a1"])

        // The long transaction commits: its event comes after every position already handed out.
        yield* long.commit
        assert.deepStrictEqual(ids(yield* read(aggressor, before[before.length - 1]!.position)), ["a-long"])
        assert.deepStrictEqual(ids(yield* read(aggressor)), ["a0", "a1", "a-long"])
        assert.deepStrictEqual(ids(yield* read(victim)), ["v1"])
      }).pipe(Effect.orDie))

    it.effect("a reader following concurrent writers gets every event once, in the order a later read gives", () =>
      Effect.gen(function*() {
        const org = yield* newOrganization("Busy")
        const writers = 6
        const perWriter = 15
        const written = writers * perWriter * 2
        // Each transaction records two events with a pause between them, so commits interleave with inserts.
        const writer = (w: number) =>
          Effect.gen(function*() {
            for (let i = 0; i < perWriter; i++) {
              yield* transactional(Effect.gen(function*() {
                yield* recordEvent(org, "review.created", { id: `w${w}-${i}-a` })
                yield* Effect.yieldNow
                yield* recordEvent(org, "review.updated", { id: `w${w}-${i}-b` })
              }))
            }
          })
        let done = false
        const running = yield* Effect.forkChild(
          Effect.all(Array.from({ length: writers }, (_, w) => writer(w)), { concurrency: "unbounded" }).pipe(
            Effect.ensuring(Effect.sync(() => (done = true)))
          )
        )
        const seen: Array<string> = []
        let after: string | undefined
        while (seen.length < written) {
          const finished = done
          const page = yield* read(org, after, 7)
          seen.push(...ids(page))
          if (page.length > 0) after = page[page.length - 1]!.position
          else yield* Effect.yieldNow
          // A reader that skipped an event would wait here for ever: fail instead once the writers are done.
          if (finished && page.length === 0) break
        }
        yield* Fiber.join(running)
        seen.push(...ids(yield* read(org, after)))
        assert.strictEqual(new Set(seen).size, seen.length, "no event twice")
        assert.strictEqual(seen.length, written, "every event")
        assert.deepStrictEqual(seen, ids(yield* read(org, undefined, written)))
        // Each transaction's two events are adjacent: a transaction's events share their position's first part.
        for (let i = 0; i < seen.length; i += 2) assert.strictEqual(seen[i]!.replace(/-a$/, "-b"), seen[i + 1])
      }).pipe(Effect.orDie))

    it.effect("purging events purges the commit positions left without events, and only those", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const org = yield* newOrganization("Purged")
        for (let i = 0; i < 3; i++) yield* transactional(recordEvent(org, "review.created", { id: `p${i}` }))
        const commits = () =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM event_commits WHERE organization_id = ${org}`.pipe(
            Effect.map((rows) => Number(rows[0]!.n))
          )
        assert.strictEqual(yield* commits(), 3)
        // The first two were fanned out (the purge keeps events still waiting for it).
        const [p0, p1] = yield* read(org)
        yield* sql`UPDATE domain_events SET fan_out_pending = false
          WHERE organization_id = ${org} AND id IN (${p0!.event.id}, ${p1!.event.id})`
        const outbox = yield* Kernel.EventOutbox
        while ((yield* outbox.purge(Kernel.Timestamp.fromMillis(Date.UTC(9999, 0, 1)), 1)) > 0) {
          /* in batches of one */
        }
        assert.strictEqual(yield* commits(), 1)
        assert.deepStrictEqual(ids(yield* read(org)), ["p2"])
      }).pipe(Effect.orDie))
  })
})
