/**
 * The review read side over PostgreSQL: the keyset page (one statement, joining products and customers only when
 * the filter or search needs them) and one statement per requested include for the whole page.
 */
import { relatedCatalogColumns } from "../catalog/CatalogColumns.ts"
import { withoutTransforms } from "../kernel/RawRows.ts"
import {
  type AnswerDbRow,
  type FileDbRow,
  toReply,
  type ReplyDbRow,
  REVIEW_SELECT,
  REVIEW_SELECT_NAMES,
  rowsOfValues,
  type StoredReviewDbRow,
  toSurveyAnswer,
  toReviewFile,
  toStoredReview
} from "./PgReviewRows.ts"
import {
  type CollisionCounts,
  type FilterAst,
  fieldRefPath,
  foldCase,
  type ImportJob,
  type ImportJobId,
  normalizeValue,
  type ReviewFile,
  type ReviewInclude,
  type ReviewIncludeLoads,
  type ReviewReader,
  type ReviewRecord,
  searchPattern,
  ReviewRepository,
  type ReviewReply,
  type StoredReview,
  type StoredReviewPage,
  type SurveyAnswer,
  toPage
} from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { columnsFrom, compileListQuery, compileSearch, type ListSqlMapping, type SqlFragment } from "../kernel/FilterSql.ts"
import { CUSTOMER_SELECT, PRODUCT_SELECT, toCustomer, toProduct } from "../catalog/CatalogRows.ts"
import { jsonValue, toTimestamp } from "../kernel/SqlRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"

type Row = Record<string, any>

const notNull = (sql: string) => ({ sql, notNull: true }) as const

/** The columns of GET /reviews' filterable fields. `product.id` / `customer.id` read the review's own keys. */
export const reviewListMapping: ListSqlMapping = {
  columns: columnsFrom({
    id: notNull("r.id"),
    rating: notNull("r.rating"),
    published: notNull("r.published"),
    flagged: notNull("r.flagged"),
    moderatedAt: "r.moderated_at",
    surveyId: "r.survey_id",
    ipAddress: "r.ip_address",
    browserFingerprint: "r.browser_fingerprint",
    metadata: "r.metadata",
    createdAt: notNull("r.created_at"),
    "product.id": notNull("r.product_id"),
    "customer.id": "r.customer_id",
    ...relatedCatalogColumns
  }),
  id: "r.id",
  // What `compileSearch` would search with the joins; the store uses `reviewSearchSql` instead (same answers).
  search: ["r.title", "r.body", "c.email", "c.first_name", "c.last_name", "p.title"]
}

/** The dotted paths (metadata: the prefix) a filter reads. */
const pathsOf = (ast: FilterAst, out: Set<string> = new Set()): Set<string> => {
  switch (ast._tag) {
    case "And":
    case "Or":
      ast.clauses.forEach((c) => pathsOf(c, out))
      return out
    default:
      out.add(ast.field._tag === "MetadataKey" ? ast.field.prefix : fieldRefPath(ast.field))
      return out
  }
}

/**
 * The FROM clause of a review list: the related tables are joined only when the filter reads them (`product.id`
 * and `customer.id` are the review's own columns), so an unfiltered list touches reviews alone.
 */
export const reviewListFrom = (filter: FilterAst): string => {
  const paths = [...pathsOf(filter)]
  const needs = (prefix: string, own: string) => paths.some((p) => p.startsWith(prefix) && p !== own)
  return [
    "reviews r",
    needs("product.", "product.id") ? "LEFT JOIN products p ON p.organization_id = r.organization_id AND p.id = r.product_id" : "",
    needs("customer.", "customer.id") ? "LEFT JOIN customers c ON c.organization_id = r.organization_id AND c.id = r.customer_id" : ""
  ].filter((s) => s !== "").join("\n  ")
}

/**
 * The search condition of docs/DECISIONS.md §4 over a review's title and body, its customer's email and names and its
 * product's title. The related records are searched in uncorrelated subqueries (`r.customer_id IN (SELECT …)`),
 * which PostgreSQL runs once per statement as hashed sub-plans, rather than through joins: the reviews can then
 * still be read in the order of a list index and the scan stops at the page's last match, where a join would
 * make the planner match every review and sort. Same answers as `compileSearch` over the joined columns (a
 * missing customer or product has no values, so it matches nothing in both forms).
 */
