/**
 * The review write side over PostgreSQL.
 *
 * Set-based: bulk moderation is one UPDATE … RETURNING inside a statement that also inserts the `review.updated`
 * events (INSERT … SELECT into `domain_events`), so 100,000 matching reviews never travel to Node; an import is a
 * fixed number of statements whatever its size (rows travel as one JSON parameter, expanded with
 * `jsonb_to_recordset`), its `review.created` events inserted by the same statement that inserts the reviews.
 * Event data is built by `reviewJsonJoin` in SQL and must equal what `findReview` answers (conformance-tested).
 *
 * Concurrency (READ COMMITTED): a single review is locked with FOR UPDATE before it is read for a change; bulk
 * moderation locks the matching rows in id order; product stats are recomputed after locking the products in id
 * order in a statement of their own, so the recomputation sees every change committed before it got the lock (two
 * transactions changing reviews of one product cannot leave stale stats); imports of one organization are
 * serialized with a transaction-scoped advisory lock (the externalId check cannot race).
 */
import {
  type Customer,
  type CustomerId,
  type FilterAst,
  type ImportJobRef,
  type OrganizationId,
  type Product,
  type ProductId,
  type ReviewDeletionRecord,
  type ReviewFile,
  type ReviewId,
  type ReviewRecord,
  type ReviewReply,
  ReviewWriteRepository,
  type SurveyAnswer
} from "@feedback/core"
import { ReviewFixtures } from "@feedback/core/testing"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { columnsFrom, compileFilter, compileSearch, type ListSqlMapping } from "./FilterSql.ts"
import { toNullableTimestamp, toTimestamp } from "./SqlRows.ts"

// ---------------------------------------------------------------------------------------------------------------
// Mapping

/** The read side's filter and search mapping over `reviews r`, `products p`, `customers c` (DECISIONS §4). */
export const reviewMatchMapping: ListSqlMapping = {
  columns: columnsFrom({
    id: "r.id",
    rating: "r.rating",
    published: "r.published",
    flagged: "r.flagged",
    moderatedAt: "r.moderated_at",
    surveyId: "r.survey_id",
    ipAddress: "r.ip_address",
    browserFingerprint: "r.browser_fingerprint",
    metadata: "r.metadata",
    createdAt: "r.created_at",
    "product.id": "p.id",
    "product.slug": "p.slug",
    "product.title": "p.title",
    "product.metadata": "p.metadata",
    "product.createdAt": "p.created_at",
    "customer.id": "c.id",
    "customer.email": "c.email",
    "customer.firstName": "c.first_name",
    "customer.lastName": "c.last_name",
    "customer.metadata": "c.metadata",
    "customer.emailOptOut": "c.email_opt_out",
    "customer.emailOptOutSource": "c.email_opt_out_source",
    "customer.createdAt": "c.created_at"
  }),
  id: "r.id",
  search: ["r.title", "r.body", "c.email", "c.first_name", "c.last_name", "p.title"]
}

/** A timestamptz as the API writes it: UTC, milliseconds, trailing Z (the canonical Timestamp). */
const tsJson = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * The review in the API's shape without extras, as jsonb: `FROM <rows> a ${reviewJsonJoin("a")}` makes
 * `to_jsonb(review_json)` that review. A row of aliased columns turned into jsonb at once is markedly cheaper than
 * `jsonb_build_object` with 52 arguments (about 40% on 100,000 rows), which matters for bulk events.
 */
export const reviewJsonJoin = (a: string) =>
  `CROSS JOIN LATERAL (SELECT ${a}.id, ${a}.site_id AS "siteId", ${a}.product_id AS "productId",
    ${a}.product_variant_id AS "productVariantId", ${a}.customer_id AS "customerId", ${a}.survey_id AS "surveyId",
    ${a}.title, ${a}.body, ${a}.original_title AS "originalTitle", ${a}.original_body AS "originalBody",
    ${tsJson(`${a}.redacted_at`)} AS "redactedAt", ${a}.rating, ${a}.published, ${a}.verified_buyer AS "verifiedBuyer",
    ${a}.flagged, ${a}.flags, ${tsJson(`${a}.moderated_at`)} AS "moderatedAt", ${a}.ip_address AS "ipAddress",
    ${a}.browser_fingerprint AS "browserFingerprint", ${a}.ip_country AS "ipCountry", ${a}.user_agent AS "userAgent",
    ${a}.submit_seconds AS "submitSeconds", ${a}.metadata, ${a}.external_id AS "externalId",
    ${tsJson(`${a}.created_at`)} AS "createdAt", ${tsJson(`${a}.updated_at`)} AS "updatedAt") AS review_json`

