/**
 * The review read side over PostgreSQL: the keyset page (one statement, joining products and customers only when
 * the filter or search needs them) and one statement per requested include for the whole page.
 */
import { withoutTransforms } from "../kernel/RawRows.ts"
import { indexedSearchTerm, reviewMatchFrom, reviewMatchMapping, reviewSearchSql } from "./PgReviewMatch.ts"
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
import { Kernel, Reviews } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { compileListQuery } from "../kernel/FilterSql.ts"
import { CUSTOMER_SELECT, PRODUCT_SELECT, toCustomer, toProduct } from "../catalog/CatalogRows.ts"
import { jsonValue, toTimestamp } from "../kernel/SqlRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"

type Row = Record<string, any>

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
    params: [organizationId, Kernel.searchPattern(term)]
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
  request: Parameters<Reviews.ReviewReader["page"]>[1],
  scope?: SearchScope
): { readonly text: string; readonly params: ReadonlyArray<unknown> } => {
  const q = compileListQuery({ ...request, search: undefined }, reviewMatchMapping, 1)
  if (scope?._tag === "Window") {
    const search = reviewSearchSql(request.search, 1 + q.params.length)
    return {
      text: `SELECT ${REVIEW_SELECT} FROM (SELECT r.* FROM ${reviewMatchFrom(request.filter)}
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
    text: `SELECT ${REVIEW_SELECT} FROM ${reviewMatchFrom(request.filter)}
  WHERE r.organization_id = $1 AND ${q.where} AND ${search.text}
  ORDER BY ${q.orderBy} LIMIT ${request.limit + 1}`,
    params: [organizationId, ...q.params, ...search.params]
  }
}

type Statement = { readonly text: string; readonly params: ReadonlyArray<unknown> }
type PageRow = StoredReviewDbRow & Readonly<Record<string, unknown>>
type Values = ReadonlyArray<unknown>

/** The output names of a select list (`t.column` or `t.column AS "name"`, no commas inside an item). */
const namesOf = (select: string): ReadonlyArray<string> =>
  select.split(",").map((item) => /AS "([^"]+)"\s*$/.exec(item)?.[1] ?? item.trim().replace(/^\w+\./, ""))

const recordMakers = new Map<string, (values: Values, at: number) => Record<string, unknown>>()

/** An object of `names` from `values[at…]`, by an object literal compiled once per name list (see `rowsOfValues`). */
const recordAt = (names: ReadonlyArray<string>): (values: Values, at: number) => Record<string, unknown> => {
  const key = names.join("\u0000")
  let make = recordMakers.get(key)
  if (make === undefined) {
    make = new Function(
      "v",
      "o",
      `return {${names.map((n, i) => `${JSON.stringify(n)}: v[o + ${i}]`).join(", ")}}`
    ) as (
      values: Values,
      at: number
    ) => Record<string, unknown>
    recordMakers.set(key, make)
  }
  return make
}

/** A JSON value read from a `json` column (parsed by the client, or text through some drivers). */
const jsonOf = <A>(value: unknown): A | null => (value === null || value === undefined ? null : jsonValue<A>(value))

interface FoldedInclude<K extends keyof Reviews.ReviewIncludeLoads> {
  /** A subquery joined LATERAL to each row of the page, `pg`, giving one row of `width` columns (`$1`: the organization). */
  readonly lateral: string
  readonly width: number
  /** What the include's loader answers, from the page's rows and their values, this include's columns from `at`. */
  readonly read: (
    rows: ReadonlyArray<PageRow>,
    values: ReadonlyArray<Values>,
    at: number
  ) => Reviews.ReviewIncludeLoads[K]
}

/**
 * A related record (at most one per review) read with the page: its columns as the loader's statement names them,
 * read by the same row mapping. `LIMIT 1` keeps the subquery a per-row probe: PostgreSQL would otherwise pull a
 * simple subquery up into an ordinary join, whose plan (a hash join over the whole table) depends on statistics.
 */
const oneRecord = <K extends "importJob" | "customer" | "product" | "response", A>(
  select: string,
  from: string,
  where: string,
  key: (row: PageRow) => string | null,
  map: (record: any) => A
): FoldedInclude<K> => {
  const names = namesOf(select)
  const make = recordAt(names)
  return {
    lateral: `(SELECT ${select} FROM ${from} WHERE ${where} LIMIT 1)`,
    width: names.length,
    read: (rows, values, at) => {
      const out = new Map<string, A>()
      for (let i = 0; i < rows.length; i++) {
        const k = key(rows[i]!)
        // The record's first column is its key: null when the review has none, or it is missing.
        if (k !== null && values[i]![at] !== null) out.set(k, map(make(values[i]!, at)))
      }
      return out as unknown as Reviews.ReviewIncludeLoads[K]
    }
  }
}

/** A review's ordered list of related records, aggregated as JSON (one row per review, `[]`-less when none). */
const orderedList = <K extends "files" | "answers", R, A>(
  select: string,
  from: string,
  map: (r: R) => A
): FoldedInclude<K> => ({
  lateral: `(SELECT json_agg(x ORDER BY x.position) AS list FROM (SELECT ${select} FROM ${from}) x)`,
  width: 1,
  read: (rows, values, at) => {
    const out = new Map<string, ReadonlyArray<A>>()
    for (let i = 0; i < rows.length; i++) {
      const list = jsonOf<ReadonlyArray<R>>(values[i]![at])
      if (list !== null) out.set(rows[i]!.id, list.map(map))
    }
    return out as unknown as Reviews.ReviewIncludeLoads[K]
  }
})

/**
 * The includes the page statement reads itself (docs/DECISIONS.md §33), as data: a LATERAL subquery per include
 * over each row of the page, and how the page's rows give what the include's loader answers for the same keys. One
 * statement for the page and all its includes: one round trip. Related records come as typed columns (not JSON),
 * which costs the database less to write and the process less to read.
 */
const foldedIncludes: { readonly [K in keyof Reviews.ReviewIncludeLoads]: FoldedInclude<K> } = {
  importJob: oneRecord(
    `j.id, j.type, j.action, j.created_at AS "createdAt"`,
    "import_jobs j",
    `j.organization_id = $1 AND j.id = pg."importJobId"`,
    (r) => r.importJobId,
    (j): Reviews.ImportJob => ({ id: j.id, type: j.type, action: j.action, createdAt: toTimestamp(j.createdAt) })
  ),
  customer: oneRecord(
    CUSTOMER_SELECT,
    "customers c",
    `c.organization_id = $1 AND c.id = pg."customerId"`,
    (r) => r.customerId,
    toCustomer
  ),
  product: oneRecord(
    PRODUCT_SELECT,
    "products p",
    `p.organization_id = $1 AND p.id = pg."productId"`,
    (r) => r.productId,
    toProduct
  ),
  response: oneRecord(
    `rr.id, rr.review_id AS "reviewId", rr.body, rr.responder_name AS "responderName", rr.published,
      rr.metadata, rr.created_at AS "createdAt", rr.updated_at AS "updatedAt"`,
    "review_replies rr",
    `rr.organization_id = $1 AND rr.review_id = pg.id`,
    (r) => r.id,
    toReply
  ),
  files: orderedList(
    `f.id, f.file_name AS "fileName", f.content_type AS "contentType", f.size_bytes AS "sizeBytes", f.url,
      f.position`,
    "review_files f WHERE f.organization_id = $1 AND f.review_id = pg.id",
    toReviewFile
  ),
  answers: orderedList(
    `a.question_id AS "questionId", a.label, a.type, a.step, a.steps, a.low_label AS "lowLabel",
      a.high_label AS "highLabel", a.middle_label AS "middleLabel", a.option_labels AS "optionLabels", a.position`,
    "review_answers a WHERE a.organization_id = $1 AND a.review_id = pg.id",
    toSurveyAnswer
  ),
  // The counts kept on write (migration 102), one primary-key probe per row and value; a row whose value is null
  // reads nothing and is left out, as the loader is never asked for null values.
  collisions: {
    lateral: `(SELECT
        (SELECT n.reviews FROM review_value_counts n WHERE n.organization_id = $1 AND n.kind = 'browser_fingerprint'
          AND n.value = pg."browserFingerprint") AS fingerprint,
        (SELECT n.reviews FROM review_value_counts n WHERE n.organization_id = $1 AND n.kind = 'ip_address'
          AND n.value = pg."ipAddress") AS ip)`,
    width: 2,
    read: (rows, values, at): Reviews.CollisionCounts => {
      const browserFingerprint = new Map<string, number>()
      const ipAddress = new Map<string, number>()
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!
        if (r.browserFingerprint !== null) browserFingerprint.set(r.browserFingerprint, Number(values[i]![at] ?? 0))
        if (r.ipAddress !== null) ipAddress.set(r.ipAddress, Number(values[i]![at + 1] ?? 0))
      }
      return { browserFingerprint, ipAddress }
    }
  }
}

/**
 * `page` with the includes it reads itself, each a LATERAL subquery per row. The page's rows are numbered as the
 * page statement returns them and the result is ordered by that number, whatever plan the joins get.
 */
const withIncludes = (page: Statement, include: ReadonlyArray<Reviews.ReviewInclude>): Statement =>
  include.length === 0 ? page : {
    text: `SELECT pg.*, ${include.map((_, i) => `i${i}.*`).join(", ")}
  FROM (SELECT p.*, row_number() OVER () AS "+n" FROM (${page.text}) p) pg
  ${include.map((name, i) => `LEFT JOIN LATERAL ${foldedIncludes[name].lateral} i${i} ON true`).join("\n  ")}
  ORDER BY pg."+n"`,
    params: page.params
  }

/** The statement of a page with `include` read in it (for plan tests; `reviewPageRows` runs the same). */
export const reviewPageStatementWithIncludes = (
  organizationId: string,
  request: Parameters<Reviews.ReviewReader["page"]>[1],
  include: ReadonlyArray<Reviews.ReviewInclude>
): Statement => withIncludes(reviewPageStatement(organizationId, request), include)

/** Where the includes' columns start in a row of `withIncludes`: after the review's and the row number. */
const INCLUDES_AT = REVIEW_SELECT_NAMES.length + 1

/** What the page's rows give for each include read with them (see `foldedIncludes`). */
const loadedFrom = (
  page: PageRead,
  include: ReadonlyArray<Reviews.ReviewInclude>
): Partial<Reviews.ReviewIncludeLoads> => {
  const loaded: Partial<Record<Reviews.ReviewInclude, unknown>> = {}
  let at = INCLUDES_AT
  for (const name of include) {
    loaded[name] = foldedIncludes[name].read(page.rows, page.values, at)
    at += foldedIncludes[name].width
  }
  return loaded as Partial<Reviews.ReviewIncludeLoads>
}

/** A page's rows as objects (the review's columns) and as the values they were read as (with the includes'). */
interface PageRead {
  readonly rows: ReadonlyArray<PageRow>
  readonly values: ReadonlyArray<Values>
}

/**
 * The rows of one page, by the cheapest of the steps of `SEARCH_WINDOW` that is exact for the request, each named
 * as `StoredReviewDbRow` by the statement itself (`REVIEW_SELECT`), for `toStoredReview`. With `include`, each row
 * also carries those includes' columns (`foldedIncludes`); without, it is the page statement alone.
 */
export const reviewPageRows = (
  sql: SqlClient.SqlClient,
  organizationId: string,
  request: Parameters<Reviews.ReviewReader["page"]>[1],
  limits: { readonly window: number; readonly candidatesMax: number } = {
    window: SEARCH_WINDOW,
    candidatesMax: SEARCH_CANDIDATES_MAX
  },
  include: ReadonlyArray<Reviews.ReviewInclude> = []
) =>
  Effect.gen(function*() {
    const raw = withoutTransforms(sql)
    const run = (statement: Statement): Effect.Effect<PageRead, SqlError.SqlError> => {
      const s = withIncludes(statement, include)
      return Effect.map(raw.unsafe(s.text, s.params).values, (values) => ({
        rows: rowsOfValues<PageRow>(REVIEW_SELECT_NAMES, values),
        values
      }))
    }
    if (!indexedSearchTerm(request.search)) return yield* run(reviewPageStatement(organizationId, request))
    const windowed = yield* run(reviewPageStatement(organizationId, request, { _tag: "Window", size: limits.window }))
    if (windowed.rows.length > request.limit) return windowed
    const probe = searchCandidatesStatement(organizationId, request.search, limits.candidatesMax)
    const found = yield* sql.unsafe<{ readonly id: string }>(probe.text, probe.params)
    if (found.length > limits.candidatesMax) return yield* run(reviewPageStatement(organizationId, request))
    if (found.length === 0) return { rows: [], values: [] } satisfies PageRead
    const ids = [...new Set(found.map((r) => String(r.id)))]
    return yield* run(reviewPageStatement(organizationId, request, { _tag: "Candidates", ids }))
  })

const groupBy = <R extends object, A>(
  rows: ReadonlyArray<R>,
  key: keyof R,
  map: (r: R) => A
): ReadonlyMap<string, ReadonlyArray<A>> => {
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

const makePgReviewReader = (sql: SqlClient.SqlClient): Reviews.ReviewReader => {
  const raw = withoutTransforms(sql)
  const byId = <R extends object, A>(rows: ReadonlyArray<R>, key: keyof R, map: (r: R) => A): ReadonlyMap<string, A> =>
    new Map(rows.map((r) => [String(r[key]), map(r)]))
  /**
   * A loader reading `text`, whose `$1` is the organization and `$2` the keys: one statement text whatever the
   * number of keys (an array parameter rather than `IN ($2, $3, …)`), so the prepared statement is reused.
   */
  const keyed =
    <R extends object, A>(text: string, collect: (rows: ReadonlyArray<R>) => A) =>
    (organizationId: Kernel.OrganizationId, ids: ReadonlyArray<string>) =>
      raw.unsafe<R>(text, [organizationId, uuidArray(ids)]).pipe(Effect.map(collect), orDie)
  return {
    page: (organizationId, request) => {
      const include = [...new Set(request.include)]
      return reviewPageRows(sql, organizationId, request, undefined, include).pipe(
        Effect.map((read): Reviews.StoredReviewPage => {
          const stored = read.rows.map(toStoredReview)
          const page = Kernel.toPage(stored, request, (s) => ({
            value: Kernel.normalizeValue(request.sort.type, (s.record as Record<string, unknown>)[request.sort.field]),
            id: s.record.id
          }))
          return include.length === 0 ? page : { ...page, loaded: loadedFrom(read, include) }
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
            byId(
              rows,
              "id",
              (r): Reviews.ImportJob => ({
                id: r.id,
                type: r.type,
                action: r.action,
                createdAt: toTimestamp(r.createdAt)
              })
            )
          ),
          orDie
        ),
      // Here down to `answers` (`keyed`): named columns without the client's renames (kernel/RawRows.ts).
      customers: keyed(
        `SELECT ${CUSTOMER_SELECT} FROM customers c WHERE c.organization_id = $1 AND c.id = ANY($2::uuid[])`,
        (rows: ReadonlyArray<Row>) => byId(rows, "id", toCustomer)
      ),
      products: keyed(
        `SELECT ${PRODUCT_SELECT} FROM products p WHERE p.organization_id = $1 AND p.id = ANY($2::uuid[])`,
        (rows: ReadonlyArray<Row>) => byId(rows, "id", toProduct)
      ),
      responses: keyed(
        `SELECT id, review_id AS "reviewId", body, responder_name AS "responderName", published, metadata,
            created_at AS "createdAt", updated_at AS "updatedAt"
          FROM review_replies WHERE organization_id = $1 AND review_id = ANY($2::uuid[])`,
        (rows: ReadonlyArray<ReplyDbRow & { readonly reviewId: string }>) => byId(rows, "reviewId", toReply)
      ),
      files: keyed(
        `SELECT review_id AS "reviewId", id, file_name AS "fileName", content_type AS "contentType",
            size_bytes AS "sizeBytes", url
          FROM review_files WHERE organization_id = $1 AND review_id = ANY($2::uuid[])
          ORDER BY review_id, position`,
        (rows: ReadonlyArray<FileDbRow & { readonly reviewId: string }>) => groupBy(rows, "reviewId", toReviewFile)
      ),
      answers: keyed(
        `SELECT review_id AS "reviewId", question_id AS "questionId", label, type, step, steps, low_label AS "lowLabel",
            high_label AS "highLabel", middle_label AS "middleLabel", option_labels AS "optionLabels"
          FROM review_answers WHERE organization_id = $1 AND review_id = ANY($2::uuid[])
          ORDER BY review_id, position`,
        (rows: ReadonlyArray<AnswerDbRow & { readonly reviewId: string }>) => groupBy(rows, "reviewId", toSurveyAnswer)
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
          [
            organizationId,
            JSON.stringify([
              ...keys.browserFingerprints.map((value) => ({ kind: "browser_fingerprint", value })),
              ...keys.ipAddresses.map((value) => ({ kind: "ip_address", value }))
            ])
          ]
        ).pipe(
          Effect.map((rows): Reviews.CollisionCounts => {
            const browserFingerprint = new Map<string, number>()
            const ipAddress = new Map<string, number>()
            for (const r of rows) {
              ;(r.kind === "browser_fingerprint" ? browserFingerprint : ipAddress).set(r.value, Number(r.reviews ?? 0))
            }
            return { browserFingerprint, ipAddress }
          }),
          orDie
        )
    }
  }
}

export const PgReviewRepository = Layer.effect(
  Reviews.ReviewRepository,
  Effect.map(SqlClient.SqlClient, (sql) => Reviews.ReviewRepository.fromReader(makePgReviewReader(sql)))
)
