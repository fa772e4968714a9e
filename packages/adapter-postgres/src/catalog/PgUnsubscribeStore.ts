/**
 * Unsubscribe tokens over PostgreSQL (`unsubscribe_tokens`, migration 0131). `ensureToken` is an insert that keeps the
 * first token (`ON CONFLICT DO NOTHING`) followed by a read in its own statement, which sees a concurrent winner once
 * it committed (the insert waited for it). The opt-out is one conditional UPDATE: a customer who already opted out
 * keeps their first opt-out.
 */
import { Catalog } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../kernel/SqlErrors.ts"
import { toCustomer } from "./CatalogRows.ts"

export const PgUnsubscribeRepository = Layer.effect(
  Catalog.UnsubscribeRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    return Catalog.UnsubscribeRepository.of({
      ensureToken: (organizationId, customerId, candidate, at) =>
        Effect.gen(function*() {
          const inserted = yield* sql<
            { token: string }
          >`INSERT INTO unsubscribe_tokens (organization_id, customer_id, token, created_at)
            VALUES (${organizationId}, ${customerId}, ${candidate}, ${at})
            ON CONFLICT (organization_id, customer_id) DO NOTHING RETURNING token`
          if (inserted[0] !== undefined) return inserted[0].token
          const stored = yield* sql<{ token: string }>`SELECT token FROM unsubscribe_tokens
            WHERE organization_id = ${organizationId} AND customer_id = ${customerId}`
          const token = stored[0]?.token
          if (token === undefined) {
            return yield* Effect.die(new Error("the unsubscribe token was neither inserted nor found"))
          }
          return token
        }).pipe(orDie),
      findToken: (token) =>
        sql<{ organizationId: string; customerId: string }>`SELECT organization_id, customer_id FROM unsubscribe_tokens
          WHERE token = ${token}`.pipe(
          Effect.map((rows) =>
            Option.map(Option.fromUndefinedOr(rows[0]), (r) => ({
              organizationId: r.organizationId as never,
              customerId: r.customerId as never
            }))
          ),
          orDie
        ),
      optOut: (organizationId, customerId, source, at) =>
        Effect.gen(function*() {
          const updated = yield* sql<
            Record<string, unknown>
          >`UPDATE customers SET email_opt_out = true, email_opt_out_at = ${at},
              email_opt_out_source = ${source}, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${customerId} AND NOT email_opt_out RETURNING *`
          if (updated[0] !== undefined) {
            return { _tag: "OptedOut", customer: toCustomer(updated[0]) } satisfies Catalog.OptOutOutcome
          }
          const stored = yield* sql<
            Record<string, unknown>
          >`SELECT * FROM customers WHERE organization_id = ${organizationId} AND id = ${customerId}`
          return stored[0] === undefined
            ? { _tag: "NotFound" } satisfies Catalog.OptOutOutcome
            : { _tag: "AlreadyOptedOut", customer: toCustomer(stored[0]) } satisfies Catalog.OptOutOutcome
        }).pipe(orDie)
    })
  })
)