export const reviewSearchSql = (term: string | undefined, offset: number): SqlFragment => {
  if (term === undefined || term === "") return { text: "TRUE", params: [] }
  const own = compileSearch(term, ["r.title", "r.body"], offset)
  // A term the trigram indexes serve: the related records are found through them, with the pattern `own` binds
  // first (the same value); otherwise as `compileSearch` would search them.
  const related = indexedSearchTerm(term)
    ? {
      customer: indexedLike(["sc.email", "sc.first_name", "sc.last_name"], offset + 1),
      product: indexedLike(["sp.title"], offset + 1),
      params: []
    }
    : (() => {
      const customer = compileSearch(term, ["sc.email", "sc.first_name", "sc.last_name"], offset + own.params.length)
      const product = compileSearch(term, ["sp.title"], offset + own.params.length + customer.params.length)
      return { customer: customer.text, product: product.text, params: [...customer.params, ...product.params] }
    })()
  return {
    text: `(${own.text}
    OR r.customer_id IN (SELECT sc.id FROM customers sc WHERE sc.organization_id = $1 AND ${related.customer})
    OR r.product_id IN (SELECT sp.id FROM products sp WHERE sp.organization_id = $1 AND ${related.product}))`,
    params: [...own.params, ...related.params]
  }
}

/**
 * The search over `columns` in the form their trigram indexes serve (migration 92), with the pattern in parameter
 * `$index` (the one `compileSearch` adds first). Used for customers and products, whose hashed sub-plans would
 * otherwise read every customer and product of the organization for each search.
 */
const indexedLike = (columns: ReadonlyArray<string>, index: number): string =>
  `(${columns.map((c) => `search_fold(${c}) LIKE $${index} ESCAPE '\\'`).join(" OR ")})`

/**
 * Search terms the trigram indexes can serve (migration 92): `pg_trgm` draws its trigrams from runs of letters and
 * digits, so a term without three in a row would make the index return every row. Such terms keep the scan.
 */
export const indexedSearchTerm = (term: string | undefined): term is string =>
  term !== undefined && /[a-z0-9]{3}/.test(foldCase(term))

/**
 * How a search page is found (docs/DECISIONS.md §4), cheapest first, each step exact:
 * 1. a common term: the first `SEARCH_WINDOW` reviews in list order already hold a page of matches;
 * 2. a rare term: up to `SEARCH_CANDIDATES_MAX` matches collected through the trigram indexes, the page read among them;
 * 3. in between: the list-index scan, which meets a match every few hundred reviews and stops at the page's end.
 */
export const SEARCH_WINDOW = 5_000
export const SEARCH_CANDIDATES_MAX = 2_000

/**
 * The reviews that match `term` (docs/DECISIONS.md §4) through the trigram indexes; more than
 * `SEARCH_CANDIDATES_MAX` rows means "too many". A review may be listed more than once (it can match in several
 * ways); the `LIMIT` stops the scans once the term is known to be common. Same answers as `reviewSearchSql`:
 * `search_fold` is the same folding as `translate` with the fold table, and `pg_trgm` rechecks every `LIKE`.
 */
export const searchCandidatesStatement = (organizationId: string, term: string, max = SEARCH_CANDIDATES_MAX) => {
  const like = (column: string) => `search_fold(${column}) LIKE $2 ESCAPE '\\'`
  return {
    text: `SELECT s.id FROM reviews s WHERE s.organization_id = $1 AND (${like("s.title")} OR ${like("s.body")})
  UNION ALL
  SELECT s.id FROM reviews s WHERE s.organization_id = $1 AND s.customer_id IN (
    SELECT sc.id FROM customers sc WHERE sc.organization_id = $1
      AND (${like("sc.email")} OR ${like("sc.first_name")} OR ${like("sc.last_name")}))
  UNION ALL
  SELECT s.id FROM reviews s WHERE s.organization_id = $1 AND s.product_id IN (
    SELECT sp.id FROM products sp WHERE sp.organization_id = $1 AND ${like("sp.title")})
  LIMIT ${max + 1}`,
    params: [organizationId, searchPattern(term)]
  }
}

