/**
 * Unsubscribe tokens over PostgreSQL (`unsubscribe_tokens`, migration 0131). `ensureTokens` is one statement that
 * reads the stored tokens and inserts the missing ones, keeping the first (`ON CONFLICT DO NOTHING`); a concurrent
 * winner is read in a second statement, which sees it once it committed (the insert waited for it). The opt-out is one conditional UPDATE: a customer who already opted out
 * keeps their first opt-out.
 */
import { Catalog, type Kernel } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../kernel/SqlErrors.ts"
import { toCustomer } from "./CatalogRows.ts"

export const PgUnsubscribeRepository = Layer.effect(
  Catalog.UnsubscribeRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    return Catalog.UnsubscribeRepository.of({
      ensureTokens: (organizationId, candidates, at) =>
        Effect.gen(function*() {
          const tokens = new Map<Kernel.CustomerId, string>()
          if (candidates.length === 0) return tokens
          const wanted = new Map(candidates.map((c) => [c.customerId, c.candidate]))
          const rows = yield* sql.unsafe<{ customerId: Kernel.CustomerId; token: string }>(
            `WITH wanted AS (
               SELECT * FROM unnest($2::uuid[], $3::text[]) AS w(customer_id, token)
             ), stored AS (
               SELECT u.customer_id, u.token FROM unsubscribe_tokens u
               WHERE u.organization_id = $1 AND u.customer_id IN (SELECT customer_id FROM wanted)
             ), made AS (
               INSERT INTO unsubscribe_tokens (organization_id, customer_id, token, created_at)
               SELECT $1, w.customer_id, w.token, $4::timestamptz FROM wanted w
               JOIN customers c ON c.organization_id = $1 AND c.id = w.customer_id
               WHERE NOT EXISTS (SELECT 1 FROM stored s WHERE s.customer_id = w.customer_id)
               ON CONFLICT (organization_id, customer_id) DO NOTHING RETURNING customer_id, token
             )
             SELECT customer_id, token FROM stored UNION ALL SELECT customer_id, token FROM made`,
            [organizationId, `{${[...wanted.keys()].join(",")}}`, `{${[...wanted.values()].join(",")}}`, at]
          )
          for (const r of rows) tokens.set(r.customerId, r.token)
          // A customer left out had its token inserted by a concurrent caller (the insert waited for it to commit,
          // and this statement's snapshot predates it), or does not exist: a second read sees the former.
          const missing = [...wanted.keys()].filter((id) => !tokens.has(id))
          if (missing.length > 0) {
            const late = yield* sql.unsafe<{ customerId: Kernel.CustomerId; token: string }>(
              `SELECT customer_id, token FROM unsubscribe_tokens WHERE organization_id = $1 AND customer_id = ANY($2::uuid[])`,
              [organizationId, `{${missing.join(",")}}`]
            )
            for (const r of late) tokens.set(r.customerId, r.token)
          }
          return tokens
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
