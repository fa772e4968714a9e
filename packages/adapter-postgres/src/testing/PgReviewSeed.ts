/**
 * TEST SUPPORT ONLY: the PostgreSQL implementation of `ReviewSeed` (see `core/src/reviews/ReviewSeed.ts`).
 * Exported from `@feedback/adapter-postgres/testing`, never from the package root. Every table gets one
 * multi-row `INSERT … SELECT FROM jsonb_to_recordset(…)` per call, then one statement per organization
 * recalculates the review stats of the touched products.
 */
import { ReviewSeed } from "@feedback/core/testing"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { recalculateProductStats } from "./ProductStatsSql.ts"

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const snakeKeys = (record: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [snake(k), v]))

const reviewRecordset = `organization_id uuid, id uuid, site_id uuid, product_id uuid, product_variant_id uuid,
  customer_id uuid, survey_id uuid, title text, body text, original_title text, original_body text,
  redacted_at timestamptz, rating double precision, published boolean, verified_buyer boolean, flagged boolean,
  flags jsonb, moderated_at timestamptz, ip_address text, browser_fingerprint text, ip_country text,
  user_agent text, submit_seconds double precision, metadata jsonb, external_id text, import_job_id uuid,
  import_row integer, created_at timestamptz, updated_at timestamptz`

const columnsOf = (recordset: string) =>
  recordset.split(",").map((c) => c.trim().split(/\s+/)[0]).join(", ")

export const PgReviewSeed = Layer.effect(ReviewSeed, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertAll = (table: string, recordset: string, rows: ReadonlyArray<object>, conflict = "") =>
    rows.length === 0 ? Effect.void : sql.unsafe(
      `INSERT INTO ${table} (${columnsOf(recordset)})
       SELECT ${columnsOf(recordset)} FROM jsonb_to_recordset($1::jsonb) AS x(${recordset}) ${conflict}`,
      [JSON.stringify(rows.map(snakeKeys))]
    ).pipe(Effect.asVoid)

  return ReviewSeed.of({
    insert: (seeds) =>
      sql.withTransaction(Effect.gen(function*() {
        const jobs = new Map<string, object>()
        for (const s of seeds) {
          if (s.importJob !== undefined) jobs.set(s.importJob.job.id, { ...s.importJob.job, organizationId: s.organizationId })
        }
        yield* insertAll(
          "import_jobs",
          "organization_id uuid, id uuid, type text, action text, created_at timestamptz",
          [...jobs.values()],
          "ON CONFLICT DO NOTHING"
        )
        yield* insertAll("reviews", reviewRecordset, seeds.map((s) => ({
          ...s.review,
          organizationId: s.organizationId,
          importJobId: s.importJob?.job.id ?? null,
          importRow: s.importJob?.row ?? null
        })))
        yield* insertAll(
          "review_replies",
          `organization_id uuid, id uuid, review_id uuid, body text, responder_name text, published boolean,
           metadata jsonb, created_at timestamptz, updated_at timestamptz`,
          seeds.flatMap((s) => s.reply === undefined ? [] : [{ ...s.reply, organizationId: s.organizationId }])
        )
        yield* insertAll(
          "review_files",
          `organization_id uuid, id uuid, review_id uuid, file_name text, content_type text, size_bytes bigint,
           url text, position integer`,
          seeds.flatMap((s) =>
            (s.files ?? []).map((f, position) => ({ ...f, organizationId: s.organizationId, reviewId: s.review.id, position }))
          )
        )
        yield* insertAll(
          "review_answers",
          `organization_id uuid, review_id uuid, position integer, question_id uuid, label text, type text,
           step integer, steps integer, low_label text, high_label text, middle_label text, option_labels jsonb`,
          seeds.flatMap((s) =>
            (s.answers ?? []).map((a, position) => ({ ...a, organizationId: s.organizationId, reviewId: s.review.id, position }))
          )
        )
        const productsByOrg = new Map<string, Set<string>>()
        for (const s of seeds) {
          const set = productsByOrg.get(s.organizationId) ?? new Set<string>()
          set.add(s.review.productId)
          productsByOrg.set(s.organizationId, set)
        }
        for (const [organizationId, productIds] of productsByOrg) {
          yield* recalculateProductStats(sql, organizationId, [...productIds])
        }
      })).pipe(Effect.orDie)
  })
}))