/** Where a search page looks (see `SEARCH_WINDOW`): among known matches, or in the first reviews in list order. */
export type SearchScope =
  | { readonly _tag: "Candidates"; readonly ids: ReadonlyArray<string> }
  | { readonly _tag: "Window"; readonly size: number }

/**
 * The statement of one page (also used by the benchmark to time the same SQL directly). Without a scope, the search
 * condition is checked along the list-index scan. `Candidates`: membership among the matches' ids. `Window`: the
 * search is checked among the first `size` reviews of the list order only (a prefix of it, so its matches are the
 * list's first matches; a page found there is the page).
 */
export const reviewPageStatement = (
  organizationId: string,
  request: Parameters<ReviewReader["page"]>[1],
  scope?: SearchScope
): { readonly text: string; readonly params: ReadonlyArray<unknown> } => {
  const q = compileListQuery({ ...request, search: undefined }, reviewListMapping, 1)
  if (scope?._tag === "Window") {
    const search = reviewSearchSql(request.search, 1 + q.params.length)
    return {
      text: `SELECT ${REVIEW_SELECT} FROM (SELECT r.* FROM ${reviewListFrom(request.filter)}
    WHERE r.organization_id = $1 AND ${q.where}
    ORDER BY ${q.orderBy} LIMIT ${scope.size}) r
  WHERE ${search.text}
  ORDER BY ${q.orderBy} LIMIT ${request.limit + 1}`,
      params: [organizationId, ...q.params, ...search.params]
    }
  }
  const search = scope === undefined
    ? reviewSearchSql(request.search, 1 + q.params.length)
    : { text: `r.id = ANY($${2 + q.params.length}::uuid[])`, params: [`{${scope.ids.join(",")}}`] }
  return {
    text: `SELECT ${REVIEW_SELECT} FROM ${reviewListFrom(request.filter)}
  WHERE r.organization_id = $1 AND ${q.where} AND ${search.text}
  ORDER BY ${q.orderBy} LIMIT ${request.limit + 1}`,
    params: [organizationId, ...q.params, ...search.params]
  }
}

type Statement = { readonly text: string; readonly params: ReadonlyArray<unknown> }
type PageRow = StoredReviewDbRow & Readonly<Record<string, unknown>>

/** A JSON value read from a `json` column (parsed by the client, or text through some drivers). */
const jsonOf = <A>(value: unknown): A | null => (value === null || value === undefined ? null : jsonValue<A>(value))

/** A map from each page row's `key` to the row's JSON object in `column`, for rows that have one. */
const mapOf = <A>(rows: ReadonlyArray<PageRow>, key: keyof StoredReviewDbRow, column: string, map: (r: any) => A) => {
  const out = new Map<string, A>()
  for (const r of rows) {
    const v = jsonOf<any>(r[column])
    if (v !== null) out.set(String(r[key]), map(v))
  }
  return out
}

/** One related record as a `json` object named like the client would name its columns, or null. */
const oneJson = (select: string, from: string, where: string) =>
  `(SELECT to_json(x) FROM (SELECT ${select} FROM ${from} WHERE ${where}) x)`

/**
 * The includes the page statement reads itself (docs/DECISIONS.md §33), as data: the columns added to each row of
 * the page (a subquery per row over `pg`, the page's row as `REVIEW_SELECT` names it; `$1` is the organization in
 * every page statement) and how the page's rows give what the include's loader answers for the same keys. One
 * statement for the page and all its includes: one round trip, and no rows decoded twice.
 */
