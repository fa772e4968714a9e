/**
 * The memory store's delivery indexes (`DeliveryIndexes`, an observer of the deliveries table: what a claim and a
 * fan-out read: active rows, pending rows oldest first, in-flight counts, first deliveries) equal a filter of the rows
 * after any sequence of writes and deletions, in transactions that commit or roll back; and a table cannot be opened without the observer its owner declares.
 */
import { assert, it } from "@effect/vitest"
import type { Webhooks } from "@feedback/core"
import { Effect } from "effect"
import fc from "fast-check"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { oldestFirst, webhookDeliveries } from "../src/kernel/MemoryTables.ts"

const statuses = ["pending", "in_flight", "delivered", "failed"] as const
const write = fc.oneof(
  fc.record({
    op: fc.constant("set" as const),
    id: fc.integer({ min: 0, max: 5 }),
    status: fc.constantFrom(...statuses),
    webhookId: fc.constantFrom("w1", "w2"),
    eventId: fc.constantFrom("e1", "e2", "e3"),
    redeliveryOf: fc.constantFrom(null, "d0"),
    createdAt: fc.constantFrom("2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:03.000Z"),
    recordKey: fc.constantFrom(null, "r1", "r2")
  }),
  fc.record({ op: fc.constant("delete" as const), id: fc.integer({ min: 0, max: 5 }) })
)
const transaction = fc.record({ writes: fc.array(write, { maxLength: 6 }), rollBack: fc.boolean(), walk: fc.boolean() })

const freshDatabase = () => Effect.runSync(Effect.provide(Effect.service(MemoryDatabase), MemoryDatabase.layer))

it.effect("the indexes equal the pending and in-flight rows and the first-delivery pairs after any writes", () =>
  Effect.sync(() =>
    fc.assert(
      fc.property(fc.array(transaction, { maxLength: 12 }), (transactions) => {
        const db = freshDatabase()
        const deliveries = webhookDeliveries(db)
        for (const t of transactions) {
          const run = db.mutate(() => {
            for (const w of t.writes) {
              const id = `d${w.id}`
              if (w.op === "delete") deliveries.delete(id)
              else {deliveries.set(
                  id,
                  {
                    id,
                    status: w.status,
                    webhookId: w.webhookId,
                    eventId: w.eventId,
                    redeliveryOf: w.redeliveryOf,
                    createdAt: w.createdAt,
                    recordKey: w.recordKey
                  } as Webhooks.WebhookDeliveryRecord
                )}
            }
            // A claim walks the pending rows while writing: the walk's order must survive the writes around it.
            if (t.walk) void [...deliveries.observer.pendingOldestFirst()]
          })
          Effect.runSync(
            Effect.exit(db.transaction(t.rollBack ? Effect.andThen(run, Effect.fail("rolled back")) : run))
          )
        }
        const rows = [...deliveries.values()]
        const active = rows.filter((d) => d.status === "pending" || d.status === "in_flight")
        assert.deepStrictEqual(deliveries.observer.active, new Map(active.map((d) => [d.id, d])))
        // First deliveries per (webhook, event) pair (the store writes one; random writes here may make more).
        const firsts = new Map<string, number>()
        for (const d of rows) {
          if (d.redeliveryOf === null) {
            firsts.set(`${d.webhookId}/${d.eventId}`, (firsts.get(`${d.webhookId}/${d.eventId}`) ?? 0) + 1)
          }
        }
        assert.deepStrictEqual(deliveries.observer.firsts, firsts)
        // Pending rows oldest first (creation time, then id), and the in-flight counts per webhook and per record.
        const pending = rows.filter((d) => d.status === "pending").sort(oldestFirst)
        assert.deepStrictEqual([...deliveries.observer.pendingOldestFirst()], pending)
        const inFlight = new Map<string, number>()
        const records = new Map<string, number>()
        for (const d of rows.filter((d) => d.status === "in_flight")) {
          inFlight.set(d.webhookId, (inFlight.get(d.webhookId) ?? 0) + 1)
          if (d.recordKey !== null) {
            records.set(`${d.webhookId}/${d.recordKey}`, (records.get(`${d.webhookId}/${d.recordKey}`) ?? 0) + 1)
          }
        }
        assert.deepStrictEqual(deliveries.observer.inFlight, inFlight)
        assert.deepStrictEqual(deliveries.observer.recordsInFlight, records)
      }),
      { numRuns: 300 }
    )
  ))

it.effect("a table first opened without its observer refuses to be opened with one", () =>
  Effect.sync(() => {
    const db = freshDatabase()
    db.table<string, Webhooks.WebhookDeliveryRecord>("webhook_deliveries")
    assert.throws(() => webhookDeliveries(db), /opened without its observer/)
  }))
