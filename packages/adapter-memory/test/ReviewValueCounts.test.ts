/**
 * The memory store's kept collision counts (`ReviewValueCounts`, an observer of the reviews table) equal a count of
 * the rows after any sequence of inserts, replacements and deletions, in transactions that commit or roll back.
 */
import { assert, it } from "@effect/vitest"
import type { Kernel } from "@feedback/core"
import { Effect } from "effect"
import fc from "fast-check"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { memoryTables, type ReviewRow } from "../src/kernel/MemoryTables.ts"

const orgs = ["org-a", "org-b"] as const
const fingerprints = [null, "fp-1", "fp-2"] as const
const addresses = [null, "10.0.0.1", "10.0.0.2"] as const

const write = fc.oneof(
  fc.record({
    op: fc.constant("set" as const),
    id: fc.integer({ min: 0, max: 5 }),
    organizationId: fc.constantFrom(...orgs),
    browserFingerprint: fc.constantFrom(...fingerprints),
    ipAddress: fc.constantFrom(...addresses)
  }),
  fc.record({ op: fc.constant("delete" as const), id: fc.integer({ min: 0, max: 5 }) })
)
const transaction = fc.record({ writes: fc.array(write, { maxLength: 6 }), rollBack: fc.boolean() })

it.effect("kept counts equal a count of the rows after committed and rolled-back writes", () =>
  Effect.sync(() =>
    fc.assert(fc.property(fc.array(transaction, { maxLength: 12 }), (transactions) => {
      const db = Effect.runSync(
        Effect.gen(function*() {
          return yield* MemoryDatabase
        }).pipe(Effect.provide(MemoryDatabase.layer))
      )
      const reviews = memoryTables(db).reviews
      for (const t of transactions) {
        const run = db.mutate(() => {
          for (const w of t.writes) {
            // An id belongs to one organization for good, as a UUID does.
            const id = `r${w.id}`
            if (w.op === "delete") reviews.delete(id)
            else {
              const organizationId = (reviews.get(id)?.organizationId ?? w.organizationId) as Kernel.OrganizationId
              reviews.set(
                id,
                { organizationId, browserFingerprint: w.browserFingerprint, ipAddress: w.ipAddress } as ReviewRow
              )
            }
          }
        })
        Effect.runSync(Effect.exit(db.transaction(t.rollBack ? Effect.andThen(run, Effect.fail("rolled back")) : run)))
      }
      for (const organizationId of orgs) {
        for (const [kind, values] of [["browserFingerprint", fingerprints], ["ipAddress", addresses]] as const) {
          for (const value of values) {
            if (value === null) continue
            const counted = [...reviews.values()].filter((r) =>
              r.organizationId === organizationId && r[kind] === value
            ).length
            assert.strictEqual(
              reviews.observer.count(organizationId, kind, value),
              counted,
              `${organizationId} ${kind} ${value}`
            )
          }
        }
      }
    }))
  ))