const json = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A

interface ReviewDbRow {
  readonly id: string
  readonly siteId: string | null
  readonly productId: string
  readonly productVariantId: string | null
  readonly customerId: string | null
  readonly surveyId: string | null
  readonly title: string | null
  readonly body: string | null
  readonly originalTitle: string | null
  readonly originalBody: string | null
  readonly redactedAt: Date | null
  readonly rating: number | string
  readonly published: boolean
  readonly verifiedBuyer: boolean
  readonly flagged: boolean
  readonly flags: unknown
  readonly moderatedAt: Date | null
  readonly ipAddress: string | null
  readonly browserFingerprint: string | null
  readonly ipCountry: string | null
  readonly userAgent: string | null
  readonly submitSeconds: number | string | null
  readonly metadata: unknown
  readonly externalId: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

const toReview = (r: ReviewDbRow): ReviewRecord => ({
  id: r.id as ReviewRecord["id"],
  siteId: r.siteId as ReviewRecord["siteId"],
  productId: r.productId as ReviewRecord["productId"],
  productVariantId: r.productVariantId as ReviewRecord["productVariantId"],
  customerId: r.customerId as ReviewRecord["customerId"],
  surveyId: r.surveyId as ReviewRecord["surveyId"],
  title: r.title,
  body: r.body,
  originalTitle: r.originalTitle,
  originalBody: r.originalBody,
  redactedAt: toNullableTimestamp(r.redactedAt),
  rating: Number(r.rating),
  published: r.published,
  verifiedBuyer: r.verifiedBuyer,
  flagged: r.flagged,
  flags: json(r.flags),
  moderatedAt: toNullableTimestamp(r.moderatedAt),
  ipAddress: r.ipAddress,
  browserFingerprint: r.browserFingerprint,
  ipCountry: r.ipCountry,
  userAgent: r.userAgent,
  submitSeconds: r.submitSeconds === null ? null : Number(r.submitSeconds),
  metadata: json(r.metadata),
  externalId: r.externalId,
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

interface ReplyDbRow {
  readonly id: string
  readonly reviewId: string
  readonly body: string
  readonly responderName: string
  readonly published: boolean
  readonly metadata: unknown
  readonly createdAt: Date
  readonly updatedAt: Date
}

const toReply = (r: ReplyDbRow): ReviewReply => ({
  id: r.id as ReviewReply["id"],
  reviewId: r.reviewId as ReviewReply["reviewId"],
  body: r.body,
  responderName: r.responderName,
  published: r.published,
  metadata: json(r.metadata),
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

const REVIEW_COLUMNS = `id, site_id, product_id, product_variant_id, customer_id, survey_id, title, body, original_title,
  original_body, redacted_at, rating, published, verified_buyer, flagged, flags, moderated_at, ip_address,
  browser_fingerprint, ip_country, user_agent, submit_seconds, metadata, external_id, created_at, updated_at`

/** A review as one element of the JSON array that `jsonb_to_recordset(… AS x(${REVIEW_RECORDSET}))` expands. */
const reviewInput = (review: ReviewRecord, importRow: number | null) => ({
  id: review.id,
  site_id: review.siteId,
  product_id: review.productId,
  product_variant_id: review.productVariantId,
  customer_id: review.customerId,
  survey_id: review.surveyId,
  title: review.title,
  body: review.body,
  original_title: review.originalTitle,
  original_body: review.originalBody,
  redacted_at: review.redactedAt,
  rating: review.rating,
  published: review.published,
  verified_buyer: review.verifiedBuyer,
  flagged: review.flagged,
  flags: review.flags,
  moderated_at: review.moderatedAt,
  ip_address: review.ipAddress,
  browser_fingerprint: review.browserFingerprint,
  ip_country: review.ipCountry,
  user_agent: review.userAgent,
  submit_seconds: review.submitSeconds,
  metadata: review.metadata,
  external_id: review.externalId,
  import_row: importRow,
  created_at: review.createdAt,
  updated_at: review.updatedAt
})

const REVIEW_RECORDSET = `id uuid, site_id uuid, product_id uuid, product_variant_id uuid, customer_id uuid, survey_id uuid,
  title text, body text, original_title text, original_body text, redacted_at timestamptz, rating double precision,
  published boolean, verified_buyer boolean, flagged boolean, flags jsonb, moderated_at timestamptz, ip_address text,
  browser_fingerprint text, ip_country text, user_agent text, submit_seconds double precision, metadata jsonb,
  external_id text, import_row integer, created_at timestamptz, updated_at timestamptz`

/**
 * INSERT of the reviews in `$2` (JSON array of `reviewInput`) for organization `$1` with import job `$3`; with
 * `event`, the same statement records that event (occurred at `$4`) for each inserted review in row order.
 */
const insertReviewsSql = (event: string | undefined) => {
  const insert = `INSERT INTO reviews (organization_id, ${REVIEW_COLUMNS}, import_job_id, import_row)
    SELECT $1::uuid, ${REVIEW_COLUMNS}, $3::uuid, import_row
    FROM jsonb_to_recordset($2::jsonb) AS x(${REVIEW_RECORDSET})`
  if (event === undefined) return insert
  return `WITH inserted AS (${insert} RETURNING *)
    INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
    SELECT i.organization_id, gen_random_uuid(), '${event}', to_jsonb(review_json), $4::timestamptz
    FROM inserted i ${reviewJsonJoin("i")} ORDER BY i.import_row, i.id`
}

const filesInput = (reviewId: string, files: ReadonlyArray<ReviewFile>) =>
  files.map((f, position) => ({
    id: f.id,
    review_id: reviewId,
    file_name: f.fileName,
    content_type: f.contentType,
    size_bytes: f.sizeBytes,
    url: f.url,
    position
  }))

const INSERT_FILES = `INSERT INTO review_files (organization_id, id, review_id, file_name, content_type, size_bytes, url, position)
  SELECT $1::uuid, id, review_id, file_name, content_type, size_bytes, url, position
  FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, review_id uuid, file_name text, content_type text, size_bytes bigint,
    url text, position integer)`

const answersInput = (reviewId: string, answers: ReadonlyArray<SurveyAnswer>) =>
  answers.map((a, position) => ({
    review_id: reviewId,
    position,
    question_id: a.questionId,
    label: a.label,
    type: a.type,
    step: a.step,
    steps: a.steps,
    low_label: a.lowLabel,
    high_label: a.highLabel,
    middle_label: a.middleLabel,
    option_labels: a.optionLabels
  }))

const INSERT_ANSWERS = `INSERT INTO review_answers (organization_id, review_id, position, question_id, label, type, step, steps,
    low_label, high_label, middle_label, option_labels)
  SELECT $1::uuid, review_id, position, question_id, label, type, step, steps, low_label, high_label, middle_label,
    option_labels
  FROM jsonb_to_recordset($2::jsonb) AS x(review_id uuid, position integer, question_id uuid, label text, type text,
    step integer, steps integer, low_label text, high_label text, middle_label text, option_labels jsonb)`

const replyInput = (r: ReviewReply) => ({
  id: r.id,
  review_id: r.reviewId,
  body: r.body,
  responder_name: r.responderName,
  published: r.published,
  metadata: r.metadata,
  created_at: r.createdAt,
  updated_at: r.updatedAt
})

const INSERT_REPLIES = `INSERT INTO review_replies (organization_id, id, review_id, body, responder_name, published, metadata,
    created_at, updated_at)
  SELECT $1::uuid, id, review_id, body, responder_name, published, metadata, created_at, updated_at
  FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, review_id uuid, body text, responder_name text, published boolean,
    metadata jsonb, created_at timestamptz, updated_at timestamptz)`

const customerInput = (c: Customer) => ({
  id: c.id,
  email: c.email,
  phone: c.phone,
  first_name: c.firstName,
  last_name: c.lastName,
  country: c.country,
  birthday: c.birthday,
  metadata: c.metadata,
  notes: c.notes,
  email_opt_out: c.emailOptOut,
  email_opt_out_at: c.emailOptOutAt,
  email_opt_out_source: c.emailOptOutSource,
  created_at: c.createdAt,
  updated_at: c.updatedAt
})

const CUSTOMER_COLUMNS = `id, email, phone, first_name, last_name, country, birthday, metadata, notes, email_opt_out,
  email_opt_out_at, email_opt_out_source, created_at, updated_at`

const INSERT_CUSTOMERS = `INSERT INTO customers (organization_id, ${CUSTOMER_COLUMNS})
  SELECT $1::uuid, ${CUSTOMER_COLUMNS}
  FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, email text, phone text, first_name text, last_name text, country text,
    birthday text, metadata jsonb, notes text, email_opt_out boolean, email_opt_out_at timestamptz,
    email_opt_out_source text, created_at timestamptz, updated_at timestamptz)`

/** An advisory-lock class for "imports of one organization" (the second key is a hash of the organization). */
const IMPORT_LOCK_CLASS = 7_240_114

/** The elements of a JSON array parameter as a set of text values. */
const textSet = (param: string) => `(SELECT jsonb_array_elements_text(${param}::jsonb))`

// ---------------------------------------------------------------------------------------------------------------

const makeRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const selectReview = (organizationId: OrganizationId, id: ReviewId, lock: boolean) =>
    sql.unsafe<ReviewDbRow>(
      `SELECT ${REVIEW_COLUMNS} FROM reviews WHERE organization_id = $1 AND id = $2${lock ? " FOR UPDATE" : ""}`,
      [organizationId, id]
    ).pipe(Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toReview)), Effect.orDie)

  const insertMany = (statement: string, organizationId: OrganizationId, rows: ReadonlyArray<unknown>) =>
    rows.length === 0 ? Effect.void : sql.unsafe(statement, [organizationId, JSON.stringify(rows)]).pipe(Effect.asVoid)

  const matchWhere = (filter: FilterAst, search: string | undefined, offset: number) => {
    const f = compileFilter(filter, reviewMatchMapping.columns, offset)
    const s = compileSearch(search, reviewMatchMapping.search, offset + f.params.length)
    return { text: `(${f.text}) AND (${s.text})`, params: [...f.params, ...s.params] }
  }

  return ReviewWriteRepository.of({
    findReview: (organizationId, id) => selectReview(organizationId, id, false),
    lockReview: (organizationId, id) => selectReview(organizationId, id, true),
    updateReview: (organizationId, r) =>
      sql`UPDATE reviews SET title = ${r.title}, body = ${r.body}, original_title = ${r.originalTitle},
            original_body = ${r.originalBody}, redacted_at = ${r.redactedAt}, published = ${r.published},
            moderated_at = ${r.moderatedAt}, metadata = ${JSON.stringify(r.metadata)}::jsonb, updated_at = ${r.updatedAt}
          WHERE organization_id = ${organizationId} AND id = ${r.id}`.pipe(Effect.asVoid, Effect.orDie),
    deleteReview: (organizationId, d) =>
      Effect.gen(function*() {
        // Files, answers and the reply go with the review (ON DELETE CASCADE).
        yield* sql`DELETE FROM reviews WHERE organization_id = ${organizationId} AND id = ${d.reviewId}`
        yield* sql`INSERT INTO review_deletions (organization_id, review_id, reason, note, actor_key_id, deleted_at)
          VALUES (${organizationId}, ${d.reviewId}, ${d.reason}, ${d.note}, ${d.actorKeyId}, ${d.deletedAt})`
      }).pipe(Effect.orDie),
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
               avg(r.rating) FILTER (WHERE r.published) AS average
             FROM ids LEFT JOIN reviews r ON r.organization_id = $1 AND r.product_id = ids.id
             GROUP BY ids.id)
           UPDATE products p SET review_count = stats.n, published_review_count = stats.pn, average_rating = stats.average
           FROM stats WHERE p.organization_id = $1 AND p.id = stats.id`,
          [organizationId, ids]
        )
      }).pipe(Effect.orDie),
    bulkSetPublished: (organizationId, match, published, at) =>
      Effect.gen(function*() {
        const where = matchWhere(match.filter, match.search, 3)
        const rows = yield* sql.unsafe<{ count: number; changed: unknown }>(
          `WITH matched AS (
             SELECT r.id, r.published AS was_published
             FROM reviews r
             LEFT JOIN products p ON p.organization_id = r.organization_id AND p.id = r.product_id
             LEFT JOIN customers c ON c.organization_id = r.organization_id AND c.id = r.customer_id
             WHERE r.organization_id = $1 AND ${where.text}
             ORDER BY r.id
             FOR UPDATE OF r
           ),
           updated AS (
             UPDATE reviews r SET published = $2::boolean, moderated_at = $3::timestamptz, updated_at = $3::timestamptz
             FROM matched m WHERE r.organization_id = $1 AND r.id = m.id
             RETURNING r.*, m.was_published
           ),
           announced AS (
             INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
             SELECT u.organization_id, gen_random_uuid(), 'review.updated', to_jsonb(review_json), $3::timestamptz
             FROM updated u ${reviewJsonJoin("u")} WHERE u.was_published IS DISTINCT FROM u.published
             RETURNING 1
           )
           SELECT (SELECT count(*) FROM updated)::integer AS count,
             (SELECT COALESCE(jsonb_agg(DISTINCT u.product_id), '[]'::jsonb) FROM updated u
               WHERE u.was_published IS DISTINCT FROM u.published) AS changed`,
          [organizationId, published, at, ...where.params]
        )
        const row = rows[0]!
        return { count: Number(row.count), changedProductIds: json<Array<ProductId>>(row.changed) }
      }).pipe(Effect.orDie),
    resolveImportReferences: (organizationId, refs) =>
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${IMPORT_LOCK_CLASS}, hashtext(${organizationId}))`
        // FOR KEY SHARE keeps the resolved sites, products and customers from being deleted before the reviews
        // referring to them are inserted, without blocking ordinary updates of them.
        const sites = refs.siteIds.length === 0 ? [] : yield* sql.unsafe<{ id: string }>(
          `SELECT id FROM sites WHERE organization_id = $1 AND id IN (SELECT value::uuid FROM jsonb_array_elements_text($2::jsonb))
           FOR KEY SHARE`,
          [organizationId, JSON.stringify(refs.siteIds)]
        )
        const anyProduct = refs.productSlugs.length + refs.productExternalIds.length + refs.productUrls.length > 0
        const products = !anyProduct ? [] : yield* sql.unsafe<{ id: string; slug: string; externalId: string | null; url: string | null }>(
          `SELECT id, slug, external_id, url FROM products WHERE organization_id = $1
             AND (slug IN ${textSet("$2")} OR external_id IN ${textSet("$3")} OR url IN ${textSet("$4")})
           ORDER BY id FOR KEY SHARE`,
          [
            organizationId,
            JSON.stringify(refs.productSlugs),
            JSON.stringify(refs.productExternalIds),
            JSON.stringify(refs.productUrls)
          ]
        )
        const customers = refs.customerEmails.length === 0 ? [] : yield* sql.unsafe<{ id: string; email: string }>(
          `SELECT id, email FROM customers WHERE organization_id = $1 AND email IN ${textSet("$2")} FOR KEY SHARE`,
          [organizationId, JSON.stringify(refs.customerEmails)]
        )
        const imported = refs.reviewExternalIds.length === 0 ? [] : yield* sql.unsafe<{ externalId: string }>(
          `SELECT external_id FROM reviews WHERE organization_id = $1 AND external_id IN ${textSet("$2")}`,
          [organizationId, JSON.stringify(refs.reviewExternalIds)]
        )
        const slugs = new Set(refs.productSlugs)
        const externalIds = new Set(refs.productExternalIds)
        const urls = new Set(refs.productUrls)
        const productsBySlug = new Map<string, ProductId>()
        const productsByExternalId = new Map<string, ProductId>()
        const productsByUrl = new Map<string, Array<ProductId>>()
        for (const p of products) {
          const id = p.id as ProductId
          if (slugs.has(p.slug)) productsBySlug.set(p.slug, id)
          if (p.externalId !== null && externalIds.has(p.externalId)) productsByExternalId.set(p.externalId, id)
          if (p.url !== null && urls.has(p.url)) productsByUrl.set(p.url, [...(productsByUrl.get(p.url) ?? []), id])
        }
        return {
          siteIds: new Set(sites.map((s) => s.id)),
          productsBySlug,
          productsByExternalId,
          productsByUrl,
          customersByEmail: new Map(customers.map((c) => [c.email, c.id as CustomerId])),
          importedExternalIds: new Set(imported.map((r) => r.externalId))
        }
      }).pipe(Effect.orDie),
    ensureCustomers: (organizationId, customers) =>
      Effect.gen(function*() {
        if (customers.length === 0) return new Map<string, CustomerId>()
        yield* sql.unsafe(`${INSERT_CUSTOMERS} ON CONFLICT (organization_id, email) DO NOTHING`, [
          organizationId,
          JSON.stringify(customers.map(customerInput))
        ])
        const rows = yield* sql.unsafe<{ id: string; email: string }>(
          `SELECT id, email FROM customers WHERE organization_id = $1 AND email IN ${textSet("$2")} FOR KEY SHARE`,
          [organizationId, JSON.stringify(customers.map((c) => c.email))]
        )
        return new Map(rows.map((r) => [r.email, r.id as CustomerId]))
      }).pipe(Effect.orDie),
    insertImport: (organizationId, job, reviews, at) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO import_jobs (organization_id, id, type, action, created_at)
          VALUES (${organizationId}, ${job.id}, ${job.type}, ${job.action}, ${job.createdAt})`
        yield* sql.unsafe(insertReviewsSql("review.created"), [
          organizationId,
          JSON.stringify(reviews.map((r) => reviewInput(r.review, r.importRow))),
          job.id,
          at
        ])
        yield* insertMany(INSERT_FILES, organizationId, reviews.flatMap((r) => filesInput(r.review.id, r.files)))
        yield* insertMany(INSERT_ANSWERS, organizationId, reviews.flatMap((r) => answersInput(r.review.id, r.answers)))
        yield* insertMany(
          INSERT_REPLIES,
          organizationId,
          reviews.flatMap((r) => r.reply === null ? [] : [replyInput(r.reply)])
        )
      }).pipe(Effect.orDie),
    findReply: (organizationId, reviewId) =>
      sql<ReplyDbRow>`SELECT * FROM review_replies WHERE organization_id = ${organizationId} AND review_id = ${reviewId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toReply)),
        Effect.orDie
      ),
    insertReply: (organizationId, reply) =>
      sql.unsafe<{ id: string }>(
        `${INSERT_REPLIES} ON CONFLICT (organization_id, review_id) DO NOTHING RETURNING id`,
        [organizationId, JSON.stringify([replyInput(reply)])]
      ).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    updateReply: (organizationId, r) =>
      sql`UPDATE review_replies SET body = ${r.body}, responder_name = ${r.responderName}, published = ${r.published},
            metadata = ${JSON.stringify(r.metadata)}::jsonb, updated_at = ${r.updatedAt}
          WHERE organization_id = ${organizationId} AND review_id = ${r.reviewId}`.pipe(Effect.asVoid, Effect.orDie),
    deleteReply: (organizationId, reviewId) =>
      sql<ReplyDbRow>`DELETE FROM review_replies WHERE organization_id = ${organizationId} AND review_id = ${reviewId}
          RETURNING *`.pipe(Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toReply)), Effect.orDie)
  })
})

export const PgReviewWriteRepository = Layer.effect(ReviewWriteRepository, makeRepository)

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