const foldedIncludes: { readonly [K in keyof ReviewIncludeLoads]: {
  readonly columns: string
  /** The names of `columns`, in order. */
  readonly names: ReadonlyArray<string>
  readonly read: (rows: ReadonlyArray<PageRow>) => ReviewIncludeLoads[K]
} } = {
  importJob: {
    names: ["+importJob"],
    columns: `${oneJson(`j.id, j.type, j.action, j.created_at AS "createdAt"`, "import_jobs j",
      `j.organization_id = $1 AND j.id = pg."importJobId"`)} AS "+importJob"`,
    read: (rows) => mapOf(rows, "importJobId", "+importJob", (j): ImportJob =>
      ({ id: j.id, type: j.type, action: j.action, createdAt: toTimestamp(j.createdAt) }))
  },
  customer: {
    names: ["+customer"],
    columns: `${oneJson(CUSTOMER_SELECT, "customers c", `c.organization_id = $1 AND c.id = pg."customerId"`)} AS "+customer"`,
    read: (rows) => mapOf(rows, "customerId", "+customer", toCustomer)
  },
  product: {
    names: ["+product"],
    columns: `${oneJson(PRODUCT_SELECT, "products p", `p.organization_id = $1 AND p.id = pg."productId"`)} AS "+product"`,
    read: (rows) => mapOf(rows, "productId", "+product", toProduct)
  },
  response: {
    names: ["+response"],
    columns: `${oneJson(`rr.id, rr.review_id AS "reviewId", rr.body, rr.responder_name AS "responderName", rr.published,
        rr.metadata, rr.created_at AS "createdAt", rr.updated_at AS "updatedAt"`, "review_replies rr",
      `rr.organization_id = $1 AND rr.review_id = pg.id`)} AS "+response"`,
    read: (rows) => mapOf(rows, "id", "+response", toReply)
  },
  files: {
    names: ["+files"],
    columns: `(SELECT json_agg(x ORDER BY x.position) FROM (SELECT f.id, f.file_name AS "fileName",
        f.content_type AS "contentType", f.size_bytes AS "sizeBytes", f.url, f.position
        FROM review_files f WHERE f.organization_id = $1 AND f.review_id = pg.id) x) AS "+files"`,
    read: (rows) => mapOf(rows, "id", "+files", (fs: ReadonlyArray<FileDbRow>) => fs.map(toReviewFile))
  },
  answers: {
    names: ["+answers"],
    columns: `(SELECT json_agg(x ORDER BY x.position) FROM (SELECT a.question_id AS "questionId", a.label, a.type, a.step,
        a.steps, a.low_label AS "lowLabel", a.high_label AS "highLabel", a.middle_label AS "middleLabel",
        a.option_labels AS "optionLabels", a.position
        FROM review_answers a WHERE a.organization_id = $1 AND a.review_id = pg.id) x) AS "+answers"`,
    read: (rows) => mapOf(rows, "id", "+answers", (as: ReadonlyArray<AnswerDbRow>) => as.map(toSurveyAnswer))
  },
  // The counts kept on write (migration 102), one primary-key probe per row and value; a row whose value is null
  // reads nothing and is left out, as the loader is never asked for null values.
  collisions: {
    names: ["+fingerprintCount", "+ipAddressCount"],
    columns: `(SELECT n.reviews FROM review_value_counts n WHERE n.organization_id = $1 AND n.kind = 'browser_fingerprint'
        AND n.value = pg."browserFingerprint") AS "+fingerprintCount",
      (SELECT n.reviews FROM review_value_counts n WHERE n.organization_id = $1 AND n.kind = 'ip_address'
        AND n.value = pg."ipAddress") AS "+ipAddressCount"`,
    read: (rows): CollisionCounts => {
      const browserFingerprint = new Map<string, number>()
      const ipAddress = new Map<string, number>()
      for (const r of rows) {
        if (r.browserFingerprint !== null) browserFingerprint.set(r.browserFingerprint, Number(r["+fingerprintCount"] ?? 0))
        if (r.ipAddress !== null) ipAddress.set(r.ipAddress, Number(r["+ipAddressCount"] ?? 0))
      }
      return { browserFingerprint, ipAddress }
    }
  }
}

/** `page` with the columns of the `include`s it reads itself; the page's rows keep their order (a projection). */
const withIncludes = (page: Statement, include: ReadonlyArray<ReviewInclude>): Statement =>
  include.length === 0 ? page : {
    text: `SELECT pg.*, ${include.map((name) => foldedIncludes[name].columns).join(",\n  ")} FROM (${page.text}) pg`,
    params: page.params
  }

/** What the page's rows give for each include read with them (see `foldedIncludes`). */
const loadedFrom = (rows: ReadonlyArray<PageRow>, include: ReadonlyArray<ReviewInclude>): Partial<ReviewIncludeLoads> => {
  const loaded: Partial<Record<ReviewInclude, unknown>> = {}
  for (const name of include) loaded[name] = foldedIncludes[name].read(rows)
  return loaded as Partial<ReviewIncludeLoads>
}

