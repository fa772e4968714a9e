/**
 * TEST SUPPORT ONLY: `StoreTestKit` (see `testing/src/StoreTestKit.ts`) over PostgreSQL. Exported from
 * `@feedback/adapter-postgres/testing`, never from the package root. Rows are written with the statements and row
 * mappings the stores use (`PgReviewRows`, `CatalogRows`), set-based (one statement per table and organization),
 * and review stats are recalculated through the store's own `ReviewWriteRepository`.
 */
import { type Kernel, Reviews } from "@feedback/core"
import { type SeedReview, StoreTestKit } from "@feedback/testing"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { customerInput, toCustomer, toProduct } from "../catalog/CatalogRows.ts"
import { toTimestamp } from "../kernel/SqlRows.ts"
import {
  type AnswerDbRow,
  type FileDbRow,
  answersInput,
  filesInput,
  INSERT_ANSWERS,
  INSERT_CUSTOMERS,
  INSERT_FILES,
  INSERT_REPLIES,
  insertReviewsSql,
  replyInput,
  reviewInput,
  toReviewFile,
  toSurveyAnswer
} from "../reviews/PgReviewRows.ts"

type Row = Record<string, any>

const groupBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string): ReadonlyArray<ReadonlyArray<A>> => {
  const groups = new Map<string, Array<A>>()
  for (const item of items) {
    const k = key(item)
    const group = groups.get(k)
    if (group === undefined) groups.set(k, [item])
    else group.push(item)
  }
  return [...groups.values()]
}

