/**
 * The in-process event stream on every store (docs/DECISIONS.md §65): committed events of every organization in
 * the feed's order, each once, none of a rolled-back unit of work, resumable after any position it handed out, only
 * the names asked for, and waiting for events committed after it caught up. Live clock: the stream waits by
 * sleeping or on the store's signal. The store is shared with other suites, so each test follows its own
 * organizations.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Stream } from "effect"
import { TestClock } from "effect/testing"
import { CoreLayer, Kernel, Organizations, Webhooks } from "@feedback/core"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { recordEvent, transactional } from "../TestTransactions.ts"

/** The first `n` streamed events of the given organizations. */
const streamed = (
  organizations: ReadonlyArray<Kernel.OrganizationId>,
  n: number,
  options: Webhooks.EventStreamOptions = {}
) =>
  Webhooks.committedEvents({ pollMs: 50, ...options }).pipe(
    Stream.filter((e) => organizations.includes(e.event.organizationId)),
    Stream.take(n),
    Stream.runCollect
  )

const labels = (events: ReadonlyArray<Webhooks.StreamedEvent>) =>
  events.map((e) => (e.event.data as { label: string }).label)

export const eventStreamConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 60_000 })("event stream (in process)", (it) => {
    it.effect("streams the committed events of every organization in the feed's order, each once", () =>
      TestClock.withLive(Effect.gen(function*() {
        const a = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Stream A" }))).id
        const b = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Stream B" }))).id
        yield* transactional(Effect.all([
          recordEvent(a, "review.created", { label: "a1" }),
          recordEvent(b, "review.created", { label: "b1" })
        ]))
        yield* recordEvent(b, "review.updated", { label: "b2" })
        const rolledBack = yield* Effect.exit(
          transactional(Effect.andThen(recordEvent(a, "review.created", { label: "gone" }), Effect.fail("abort")))
        )
        assert.isTrue(Exit.isFailure(rolledBack))
        yield* recordEvent(a, "review.deleted", { label: "a2" })

        const events = yield* streamed([a, b], 4)
        assert.deepStrictEqual(labels(events), ["a1", "b1", "b2", "a2"])
        assert.strictEqual(new Set(events.map((e) => e.event.id)).size, 4)
        // The same order as each organization's own feed for transactions committed one after another (positions are
        // the stream's own: it orders every organization's events together, §65).
        for (const organization of [a, b]) {
          const feed = yield* Kernel.EventOutbox.use((o) =>
            o.feed(organization, { after: undefined, limit: 10, events: undefined })
          )
          assert.deepStrictEqual(
            feed.map((e) => e.event.id),
            events.filter((e) => e.event.organizationId === organization).map((e) => e.event.id)
          )
        }
      })))

    it.effect("resumes after any position it handed out, with nothing lost or repeated", () =>
      TestClock.withLive(Effect.gen(function*() {
        const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Resumed" }))).id
        for (let i = 0; i < 7; i++) yield* recordEvent(org, "question.created", { label: `q${i}` })
        const all = yield* streamed([org], 7, { batchSize: 2 })
        for (const k of [0, 3, 6]) {
          const rest = yield* streamed([org], 6 - k, { after: all[k]!.position, batchSize: 3 })
          assert.deepStrictEqual(labels(rest), labels(all).slice(k + 1))
        }
      })))

    it.effect("streams only the events asked for", () =>
      TestClock.withLive(Effect.gen(function*() {
        const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Filtered" }))).id
        yield* recordEvent(org, "review.created", { label: "wanted 1" })
        yield* recordEvent(org, "review.updated", { label: "unwanted" })
        yield* recordEvent(org, "review.created", { label: "wanted 2" })
        assert.deepStrictEqual(labels(yield* streamed([org], 2, { events: ["review.created"] })), [
          "wanted 1",
          "wanted 2"
        ])
      })))

    it.effect("waits for events committed after it caught up", () =>
      TestClock.withLive(Effect.gen(function*() {
        const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Waiting" }))).id
        yield* recordEvent(org, "review.created", { label: "before" })
        const consumer = yield* Effect.forkChild(streamed([org], 3))
        // The consumer has the first event once it caught up; the next two commit while it waits.
        yield* streamed([org], 1)
        yield* recordEvent(org, "review.created", { label: "after 1" })
        yield* transactional(recordEvent(org, "review.updated", { label: "after 2" }))
        assert.deepStrictEqual(labels(yield* Fiber.join(consumer)), ["before", "after 1", "after 2"])
      })))
  })