/**
 * The rows of one page, by the cheapest of the steps of `SEARCH_WINDOW` that is exact for the request, each named
 * as `StoredReviewDbRow` by the statement itself (`REVIEW_SELECT`), for `toStoredReview`. With `include`, each row
 * also carries those includes' columns (`foldedIncludes`); without, it is the page statement alone.
 */
export const reviewPageRows = (
  sql: SqlClient.SqlClient,
  organizationId: string,
  request: Parameters<ReviewReader["page"]>[1],
  limits: { readonly window: number; readonly candidatesMax: number } = { window: SEARCH_WINDOW, candidatesMax: SEARCH_CANDIDATES_MAX },
  include: ReadonlyArray<ReviewInclude> = []
) =>
  Effect.gen(function*() {
    const raw = withoutTransforms(sql)
    const names = include.length === 0 ? REVIEW_SELECT_NAMES : [...REVIEW_SELECT_NAMES, ...include.flatMap((n) => foldedIncludes[n].names)]
    const run = (statement: Statement) => {
      const s = withIncludes(statement, include)
      return Effect.map(raw.unsafe(s.text, s.params).values, (rows) => rowsOfValues<PageRow>(names, rows))
    }
    if (!indexedSearchTerm(request.search)) return yield* run(reviewPageStatement(organizationId, request))
    const windowed = yield* run(reviewPageStatement(organizationId, request, { _tag: "Window", size: limits.window }))
    if (windowed.length > request.limit) return windowed
    const probe = searchCandidatesStatement(organizationId, request.search, limits.candidatesMax)
    const found = yield* sql.unsafe<{ readonly id: string }>(probe.text, probe.params)
    if (found.length > limits.candidatesMax) return yield* run(reviewPageStatement(organizationId, request))
    if (found.length === 0) return []
    const ids = [...new Set(found.map((r) => String(r.id)))]
    return yield* run(reviewPageStatement(organizationId, request, { _tag: "Candidates", ids }))
  })

const groupBy = <R extends object, A>(rows: ReadonlyArray<R>, key: keyof R, map: (r: R) => A): ReadonlyMap<string, ReadonlyArray<A>> => {
  const out = new Map<string, Array<A>>()
  for (const r of rows) {
    const k = String(r[key])
    const list = out.get(k)
    if (list === undefined) out.set(k, [map(r)])
    else list.push(map(r))
  }
  return out
}