export const PgStoreTestKit = Layer.effect(
  StoreTestKit,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const writes = yield* Reviews.ReviewWriteRepository

    /** One `INSERT … FROM jsonb_to_recordset($2)` of organization `$1`'s rows; nothing when there are none. */
    const many = (statement: string, organizationId: string, rows: ReadonlyArray<unknown>) =>
      rows.length === 0
        ? Effect.void
        : sql.unsafe(statement, [organizationId, JSON.stringify(rows)]).pipe(Effect.asVoid)

    const remove = (table: string, organizationId: string, id: string) =>
      sql<{ id: string }>`DELETE FROM ${sql(table)} WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

    const insertReviews = (seeds: ReadonlyArray<SeedReview>) =>
      sql.withTransaction(Effect.gen(function*() {
        for (const group of groupBy(seeds, (s) => `${s.organizationId}/${s.importJob?.job.id ?? ""}`)) {
          const { organizationId, importJob } = group[0]!
          if (importJob !== undefined) {
            const job = importJob.job
            yield* sql`INSERT INTO import_jobs (organization_id, id, type, action, created_at)
              VALUES (${organizationId}, ${job.id}, ${job.type}, ${job.action}, ${job.createdAt})
              ON CONFLICT DO NOTHING`
          }
          yield* sql.unsafe(insertReviewsSql(undefined), [
            organizationId,
            JSON.stringify(group.map((s) => reviewInput(s.review, s.importJob?.row ?? null))),
            importJob?.job.id ?? null
          ])
        }
        for (const group of groupBy(seeds, (s) => s.organizationId)) {
          const organizationId = group[0]!.organizationId
          yield* many(
            INSERT_REPLIES,
            organizationId,
            group.flatMap((s) => s.reply === undefined ? [] : [replyInput(s.reply)])
          )
          yield* many(INSERT_FILES, organizationId, group.flatMap((s) => filesInput(s.review.id, s.files ?? [])))
          yield* many(INSERT_ANSWERS, organizationId, group.flatMap((s) => answersInput(s.review.id, s.answers ?? [])))
          yield* writes.recalculateProductStats(organizationId, [...new Set(group.map((s) => s.review.productId))])
        }
      })).pipe(Effect.orDie)

    return StoreTestKit.of({
      insertSite: (organizationId, s) =>
        sql`INSERT INTO sites (organization_id, id, name, domain, created_at, updated_at)
          VALUES (${organizationId}, ${s.id}, ${s.name}, ${s.domain}, ${s.createdAt}, ${s.updatedAt})`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      insertProduct: (organizationId, p) =>
        sql`INSERT INTO products (organization_id, id, slug, title, description, image_url, url, external_id, metadata,
            notes, review_count, published_review_count, published_rating_sum, average_rating, published_one_star,
            published_two_stars, published_three_stars, published_four_stars, published_five_stars, created_at, updated_at)
          VALUES (${organizationId}, ${p.id}, ${p.slug}, ${p.title}, ${p.description}, ${p.imageUrl}, ${p.url},
            ${p.externalId}, ${
          JSON.stringify(p.metadata)
        }::jsonb, ${p.notes}, ${p.reviewCount}, ${p.publishedReviewCount},
            ${(p.averageRating ?? 0) * p.publishedReviewCount}, ${p.averageRating}, ${p.ratingHistogram["1"]},
            ${p.ratingHistogram["2"]}, ${p.ratingHistogram["3"]}, ${p.ratingHistogram["4"]}, ${p.ratingHistogram["5"]},
            ${p.createdAt}, ${p.updatedAt})`.pipe(Effect.asVoid, Effect.orDie),
      insertCustomer: (organizationId, c) =>
        many(INSERT_CUSTOMERS, organizationId, [customerInput(c)]).pipe(Effect.orDie),
      insertReviews,
      deleteSite: (organizationId, id) => remove("sites", organizationId, id).pipe(Effect.orDie),
      deleteProduct: (organizationId, id) => remove("products", organizationId, id).pipe(Effect.orDie),
      deleteReview: (organizationId, id) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ productId: Kernel.ProductId }>`SELECT product_id FROM reviews
            WHERE organization_id = ${organizationId} AND id = ${id}`
          const productId = rows[0]?.productId
          if (productId === undefined) return false
          for (const table of ["review_replies", "review_files", "review_answers"]) {
            yield* sql`DELETE FROM ${sql(table)} WHERE organization_id = ${organizationId} AND review_id = ${id}`
          }
          yield* remove("reviews", organizationId, id)
          yield* writes.recalculateProductStats(organizationId, [productId])
          return true
        })).pipe(Effect.orDie),
      product: (organizationId, id) =>
        sql<Row>`SELECT * FROM products WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toProduct)),
          Effect.orDie
        ),
      customers: (organizationId) =>
        sql<Row>`SELECT * FROM customers WHERE organization_id = ${organizationId} ORDER BY email COLLATE "C"`.pipe(
          Effect.map((rows) => rows.map(toCustomer)),
          Effect.orDie
        ),
      reviewIds: (organizationId) =>
        sql<{ id: Kernel.ReviewId }>`SELECT id FROM reviews WHERE organization_id = ${organizationId}`.pipe(
          Effect.map((rows) => rows.map((r) => r.id).sort()),
          Effect.orDie
        ),
      files: (organizationId, reviewId) =>
        sql<FileDbRow>`SELECT id, file_name, content_type, size_bytes, url FROM review_files
        WHERE organization_id = ${organizationId} AND review_id = ${reviewId} ORDER BY position`.pipe(
          Effect.map((rows) => rows.map(toReviewFile)),
          Effect.orDie
        ),
      answers: (organizationId, reviewId) =>
        sql<AnswerDbRow>`SELECT * FROM review_answers
        WHERE organization_id = ${organizationId} AND review_id = ${reviewId} ORDER BY position`.pipe(
          Effect.map((rows) => rows.map(toSurveyAnswer)),
          Effect.orDie
        ),
      importJob: (organizationId, reviewId) =>
        sql<{ id: string; type: string; action: string; row: number; createdAt: Date }>`
        SELECT j.id, j.type, j.action, r.import_row AS row, j.created_at FROM reviews r
        JOIN import_jobs j ON j.organization_id = r.organization_id AND j.id = r.import_job_id
        WHERE r.organization_id = ${organizationId} AND r.id = ${reviewId}`.pipe(
          Effect.map((rows) =>
            Option.map(Option.fromUndefinedOr(rows[0]), (j): Reviews.ImportJobRef => ({
              id: j.id as Reviews.ImportJobRef["id"],
              type: j.type,
              action: j.action,
              row: Number(j.row),
              createdAt: toTimestamp(j.createdAt)
            }))
          ),
          Effect.orDie
        ),
      deletion: (organizationId, reviewId) =>
        sql<{ reviewId: string; reason: string; note: string | null; actorKeyId: string; deletedAt: Date }>`
        SELECT review_id, reason, note, actor_key_id, deleted_at FROM review_deletions
        WHERE organization_id = ${organizationId} AND review_id = ${reviewId}`.pipe(
          Effect.map((rows) =>
            Option.map(Option.fromUndefinedOr(rows[0]), (d): Reviews.ReviewDeletionRecord => ({
              reviewId: d.reviewId as Kernel.ReviewId,
              reason: d.reason as Reviews.ReviewDeletionRecord["reason"],
              note: d.note,
              actorKeyId: d.actorKeyId,
              deletedAt: toTimestamp(d.deletedAt)
            }))
          ),
          Effect.orDie
        ),
      tablesContaining: (needle) =>
        Effect.gen(function*() {
          const tables = yield* sql<{ tableName: string }>`SELECT table_name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
          const found: Array<string> = []
          for (const { tableName } of tables) {
            const rows = yield* sql<{ hit: boolean }>`SELECT EXISTS (
              SELECT 1 FROM ${sql(tableName)} x WHERE strpos(x::text, ${needle}) > 0) AS hit`
            if (rows[0]?.hit === true) found.push(tableName)
          }
          return found
        }).pipe(Effect.orDie)
    })
  })
)
