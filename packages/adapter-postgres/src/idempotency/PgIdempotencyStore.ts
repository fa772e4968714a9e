/**
 * Idempotency keys over PostgreSQL, exact across processes: a claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE`
 * committed at once, so of concurrent claims of a key exactly one gets its token in (the others wait for its row and
 * then see it running). The response is recorded by an `UPDATE` that names the claim's token, inside the request's
 * transaction: it commits with the operation's effects, and an attempt whose claim was taken over records nothing.
 */
import { Idempotency } from "@feedback/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { toTimestamp } from "../kernel/SqlRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"

interface KeyRow {
  readonly fingerprint: string
  readonly claimToken: string
  readonly leaseUntil: Date | string
  readonly expiresAt: Date | string
  readonly responseStatus: number | null
  readonly responseContentType: string | null
  readonly responseBody: string | null
}

export const PgIdempotencyRepository = Layer.effect(
  Idempotency.IdempotencyRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const tryClaim = (c: Idempotency.IdempotencyClaim) =>
      sql<{ readonly claimToken: string }>`INSERT INTO idempotency_keys AS k
        (organization_id, idempotency_key, fingerprint, claim_token, lease_until, expires_at)
        VALUES (${c.organizationId}, ${c.key}, ${c.fingerprint}, ${c.token}, ${c.leaseUntil}, ${c.expiresAt})
      ON CONFLICT (organization_id, idempotency_key) DO UPDATE SET
        fingerprint = EXCLUDED.fingerprint, claim_token = EXCLUDED.claim_token, lease_until = EXCLUDED.lease_until,
        expires_at = EXCLUDED.expires_at, response_status = NULL, response_content_type = NULL, response_body = NULL
      WHERE k.expires_at <= ${c.now}
        OR (k.response_status IS NULL AND k.lease_until <= ${c.now} AND k.fingerprint = EXCLUDED.fingerprint)
      RETURNING claim_token`

    const stored = (c: Idempotency.IdempotencyClaim) =>
      sql<
        KeyRow
      >`SELECT fingerprint, claim_token, lease_until, expires_at, response_status, response_content_type, response_body
      FROM idempotency_keys WHERE organization_id = ${c.organizationId} AND idempotency_key = ${c.key}`.pipe(
        Effect.map(([row]) =>
          row === undefined ? undefined : {
            fingerprint: row.fingerprint,
            token: row.claimToken,
            leaseUntil: toTimestamp(row.leaseUntil),
            expiresAt: toTimestamp(row.expiresAt),
            response: row.responseStatus === null ? null : {
              status: row.responseStatus,
              contentType: row.responseContentType,
              body: row.responseBody ?? ""
            }
          }
        )
      )

    const claim = (c: Idempotency.IdempotencyClaim): Effect.Effect<Idempotency.ClaimOutcome> =>
      Effect.gen(function*() {
        // The row may change between the two statements (expire, be released, be purged): then claim again. Three
        // rounds settle any race that is not a storm; past them the key counts as busy, which is safe (409, retry).
        for (let round = 0; round < 3; round++) {
          const [won] = yield* tryClaim(c)
          if (won?.claimToken === c.token) return { _tag: "Claimed" } as const
          const outcome = Idempotency.decideClaim(yield* stored(c), c)
          if (outcome._tag !== "Claimed") return outcome
        }
        return { _tag: "InProgress" } as const
      }).pipe(orDie, Effect.withSpan("IdempotencyRepository.claim"))

    return Idempotency.IdempotencyRepository.of({
      claim,
      complete: Effect.fn("IdempotencyRepository.complete")(function*(organizationId, key, token, response) {
        const rows = yield* sql`UPDATE idempotency_keys
        SET response_status = ${response.status}, response_content_type = ${response.contentType}, response_body = ${response.body}
        WHERE organization_id = ${organizationId} AND idempotency_key = ${key} AND claim_token = ${token}
          AND response_status IS NULL
        RETURNING 1`
        return rows.length === 1
      }, orDie),
      release: Effect.fn("IdempotencyRepository.release")(function*(organizationId, key, token) {
        yield* sql`DELETE FROM idempotency_keys
        WHERE organization_id = ${organizationId} AND idempotency_key = ${key} AND claim_token = ${token}
          AND response_status IS NULL`
      }, orDie),
      // The id as a substring narrows the rows to parse (strpos: no pattern syntax to escape).
      redact: Effect.fn("IdempotencyRepository.redact")(function*(organizationId, redaction) {
        const rows = yield* sql<
          {
            readonly idempotencyKey: string
            readonly responseStatus: number
            readonly responseContentType: string | null
            readonly responseBody: string
          }
        >`
        SELECT idempotency_key, response_status, response_content_type, response_body FROM idempotency_keys
        WHERE organization_id = ${organizationId} AND response_status IS NOT NULL
          AND strpos(response_body, ${redaction.recordId}) > 0
        FOR UPDATE`
        for (const row of rows) {
          const before = { status: row.responseStatus, contentType: row.responseContentType, body: row.responseBody }
          const after = Idempotency.redactStoredResponse(before, redaction)
          if (after === before) continue
          yield* sql`UPDATE idempotency_keys SET response_body = ${after.body}
          WHERE organization_id = ${organizationId} AND idempotency_key = ${row.idempotencyKey}`
        }
      }, orDie),
      purgeExpired: (before, limit) =>
        sql<{ readonly n: number }>`WITH gone AS (
          DELETE FROM idempotency_keys WHERE ctid IN (
            SELECT ctid FROM idempotency_keys WHERE expires_at <= ${before} LIMIT ${limit})
          RETURNING 1)
        SELECT count(*)::int AS n FROM gone`.pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)), orDie)
    })
  })
)
