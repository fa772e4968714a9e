/**
 * Unsubscribe tokens in memory: one row per customer (`unsubscribe_tokens`, keyed by organization and customer) and an
 * index by token, as the SQL table's unique constraint; the opt-out writes the shared `customers` table.
 */
import { Catalog, type Kernel } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import { memoryTables, unowned } from "../kernel/MemoryTables.ts"

interface TokenRow {
  readonly organizationId: Kernel.OrganizationId
  readonly customerId: Kernel.CustomerId
  readonly token: string
  readonly createdAt: Kernel.Timestamp.Timestamp
}

const ownerKey = (organizationId: string, customerId: string) => `${organizationId}/${customerId}`

export const MemoryUnsubscribeRepository = Layer.effect(
  Catalog.UnsubscribeRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { customers } = memoryTables(db)
    const byOwner = db.table<string, TokenRow>("unsubscribe_tokens")
    const byToken = db.table<string, TokenRow>("unsubscribe_tokens_by_token")

    return Catalog.UnsubscribeRepository.of({
      ensureTokens: (organizationId, candidates, at) =>
        db.mutate(() => {
          const tokens = new Map<Kernel.CustomerId, string>()
          for (const { candidate, customerId } of candidates) {
            const stored = byOwner.get(ownerKey(organizationId, customerId))
            if (stored !== undefined) {
              tokens.set(customerId, stored.token)
              continue
            }
            // The foreign key of the SQL table: a token belongs to a customer of the organization.
            if (customers.get(customerId)?.organizationId !== organizationId) continue
            if (byToken.get(candidate) !== undefined) throw new Error("unsubscribe token collision")
            const row: TokenRow = { organizationId, customerId, token: candidate, createdAt: at }
            byOwner.set(ownerKey(organizationId, customerId), row)
            byToken.set(candidate, row)
            tokens.set(customerId, candidate)
          }
          return tokens
        }),
      findToken: (token) =>
        Effect.sync(() =>
          Option.map(
            Option.fromUndefinedOr(byToken.get(token)),
            (row) => ({ organizationId: row.organizationId, customerId: row.customerId })
          )
        ),
      optOut: (organizationId, customerId, source, at) =>
        db.mutate((): Catalog.OptOutOutcome => {
          const stored = customers.get(customerId)
          if (stored === undefined || stored.organizationId !== organizationId) return { _tag: "NotFound" }
          if (stored.emailOptOut) return { _tag: "AlreadyOptedOut", customer: unowned(stored) }
          const updated = { ...stored, emailOptOut: true, emailOptOutAt: at, emailOptOutSource: source, updatedAt: at }
          customers.set(customerId, updated)
          return { _tag: "OptedOut", customer: unowned(updated) }
        })
    })
  })
)
