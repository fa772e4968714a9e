/**
 * The review write side over PostgreSQL.
 *
 * Set-based: bulk moderation is one UPDATE … RETURNING inside a statement that also inserts the `review.updated`
 * events (INSERT … SELECT into `domain_events`), so 100,000 matching reviews never travel to Node; an import slice is
 * ONE statement whatever its size (`IMPORT_SLICE_SQL`: the reviews travel as one array parameter per column,
 * expanded with `unnest`, the other rows as JSON parameters, expanded with `jsonb_to_recordset`), its `review.created` events, files, answers and replies inserted with the reviews.
 * Event data is built by `reviewJsonJoin` in SQL and must equal what the read side answers (conformance-tested).
 *
 * Concurrency (READ COMMITTED): a single review is locked with FOR UPDATE before it is read for a change; bulk
 * moderation locks the matching rows in id order; product stats are recomputed after locking the products in id
 * order in a statement of their own, so the recomputation sees every change committed before it got the lock (two
 * transactions changing reviews of one product cannot leave stale stats); imports of one organization are
 * serialized with a transaction-scoped advisory lock (the externalId check cannot race).
 */
import { type Kernel, Reviews } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { histogramColumns, starSql } from "../catalog/CatalogRows.ts"
import { numberArrayLiteral } from "../kernel/ArrayLiterals.ts"
import { reviewMatchFrom, reviewMatchWhere } from "./PgReviewMatch.ts"
import {
  answersInput,
  filesInput,
  IMPORT_LOCK_CLASS,
  IMPORT_SLICE_SQL,
  INSERT_CUSTOMERS,
  INSERT_REPLIES,
  insertReviewsSql,
  json,
  type ReplyDbRow,
  replyInput,
  REVIEW_COLUMNS,
  type ReviewDbRow,
  reviewColumnsInput,
  reviewInput,
  reviewJsonColumns,
  reviewJsonJoin,
  toReply,
  toReview
} from "./PgReviewRows.ts"
import { customerInput } from "../catalog/CatalogRows.ts"
import { eventIdSeed, eventIdSql } from "../kernel/EventIds.ts"
import { orDie } from "../kernel/SqlErrors.ts"

// ---------------------------------------------------------------------------------------------------------------

// Bulk moderation's event data takes the timestamps it sets from `$4` (their canonical text), and its UPDATE returns
// only what that data and the statement read, not the whole row: it holds one returned row per matched review.
const BULK_EVENT_DATA = { updatedAt: "$4::text", moderatedAt: "$4::text" }
const BULK_RETURNING = ["organization_id", ...reviewJsonColumns(BULK_EVENT_DATA)].map((c) => `r.${c}`).join(", ")

/**
 * The rows of `table` in organization `$1` whose `column` is one of the keys in the JSON array `keys`, each found by
 * an index probe of its own (a lateral the planner cannot turn into a join). An organization's rows are often newer
 * than the table's statistics, which then estimate a handful, and a join read every row of the organization instead,
 * per batch of an import job, a cost growing with the job (docs/DECISIONS.md §46).
 */
const byKeys = (
  table: string,
  columns: string,
  column: string,
  keys: string,
  options: { readonly unique?: boolean; readonly lock?: boolean } = {}
) =>
  `SELECT m.* FROM jsonb_array_elements_text(${keys}::jsonb) AS k (v) CROSS JOIN LATERAL (
     SELECT ${columns} FROM ${table} WHERE organization_id = $1 AND ${column} = k.v
     ${options.unique === false ? "OFFSET 0" : "LIMIT 1"}${options.lock === true ? " FOR KEY SHARE" : ""}) m`

const makeRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const lockReview = (organizationId: Kernel.OrganizationId, id: Kernel.ReviewId) =>
    sql.unsafe<ReviewDbRow>(
      `SELECT ${REVIEW_COLUMNS} FROM reviews WHERE organization_id = $1 AND id = $2 FOR UPDATE`,
      [organizationId, id]
    ).pipe(Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toReview)), orDie)

  return Reviews.ReviewWriteRepository.of({
    lockReview,
    updateReview: (organizationId, r) =>
      sql`UPDATE reviews SET title = ${r.title}, body = ${r.body}, original_title = ${r.originalTitle},
            original_body = ${r.originalBody}, redacted_at = ${r.redactedAt}, published = ${r.published},
            moderated_at = ${r.moderatedAt}, metadata = ${
        JSON.stringify(r.metadata)
      }::jsonb, updated_at = ${r.updatedAt}
          WHERE organization_id = ${organizationId} AND id = ${r.id}`.pipe(Effect.asVoid, orDie),
    deleteReview: (organizationId, d) =>
      Effect.gen(function*() {
        // Files, answers and the reply go with the review (ON DELETE CASCADE).
        yield* sql`DELETE FROM reviews WHERE organization_id = ${organizationId} AND id = ${d.reviewId}`
        yield* sql`INSERT INTO review_deletions (organization_id, review_id, reason, note, actor_key_id, deleted_at)
          VALUES (${organizationId}, ${d.reviewId}, ${d.reason}, ${d.note}, ${d.actorKeyId}, ${d.deletedAt})`
      }).pipe(orDie),
    recalculateProductStats: (organizationId, productIds) =>
      productIds.length === 0 ? Effect.void : Effect.gen(function*() {
        const ids = JSON.stringify([...new Set(productIds)])
        // Lock first, in a statement of its own: the recomputation below then reads a snapshot taken after every
        // other writer of these products' stats committed.
        yield* sql.unsafe(
          `SELECT id FROM products WHERE organization_id = $1 AND id IN (SELECT value::uuid FROM jsonb_array_elements_text($2::jsonb))
           ORDER BY id FOR NO KEY UPDATE`,
          [organizationId, ids]
        )
        yield* sql.unsafe(
          `WITH ids AS (SELECT DISTINCT value::uuid AS id FROM jsonb_array_elements_text($2::jsonb)),
           stats AS (
             SELECT ids.id, count(r.id)::integer AS n, (count(r.id) FILTER (WHERE r.published))::integer AS pn,
               coalesce(sum(r.rating) FILTER (WHERE r.published), 0) AS total, avg(r.rating) FILTER (WHERE r.published) AS average,
               ${
            [1, 2, 3, 4, 5].map((n) =>
              `(count(r.id) FILTER (WHERE r.published AND ${starSql("r.rating")} = ${n}))::integer AS h${n}`
            ).join(", ")
          }
             FROM ids LEFT JOIN reviews r ON r.organization_id = $1 AND r.product_id = ids.id
             GROUP BY ids.id)
           UPDATE products p SET review_count = stats.n, published_review_count = stats.pn,
             published_rating_sum = stats.total, average_rating = stats.average,
             ${histogramColumns.map((c, i) => `${c} = stats.h${i + 1}`).join(", ")}
           FROM stats WHERE p.organization_id = $1 AND p.id = stats.id`,
          [organizationId, ids]
        )
      }).pipe(orDie),
    // One statement: the products are locked in id order first (as the recomputation locks them, so the two never
    // deadlock), then each gets its delta on the row as last committed; the average is the new sum over the new count.
    addProductStats: (organizationId, deltas) =>
      deltas.length === 0 ? Effect.void : sql.unsafe(
        `WITH d AS (
           SELECT * FROM unnest($2::uuid[], $3::integer[], $4::integer[], $5::double precision[], $6::integer[], $7::integer[],
             $8::integer[], $9::integer[], $10::integer[]) AS d (id, n, pn, total, h1, h2, h3, h4, h5)),
         locked AS MATERIALIZED (
           SELECT p.id FROM products p WHERE p.organization_id = $1 AND p.id IN (SELECT d.id FROM d)
           ORDER BY p.id FOR NO KEY UPDATE)
         UPDATE products p SET review_count = p.review_count + d.n,
           published_review_count = p.published_review_count + d.pn,
           published_rating_sum = p.published_rating_sum + d.total,
           average_rating = CASE WHEN p.published_review_count + d.pn = 0 THEN NULL
             ELSE (p.published_rating_sum + d.total) / (p.published_review_count + d.pn) END,
           ${histogramColumns.map((c, i) => `${c} = p.${c} + d.h${i + 1}`).join(", ")}
         FROM locked l JOIN d ON d.id = l.id
         WHERE p.organization_id = $1 AND p.id = l.id`,
        [
          organizationId,
          deltas.map((d) => d.productId),
          deltas.map((d) => d.reviews),
          deltas.map((d) => d.published),
          // An array literal: the driver infers an array's type from its elements, and whole and fractional sums differ.
          numberArrayLiteral(deltas.map((d) => d.publishedRatingSum)),
          ...[0, 1, 2, 3, 4].map((i) => deltas.map((d) => d.publishedByStar[i]!))
        ]
      ).pipe(Effect.asVoid, orDie),
    bulkSetPublished: (organizationId, match, published, at) =>
      Effect.gen(function*() {
        // $3 is the moment as timestamptz, $4 the same canonical Timestamp as the event data's text, $5 and $6 the
        // seed of the events' ids.
        const where = reviewMatchWhere(match.filter, match.search, 6)
        const rows = yield* sql.unsafe<{ count: number; changed: unknown }>(
          `WITH matched AS (
             SELECT r.id, r.published AS was_published
             FROM ${reviewMatchFrom(match.filter)}
             WHERE r.organization_id = $1 AND ${where.text}
             ORDER BY r.id
             FOR UPDATE OF r
           ),
           updated AS (
             UPDATE reviews r SET published = $2::boolean, moderated_at = $3::timestamptz, updated_at = $3::timestamptz
             FROM matched m WHERE r.organization_id = $1 AND r.id = m.id
             RETURNING ${BULK_RETURNING}, m.was_published IS DISTINCT FROM r.published AS changed
           ),
           announced AS (
             INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
             SELECT u.organization_id, ${
            eventIdSql("$5", "$6")
          }, 'review.updated', to_jsonb(review_json), $3::timestamptz
             FROM updated u ${reviewJsonJoin("u", BULK_EVENT_DATA)} WHERE u.changed
           )
           SELECT (SELECT count(*)::integer FROM updated) AS count,
             (SELECT COALESCE(jsonb_agg(d.product_id), '[]'::jsonb)
              FROM (SELECT DISTINCT u.product_id FROM updated u WHERE u.changed) d) AS changed`,
          [organizationId, published, at, at, ...eventIdSeed(), ...where.params]
        )
        const row = rows[0]!
        return { count: Number(row.count), changedProductIds: json<Array<Kernel.ProductId>>(row.changed) }
      }).pipe(orDie),
    resolveImportReferences: (organizationId, refs) =>
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${IMPORT_LOCK_CLASS}, hashtext(${organizationId}))`
        // FOR KEY SHARE keeps the resolved sites, products and customers from being deleted before the reviews
        // referring to them are inserted, without blocking ordinary updates of them. One statement after the lock
        // (not before: its snapshot must see every import committed before the lock was granted), one round trip
        // and one row back instead of three statements and a row per customer.
        const rows = yield* sql.unsafe<{ sites: unknown; products: unknown; customers: unknown; imported: unknown }>(
          `WITH sites AS (
             SELECT s.id FROM (SELECT DISTINCT value::uuid AS id FROM jsonb_array_elements_text($2::jsonb) ORDER BY 1) k
             CROSS JOIN LATERAL (SELECT s.id FROM sites s WHERE s.organization_id = $1 AND s.id = k.id FOR KEY SHARE) s),
           products AS (
             SELECT p.id, p.slug, p.external_id, p.url
             FROM (SELECT DISTINCT i.id FROM (${byKeys("products", "id", "slug", "$3")} UNION ALL ${
            byKeys("products", "id", "external_id", "$4")
          }
                   UNION ALL ${byKeys("products", "id", "url", "$5", { unique: false })}) i ORDER BY i.id) k
             CROSS JOIN LATERAL (
               SELECT p.id, p.slug, p.external_id, p.url FROM products p WHERE p.organization_id = $1 AND p.id = k.id FOR KEY SHARE) p),
           customers AS (${byKeys("customers", "id, email", "email", "$6", { lock: true })}),
           imported AS (${byKeys("reviews", "external_id", "external_id", "$7")})
           SELECT (SELECT COALESCE(json_agg(id), '[]') FROM sites) AS sites,
             (SELECT COALESCE(json_agg(json_build_array(id, slug, external_id, url)), '[]') FROM products) AS products,
             (SELECT COALESCE(json_agg(json_build_array(id, email)), '[]') FROM customers) AS customers,
             (SELECT COALESCE(json_agg(external_id), '[]') FROM imported) AS imported`,
          [
            organizationId,
            JSON.stringify(refs.siteIds),
            JSON.stringify(refs.productSlugs),
            JSON.stringify(refs.productExternalIds),
            JSON.stringify(refs.productUrls),
            JSON.stringify(refs.customerEmails),
            JSON.stringify(refs.reviewExternalIds)
          ]
        )
        const sites = json<Array<string>>(rows[0]!.sites)
        const products = json<Array<[id: string, slug: string, externalId: string | null, url: string | null]>>(
          rows[0]!.products
        )
          .map(([id, slug, externalId, url]) => ({ id, slug, externalId, url }))
        const customers = json<Array<[id: string, email: string]>>(rows[0]!.customers)
        const imported = json<Array<string>>(rows[0]!.imported)
        const slugs = new Set(refs.productSlugs)
        const externalIds = new Set(refs.productExternalIds)
        const urls = new Set(refs.productUrls)
        const productsBySlug = new Map<string, Kernel.ProductId>()
        const productsByExternalId = new Map<string, Kernel.ProductId>()
        const productsByUrl = new Map<string, Array<Kernel.ProductId>>()
        for (const p of products) {
          const id = p.id as Kernel.ProductId
          if (slugs.has(p.slug)) productsBySlug.set(p.slug, id)
          if (p.externalId !== null && externalIds.has(p.externalId)) productsByExternalId.set(p.externalId, id)
          if (p.url !== null && urls.has(p.url)) productsByUrl.set(p.url, [...(productsByUrl.get(p.url) ?? []), id])
        }
        return {
          siteIds: new Set(sites),
          productsBySlug,
          productsByExternalId,
          productsByUrl,
          customersByEmail: new Map(customers.map(([id, email]) => [email, id as Kernel.CustomerId])),
          importedExternalIds: new Set(imported)
        }
      }).pipe(orDie),
    ensureCustomers: (organizationId, customers) =>
      Effect.gen(function*() {
        if (customers.length === 0) return new Map<string, Kernel.CustomerId>()
        yield* sql.unsafe(`${INSERT_CUSTOMERS} ON CONFLICT (organization_id, email) DO NOTHING`, [
          organizationId,
          JSON.stringify(customers.map(customerInput))
        ])
        const rows = yield* sql.unsafe<{ id: string; email: string }>(
          byKeys("customers", "id, email", "email", "$2", { lock: true }),
          [organizationId, JSON.stringify(customers.map((c) => c.email))]
        )
        return new Map(rows.map((r) => [r.email, r.id as Kernel.CustomerId]))
      }).pipe(orDie),
    insertImport: (organizationId, job, reviews, at) => {
      // Encoded when called, not when run: the import calls this while the previous slice is being written, so
      // the encoding overlaps the database's work instead of delaying the next statement (docs/DECISIONS.md §32).
      const columns = reviewColumnsInput(reviews.map((r) => reviewInput(r.review, r.importRow)))
      const params = [
        organizationId,
        columns[0],
        job.id,
        at,
        job.type,
        job.action,
        job.createdAt,
        JSON.stringify(reviews.flatMap((r) => filesInput(r.review.id, r.files))),
        JSON.stringify(reviews.flatMap((r) => answersInput(r.review.id, r.answers))),
        JSON.stringify(reviews.flatMap((r) => r.reply === null ? [] : [replyInput(r.reply)])),
        at,
        ...columns.slice(1),
        ...eventIdSeed()
      ]
      return sql.unsafe(IMPORT_SLICE_SQL, params).pipe(Effect.asVoid, orDie)
    },
    insertReviews: (organizationId, reviews) =>
      reviews.length === 0
        ? Effect.void
        : sql.unsafe(insertReviewsSql(undefined), [
          organizationId,
          JSON.stringify(reviews.map((r) => reviewInput(r, null))),
          null
        ]).pipe(Effect.asVoid, orDie),
    findReply: (organizationId, reviewId) =>
      sql<
        ReplyDbRow
      >`SELECT * FROM review_replies WHERE organization_id = ${organizationId} AND review_id = ${reviewId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toReply)),
        orDie
      ),
    insertReply: (organizationId, reply) =>
      sql.unsafe<{ id: string }>(
        `${INSERT_REPLIES} ON CONFLICT (organization_id, review_id) DO NOTHING RETURNING id`,
        [organizationId, JSON.stringify([replyInput(reply)])]
      ).pipe(Effect.map((rows) => rows.length > 0), orDie),
    updateReply: (organizationId, r) =>
      sql`UPDATE review_replies SET body = ${r.body}, responder_name = ${r.responderName}, published = ${r.published},
            metadata = ${JSON.stringify(r.metadata)}::jsonb, updated_at = ${r.updatedAt}
          WHERE organization_id = ${organizationId} AND review_id = ${r.reviewId}`.pipe(Effect.asVoid, orDie),
    deleteReply: (organizationId, reviewId) =>
      sql<ReplyDbRow>`DELETE FROM review_replies WHERE organization_id = ${organizationId} AND review_id = ${reviewId}
          RETURNING *`.pipe(Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toReply)), orDie),
    // Autovacuum analyzes a table once a tenth of it changed: a new organization's import into a large shared table
    // can wait for that indefinitely, its rows estimated at a handful, and its lists planned as a bitmap scan
    // sorting all its reviews on every page instead of an index walk. The sample is bounded, so this costs the
    // same whatever the table's size (docs/DECISIONS.md §39).
    bulkLoaded: (_organizationId, rows) =>
      rows < BULK_LOAD_ANALYZE_ROWS
        ? Effect.void
        : sql.unsafe(`ANALYZE reviews (${LIST_PLANNED_COLUMNS})`).pipe(
          Effect.asVoid,
          Effect.catchCause((cause) =>
            Effect.logWarning(
              "reviews: ANALYZE after a bulk load failed; lists are planned on older statistics until autovacuum runs",
              cause
            )
          )
        )
  })
})

/** Reviews a bulk load writes before the planner's statistics of `reviews` are refreshed after it. */
const BULK_LOAD_ANALYZE_ROWS = 1_000

/** The columns lists filter and sort reviews on (their indexes' columns). */
const LIST_PLANNED_COLUMNS = "organization_id, created_at, id, product_id, customer_id, published, rating, moderated_at"

export const PgReviewWriteRepository = Layer.effect(Reviews.ReviewWriteRepository, makeRepository)
