/**
 * The memory store's index of deliveries still to send or being sent (`ActiveDeliveries`, an observer of the
 * deliveries table, what a claim reads) equals a filter of the rows after any sequence of writes and deletions, in
 * transactions that commit or roll back; and a table cannot be opened without the observer its owner declares.
 */
import { assert, it } from "@effect/vitest"
import type { WebhookDeliveryRecord } from "@feedback/core"
import { Effect } from "effect"
import fc from "fast-check"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { webhookDeliveries } from "../src/kernel/MemoryTables.ts"

const statuses = ["pending", "in_flight", "delivered", "failed"] as const
const write = fc.oneof(
  fc.record({ op: fc.constant("set" as const), id: fc.integer({ min: 0, max: 5 }), status: fc.constantFrom(...statuses) }),
  fc.record({ op: fc.constant("delete" as const), id: fc.integer({ min: 0, max: 5 }) })
)
const transaction = fc.record({ writes: fc.array(write, { maxLength: 6 }), rollBack: fc.boolean() })

const freshDatabase = () => Effect.runSync(Effect.provide(Effect.service(MemoryDatabase), MemoryDatabase.layer))

it.effect("the active deliveries are the pending and in-flight rows after committed and rolled-back writes", () =>
  Effect.sync(() =>
    fc.assert(fc.property(fc.array(transaction, { maxLength: 12 }), (transactions) => {
      const db = freshDatabase()
      const deliveries = webhookDeliveries(db)
      for (const t of transactions) {
        const run = db.mutate(() => {
          for (const w of t.writes) {
            const id = `d${w.id}`
            if (w.op === "delete") deliveries.delete(id)
            else deliveries.set(id, { id, status: w.status } as WebhookDeliveryRecord)
          }
        })
        Effect.runSync(Effect.exit(db.transaction(t.rollBack ? Effect.andThen(run, Effect.fail("rolled back")) : run)))
      }
      const expected = [...deliveries.values()].filter((d) => d.status === "pending" || d.status === "in_flight")
      assert.deepStrictEqual(new Map(expected.map((d) => [d.id, d])), deliveries.observer.rows)
    }), { numRuns: 300 })
  ))

it.effect("a table first opened without its observer refuses to be opened with one", () =>
  Effect.sync(() => {
    const db = freshDatabase()
    db.table<string, WebhookDeliveryRecord>("webhook_deliveries")
    assert.throws(() => webhookDeliveries(db), /opened without its observer/)
  }))
