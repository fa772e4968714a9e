/**
 * Idempotency keys in memory. A claim is one synchronous step on the table's rows, outside the write lock: a
 * repeat must see the claim (and answer 409) while the first request's unit of work still holds that lock. The
 * recorded response is a journaled write inside the unit of work, so it rolls back with the operation.
 */
import { Idempotency } from "@feedback/core"
import { Effect, Layer } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"

const rowKey = (organizationId: string, key: string) => `${organizationId}\n${key}`

export const MemoryIdempotencyRepository = Layer.effect(
  Idempotency.IdempotencyRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const keys = db.table<string, Idempotency.IdempotencyRecord>("idempotency_keys")
    return Idempotency.IdempotencyRepository.of({
      claim: (claim) =>
        Effect.sync(() => {
          const id = rowKey(claim.organizationId, claim.key)
          const outcome = Idempotency.decideClaim(keys.rows.get(id), claim)
          if (outcome._tag === "Claimed") {
            keys.rows.set(id, {
              fingerprint: claim.fingerprint,
              token: claim.token,
              leaseUntil: claim.leaseUntil,
              expiresAt: claim.expiresAt,
              response: null
            })
          }
          return outcome
        }),
      complete: (organizationId, key, token, response) =>
        db.mutate(() => {
          const id = rowKey(organizationId, key)
          const row = keys.get(id)
          if (row === undefined || row.token !== token || row.response !== null) return false
          keys.set(id, { ...row, response })
          return true
        }),
      release: (organizationId, key, token) =>
        Effect.sync(() => {
          const id = rowKey(organizationId, key)
          const row = keys.rows.get(id)
          if (row !== undefined && row.token === token && row.response === null) keys.rows.delete(id)
        }),
      redact: (organizationId, redaction) =>
        db.mutate(() => {
          const prefix = rowKey(organizationId, "")
          for (const [id, row] of keys.rows) {
            if (!id.startsWith(prefix) || row.response === null) continue
            const response = Idempotency.redactStoredResponse(row.response, redaction)
            if (response !== row.response) keys.set(id, { ...row, response })
          }
        }),
      purgeExpired: (before, limit) =>
        Effect.sync(() => {
          let purged = 0
          for (const [id, row] of keys.rows) {
            if (purged >= limit) break
            if (row.expiresAt <= before) {
              keys.rows.delete(id)
              purged++
            }
          }
          return purged
        })
    })
  })
)
