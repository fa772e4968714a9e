/**
 * `ReviewFixtures` over PostgreSQL: seeding and read-back for the review write conformance suite (test-only, merged
 * into the layer `PgStore.conformance.test.ts` passes; never part of a production layer).
 */
import {
  type Customer,
  type CustomerId,
  type ImportJobRef,
  type OrganizationId,
  type Product,
  type ProductId,
  type ReviewDeletionRecord,
  type ReviewFile,
  type ReviewId,
  type SurveyAnswer
} from "@feedback/core"
import { ReviewFixtures } from "@feedback/core/testing"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import {
  answersInput,
  customerInput,
  filesInput,
  INSERT_ANSWERS,
  INSERT_CUSTOMERS,
  INSERT_FILES,
  INSERT_REPLIES,
  insertReviewsSql,
  json,
  replyInput,
  reviewInput
} from "../src/reviews/PgReviewRows.ts"
import { toNullableTimestamp, toTimestamp } from "../src/kernel/SqlRows.ts"

// ---------------------------------------------------------------------------------------------------------------

interface ProductDbRow {
  readonly id: string
  readonly slug: string
  readonly title: string
  readonly description: string | null
  readonly imageUrl: string | null
  readonly url: string | null
  readonly externalId: string | null
  readonly metadata: unknown
  readonly notes: string | null
  readonly reviewCount: number
  readonly publishedReviewCount: number
  readonly averageRating: number | string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** Seeding and inspection for the conformance suite (see `ReviewFixtures`). */
export const PgReviewFixtures = Layer.effect(ReviewFixtures, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const many = (statement: string, organizationId: OrganizationId, rows: ReadonlyArray<unknown>) =>
    rows.length === 0 ? Effect.void : sql.unsafe(statement, [organizationId, JSON.stringify(rows)]).pipe(Effect.asVoid)
  return ReviewFixtures.of({
    insertSite: (organizationId, s) =>
      sql`INSERT INTO sites (organization_id, id, name, domain, created_at, updated_at)
        VALUES (${organizationId}, ${s.id}, ${s.name}, ${s.domain}, ${s.createdAt}, ${s.updatedAt})`.pipe(Effect.asVoid, Effect.orDie),
    insertProduct: (organizationId, p) =>
      sql`INSERT INTO products (organization_id, id, slug, title, description, image_url, url, external_id, metadata, notes,
          review_count, published_review_count, average_rating, created_at, updated_at)
        VALUES (${organizationId}, ${p.id}, ${p.slug}, ${p.title}, ${p.description}, ${p.imageUrl}, ${p.url}, ${p.externalId},
          ${JSON.stringify(p.metadata)}::jsonb, ${p.notes}, ${p.reviewCount}, ${p.publishedReviewCount}, ${p.averageRating},
          ${p.createdAt}, ${p.updatedAt})`.pipe(Effect.asVoid, Effect.orDie),
    insertCustomer: (organizationId, c) => many(INSERT_CUSTOMERS, organizationId, [customerInput(c)]).pipe(Effect.orDie),
    insertReview: (organizationId, review, extras = {}) =>
      Effect.gen(function*() {
        yield* sql.unsafe(insertReviewsSql(undefined), [organizationId, JSON.stringify([reviewInput(review, null)]), null])
        yield* many(INSERT_FILES, organizationId, filesInput(review.id, extras.files ?? []))
        yield* many(INSERT_ANSWERS, organizationId, answersInput(review.id, extras.answers ?? []))
        yield* many(INSERT_REPLIES, organizationId, extras.reply === undefined ? [] : [replyInput(extras.reply)])
      }).pipe(Effect.orDie),
    product: (organizationId, id) =>
      sql<ProductDbRow>`SELECT * FROM products WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromUndefinedOr(rows[0]), (p): Product => ({
            id: p.id as ProductId,
            slug: p.slug,
            title: p.title,
            description: p.description,
            imageUrl: p.imageUrl,
            url: p.url,
            externalId: p.externalId,
            metadata: json(p.metadata),
            notes: p.notes,
            reviewCount: Number(p.reviewCount),
            publishedReviewCount: Number(p.publishedReviewCount),
            averageRating: p.averageRating === null ? null : Number(p.averageRating),
            createdAt: toTimestamp(p.createdAt),
            updatedAt: toTimestamp(p.updatedAt)
          }))
        ),
        Effect.orDie
      ),
    customers: (organizationId) =>
      sql<{ id: string; email: string } & Record<string, unknown>>`SELECT * FROM customers WHERE organization_id = ${organizationId}
        ORDER BY email COLLATE "C"`.pipe(
        Effect.map((rows) =>
          rows.map((c): Customer => ({
            id: c.id as CustomerId,
            email: c.email,
            phone: c["phone"] as string | null,
            firstName: c["firstName"] as string | null,
            lastName: c["lastName"] as string | null,
            country: c["country"] as string | null,
            birthday: c["birthday"] as string | null,
            metadata: json(c["metadata"]),
            notes: c["notes"] as string | null,
            emailOptOut: c["emailOptOut"] as boolean,
            emailOptOutAt: toNullableTimestamp(c["emailOptOutAt"] as Date | null),
            emailOptOutSource: c["emailOptOutSource"] as string | null,
            createdAt: toTimestamp(c["createdAt"] as Date),
            updatedAt: toTimestamp(c["updatedAt"] as Date)
          }))
        ),
        Effect.orDie
      ),
    reviewIds: (organizationId) =>
      sql<{ id: string }>`SELECT id FROM reviews WHERE organization_id = ${organizationId}`.pipe(
        Effect.map((rows) => rows.map((r) => r.id as ReviewId).sort()),
        Effect.orDie
      ),
    files: (organizationId, reviewId) =>
      sql<{ id: string; fileName: string; contentType: string; sizeBytes: number | string | bigint; url: string }>`
        SELECT id, file_name, content_type, size_bytes, url FROM review_files
        WHERE organization_id = ${organizationId} AND review_id = ${reviewId} ORDER BY position`.pipe(
        Effect.map((rows) =>
          rows.map((f): ReviewFile => ({
            id: f.id as ReviewFile["id"],
            fileName: f.fileName,
            contentType: f.contentType,
            sizeBytes: Number(f.sizeBytes),
            url: f.url
          }))
        ),
        Effect.orDie
      ),
    answers: (organizationId, reviewId) =>
      sql<Record<string, unknown>>`SELECT * FROM review_answers
        WHERE organization_id = ${organizationId} AND review_id = ${reviewId} ORDER BY position`.pipe(
        Effect.map((rows) =>
          rows.map((a): SurveyAnswer => ({
            questionId: a["questionId"] as SurveyAnswer["questionId"],
            label: a["label"] as string,
            type: a["type"] as string,
            step: Number(a["step"]),
            steps: Number(a["steps"]),
            lowLabel: a["lowLabel"] as string | null,
            highLabel: a["highLabel"] as string | null,
            middleLabel: a["middleLabel"] as string | null,
            optionLabels: json(a["optionLabels"])
          }))
        ),
        Effect.orDie
      ),
    importJob: (organizationId, reviewId) =>
      sql<{ id: string; type: string; action: string; row: number; createdAt: Date }>`
        SELECT j.id, j.type, j.action, r.import_row AS row, j.created_at FROM reviews r
        JOIN import_jobs j ON j.organization_id = r.organization_id AND j.id = r.import_job_id
        WHERE r.organization_id = ${organizationId} AND r.id = ${reviewId}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromUndefinedOr(rows[0]), (j): ImportJobRef => ({
            id: j.id as ImportJobRef["id"],
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
          Option.map(Option.fromUndefinedOr(rows[0]), (d): ReviewDeletionRecord => ({
            reviewId: d.reviewId as ReviewId,
            reason: d.reason as ReviewDeletionRecord["reason"],
            note: d.note,
            actorKeyId: d.actorKeyId,
            deletedAt: toTimestamp(d.deletedAt)
          }))
        ),
        Effect.orDie
      )
  })
}))
