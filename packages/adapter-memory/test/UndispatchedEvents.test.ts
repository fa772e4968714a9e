/**
 * The memory outbox's index of events not yet fanned out (`UndispatchedEvents`, observing the events table and the
 * fan-out marks) equals a filter of the rows, in the table's order, after any sequence of writes, rewrites, deletions
 * and marks, in transactions that commit or roll back; and the marks cannot be opened before the events' index.
 */
import { assert, it } from "@effect/vitest"
import type { Kernel } from "@feedback/core"
import { Effect } from "effect"
import fc from "fast-check"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { domainEvents, fanOutMarks } from "../src/kernel/MemoryTables.ts"

const write = fc.record({
  op: fc.constantFrom("record", "rewrite", "delete", "mark", "unmark"),
  id: fc.integer({ min: 0, max: 7 }),
  organizationId: fc.constantFrom("o1", "o2", "o3")
})
const transaction = fc.record({ writes: fc.array(write, { maxLength: 8 }), rollBack: fc.boolean(), read: fc.boolean() })

const freshDatabase = () => Effect.runSync(Effect.provide(Effect.service(MemoryDatabase), MemoryDatabase.layer))

const eventOf = (id: string, organizationId: string, data: string) =>
  ({ id, organizationId, event: "review.created", data: { data } }) as unknown as Kernel.DomainEvent

it.effect("the index equals the unmarked events of each organization in the table's order after any writes", () =>
  Effect.sync(() =>
    fc.assert(
      fc.property(fc.array(transaction, { maxLength: 12 }), (transactions) => {
        const db = freshDatabase()
        const events = domainEvents(db)
        const marks = fanOutMarks(db)
        for (const [n, t] of transactions.entries()) {
          const run = db.mutate(() => {
            for (const w of t.writes) {
              const id = `e${w.id}`
              const existing = events.get(id)
              if (w.op === "record" && existing === undefined) events.set(id, eventOf(id, w.organizationId, "v"))
              // A redaction rewrites an event in place (same organization).
              else if (w.op === "rewrite" && existing !== undefined) {
                events.set(id, eventOf(id, existing.organizationId, `v${n}`))
              } else if (w.op === "delete") events.delete(id)
              else if (w.op === "mark") marks.set(id, true)
              else if (w.op === "unmark") marks.delete(id)
            }
            // A fan-out reads the index while writing: its order must survive the writes around it.
            if (t.read) void events.observer.perOrganization()
          })
          Effect.runSync(
            Effect.exit(db.transaction(t.rollBack ? Effect.andThen(run, Effect.fail("rolled back")) : run))
          )
        }
        const expected: Record<string, Array<Kernel.DomainEvent>> = {}
        for (const e of events.values()) {
          if (marks.get(e.id) === undefined) (expected[e.organizationId] ??= []).push(e)
        }
        const actual = Object.fromEntries(
          [...events.observer.perOrganization()].map(([organizationId, waiting]) => [
            organizationId,
            [...waiting.values()].map((r) => r.event)
          ])
        )
        assert.deepStrictEqual(actual, expected)
      }),
      { numRuns: 500 }
    )
  ))

it.effect("the fan-out marks opened first without their observer refuse the index", () =>
  Effect.sync(() => {
    const db = freshDatabase()
    db.table<string, true>("webhook_fanned_out_events")
    assert.throws(() => fanOutMarks(db), /opened without its observer/)
  }))
