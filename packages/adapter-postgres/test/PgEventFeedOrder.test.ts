/**
 * The event feed orders by commit position, then by recording order (docs/DECISIONS.md §17). Positions are
 * numbers: a feed once ordered them as text, which put 1000 before 996 whenever a page spanned a power of ten. The
 * test moves the commit positions (migration 144) up to just below a power of ten and records events on both sides.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, Organizations } from "@feedback/core"
import { recordEvent, transactional } from "@feedback/testing"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PgStoreLayer } from "../src/PgStore.ts"
import { freshEmbeddedTarget } from "./TestDatabase.ts"

const Store = Layer.unwrap(Effect.map(freshEmbeddedTarget, (target) => PgStoreLayer(target).pipe(Layer.orDie)))

layer(Organizations.Organizations.layer.pipe(Layer.provideMerge(Layer.merge(Store, Kernel.IdGenerator.uuidV7))), {
  timeout: 120_000
})(
  "event feed across a power of ten of transaction ids",
  (it) => {
    it.effect("lists events in the order their transactions committed", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Feed order" }))).id
        const current = Number((yield* sql<{ x: string }>`SELECT last_value::text AS x FROM event_commit_seq`)[0]!.x)
        const boundary = 10 ** String(current + 3).length
        yield* sql`SELECT setval('event_commit_seq', ${boundary - 4})`
        for (let i = 0; i < 8; i++) yield* transactional(recordEvent(org, "review.created", { id: `r${i}` }))
        const ids = (entries: ReadonlyArray<{ readonly event: { readonly data: unknown } }>) =>
          entries.map((e) => (e.event.data as { readonly id: string }).id)
        const all = yield* Kernel.EventOutbox.use((o) =>
          o.feed(org, { after: undefined, limit: 100, events: undefined })
        )
        assert.deepStrictEqual(ids(all), ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"])
        // Pages resume where the last one ended.
        const first = yield* Kernel.EventOutbox.use((o) =>
          o.feed(org, { after: undefined, limit: 3, events: undefined })
        )
        const rest = yield* Kernel.EventOutbox.use((o) =>
          o.feed(org, { after: first[first.length - 1]!.position, limit: 100, events: undefined })
        )
        assert.deepStrictEqual([...ids(first), ...ids(rest)], ids(all))
      }))
  }
)