/** Keys as one `uuid[]` parameter (a PostgreSQL array literal; the keys are UUIDs from stored rows). */
const uuidArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`

export const makePgReviewReader = (sql: SqlClient.SqlClient): ReviewReader => {
  const raw = withoutTransforms(sql)
  const byId = <R extends object, A>(rows: ReadonlyArray<R>, key: keyof R, map: (r: R) => A): ReadonlyMap<string, A> =>
    new Map(rows.map((r) => [String(r[key]), map(r)]))
  return {
    page: (organizationId, request) => {
      const include = [...new Set(request.include)]
      return reviewPageRows(sql, organizationId, request, undefined, include).pipe(
        Effect.map((rows): StoredReviewPage => {
          const stored = rows.map(toStoredReview)
          const page = toPage(stored, request, (s) => ({
            value: normalizeValue(request.sort.type, (s.record as Record<string, unknown>)[request.sort.field]),
            id: s.record.id
          }))
          return include.length === 0 ? page : { ...page, loaded: loadedFrom(rows, include) }
        }),
        orDie
      )
    },
    find: (organizationId, id) =>
      sql<StoredReviewDbRow>`SELECT * FROM reviews WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toStoredReview)),
        orDie
      ),
    loaders: {
      importJobs: (organizationId, ids) =>
        sql<Row>`SELECT id, type, action, created_at FROM import_jobs
            WHERE organization_id = ${organizationId} AND id IN ${sql.in(ids)}`.pipe(
          Effect.map((rows) =>
            byId(rows, "id", (r): ImportJob => ({ id: r.id, type: r.type, action: r.action, createdAt: toTimestamp(r.createdAt) }))
          ),
          orDie
        ),
      // Here down to `answers`: named columns without the client's renames (kernel/RawRows.ts), and one statement
      // text whatever the number of keys (an array parameter rather than `IN ($2, $3, …)`), so the prepared
      // statement is reused.
      customers: (organizationId, ids) =>
        raw.unsafe<Row>(
          `SELECT ${CUSTOMER_SELECT} FROM customers c WHERE c.organization_id = $1 AND c.id = ANY($2::uuid[])`,
          [organizationId, uuidArray(ids)]
        ).pipe(
          Effect.map((rows) => byId(rows, "id", toCustomer)),
          orDie
        ),
      products: (organizationId, ids) =>
        raw.unsafe<Row>(
          `SELECT ${PRODUCT_SELECT} FROM products p WHERE p.organization_id = $1 AND p.id = ANY($2::uuid[])`,
          [organizationId, uuidArray(ids)]
        ).pipe(
          Effect.map((rows) => byId(rows, "id", toProduct)),
          orDie
        ),
      responses: (organizationId, reviewIds) =>
        raw.unsafe<ReplyDbRow & { readonly reviewId: string }>(
          `SELECT id, review_id AS "reviewId", body, responder_name AS "responderName", published, metadata,
              created_at AS "createdAt", updated_at AS "updatedAt"
            FROM review_replies WHERE organization_id = $1 AND review_id = ANY($2::uuid[])`,
          [organizationId, uuidArray(reviewIds)]
        ).pipe(
          Effect.map((rows) => byId(rows, "reviewId", toReply)),
          orDie
        ),
      files: (organizationId, reviewIds) =>
        raw.unsafe<FileDbRow & { readonly reviewId: string }>(
          `SELECT review_id AS "reviewId", id, file_name AS "fileName", content_type AS "contentType",
              size_bytes AS "sizeBytes", url
            FROM review_files WHERE organization_id = $1 AND review_id = ANY($2::uuid[])
            ORDER BY review_id, position`,
          [organizationId, uuidArray(reviewIds)]
        ).pipe(
          Effect.map((rows) => groupBy(rows, "reviewId", toReviewFile)),
          orDie
        ),
      answers: (organizationId, reviewIds) =>
        raw.unsafe<AnswerDbRow & { readonly reviewId: string }>(
          `SELECT review_id AS "reviewId", question_id AS "questionId", label, type, step, steps, low_label AS "lowLabel",
              high_label AS "highLabel", middle_label AS "middleLabel", option_labels AS "optionLabels"
            FROM review_answers WHERE organization_id = $1 AND review_id = ANY($2::uuid[])
            ORDER BY review_id, position`,
          [organizationId, uuidArray(reviewIds)]
        ).pipe(
          Effect.map((rows) => groupBy(rows, "reviewId", toSurveyAnswer)),
          orDie
        ),
      // Both counts in one statement, one primary-key probe per distinct value: the counts are kept on write
      // (migration 102), so this costs the same whatever the number of reviews sharing a value. A subquery per
      // value, not a join: a join's plan depends on statistics (a hash join over all of the organization's counts
      // while the table is not yet analyzed), a correlated probe's does not.
      collisions: (organizationId, keys) =>
        raw.unsafe<{ readonly kind: string; readonly value: string; readonly reviews: number | null }>(
          `SELECT k.kind, k.value,
              (SELECT c.reviews FROM review_value_counts c
                WHERE c.organization_id = $1 AND c.kind = k.kind AND c.value = k.value) AS reviews
            FROM jsonb_to_recordset($2::jsonb) AS k (kind text, value text)`,
          [organizationId, JSON.stringify([
            ...keys.browserFingerprints.map((value) => ({ kind: "browser_fingerprint", value })),
            ...keys.ipAddresses.map((value) => ({ kind: "ip_address", value }))
          ])]
        ).pipe(
          Effect.map((rows): CollisionCounts => {
            const browserFingerprint = new Map<string, number>()
            const ipAddress = new Map<string, number>()
            for (const r of rows) (r.kind === "browser_fingerprint" ? browserFingerprint : ipAddress).set(r.value, Number(r.reviews ?? 0))
            return { browserFingerprint, ipAddress }
          }),
          orDie
        )
    }
  }
}

export const PgReviewRepository = Layer.effect(
  ReviewRepository,
  Effect.map(SqlClient.SqlClient, (sql) => ReviewRepository.fromReader(makePgReviewReader(sql)))
)
