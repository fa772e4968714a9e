/**
 * The PostgreSQL side of review rows: the review as jsonb (event data), row mappings, and the set-based INSERT
 * statements (rows travel as one JSON array parameter, `$2`, expanded with
 * `jsonb_to_recordset`) shared by the stores and the test kit.
 */
import { jsonValue } from "../kernel/SqlRows.ts"
import { CUSTOMER_COLUMNS, CUSTOMER_RECORDSET } from "../catalog/CatalogRows.ts"
import type { Kernel, Reviews } from "@feedback/core"
import { arrayLiteral, quotedElement } from "../kernel/ArrayLiterals.ts"
import { type EventIdSeed, eventIdSql } from "../kernel/EventIds.ts"
import { toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"

/** A timestamptz as the API writes it: UTC, milliseconds, trailing Z (the canonical Timestamp). */
const tsJson = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * The review in the API's shape without extras, as jsonb: `FROM <rows> a ${reviewJsonJoin("a")}` makes
 * `to_jsonb(review_json)` that review. A row of aliased columns turned into jsonb at once is markedly cheaper than
 * `jsonb_build_object` with 52 arguments, which matters for bulk events (docs/DECISIONS.md §25). The columns
 * come in jsonb's own key order (shorter keys first, then bytewise), so building each object sorts nothing: its
 * sort finds the keys already in order. Any order gives the same jsonb. A statement that
 * set `updated_at`/`moderated_at` to one canonical Timestamp parameter passes that parameter as text in `set`,
 * which spares two `to_char` calls per row and gives the same string.
 */
export const reviewJsonJoin = (a: string, set: { readonly updatedAt?: string; readonly moderatedAt?: string } = {}) =>
  `CROSS JOIN LATERAL (SELECT ${
    REVIEW_JSON_FIELDS.map(([column, key, timestamp]) => {
      const value = set[key as keyof typeof set] ?? (timestamp ? tsJson(`${a}.${column}`) : `${a}.${column}`)
      return column === key ? value : `${value} AS "${key}"`
    }).join(", ")
  }) AS review_json`

/**
 * The review's columns and their keys in the event data, in jsonb's key order (see `reviewJsonJoin`); `true` marks
 * a timestamp, written as canonical text.
 */
const REVIEW_JSON_FIELDS: ReadonlyArray<readonly [column: string, key: string, timestamp?: boolean]> = [
  ["id", "id"],
  ["body", "body"],
  ["flags", "flags"],
  ["title", "title"],
  ["rating", "rating"],
  ["site_id", "siteId"],
  ["flagged", "flagged"],
  ["metadata", "metadata"],
  ["survey_id", "surveyId"],
  ["created_at", "createdAt", true],
  ["ip_address", "ipAddress"],
  ["ip_country", "ipCountry"],
  ["product_id", "productId"],
  ["published", "published"],
  ["updated_at", "updatedAt", true],
  ["user_agent", "userAgent"],
  ["customer_id", "customerId"],
  ["external_id", "externalId"],
  ["redacted_at", "redactedAt", true],
  ["moderated_at", "moderatedAt", true],
  ["original_body", "originalBody"],
  ["original_title", "originalTitle"],
  ["submit_seconds", "submitSeconds"],
  ["verified_buyer", "verifiedBuyer"],
  ["product_variant_id", "productVariantId"],
  ["browser_fingerprint", "browserFingerprint"]
]

/**
 * The columns of `reviews` that `reviewJsonJoin(a, set)` reads from `a` (those `set` replaces left out), for a
 * `RETURNING` that keeps no more than the event data needs: a bulk moderation holds 100,000 of these rows.
 */
export const reviewJsonColumns = (set: { readonly updatedAt?: string; readonly moderatedAt?: string } = {}) =>
  REVIEW_JSON_FIELDS.filter(([, key]) => set[key as keyof typeof set] === undefined).map(([column]) => column)

export const json = jsonValue

export interface ReviewDbRow {
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

/**
 * A `reviews` row as the record, however it was read: through the client's renames, or named by the statement
 * itself (`REVIEW_SELECT`, kernel/RawRows.ts). JSON reads as stored either way (`PgDatabase.naming`).
 */
export const toReview = (r: ReviewDbRow): Reviews.ReviewRecord => ({
  id: r.id as Reviews.ReviewRecord["id"],
  siteId: r.siteId as Reviews.ReviewRecord["siteId"],
  productId: r.productId as Reviews.ReviewRecord["productId"],
  productVariantId: r.productVariantId as Reviews.ReviewRecord["productVariantId"],
  customerId: r.customerId as Reviews.ReviewRecord["customerId"],
  surveyId: r.surveyId as Reviews.ReviewRecord["surveyId"],
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

export interface ReplyDbRow {
  readonly id: string
  readonly reviewId: string
  readonly body: string
  readonly responderName: string
  readonly published: boolean
  readonly metadata: unknown
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** A `review_replies` row (see `toReview`). */
export const toReply = (r: ReplyDbRow): Reviews.ReviewReply => ({
  id: r.id as Reviews.ReviewReply["id"],
  reviewId: r.reviewId as Reviews.ReviewReply["reviewId"],
  body: r.body,
  responderName: r.responderName,
  published: r.published,
  metadata: json(r.metadata),
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

export interface StoredReviewDbRow extends ReviewDbRow {
  readonly importJobId: string | null
  readonly importRow: number | string | null
}

/** A `reviews` row with its import provenance. */
export const toStoredReview = (r: StoredReviewDbRow): Reviews.StoredReview => ({
  record: toReview(r),
  importJobId: r.importJobId as Kernel.ImportJobId | null,
  importRow: r.importRow === null ? null : Number(r.importRow)
})

export interface FileDbRow {
  readonly id: string
  readonly fileName: string
  readonly contentType: string
  readonly sizeBytes: number | string
  readonly url: string
}

/** A `review_files` row (ordered by `position`). */
export const toReviewFile = (r: FileDbRow): Reviews.ReviewFile => ({
  id: r.id as Reviews.ReviewFile["id"],
  fileName: r.fileName,
  contentType: r.contentType,
  sizeBytes: Number(r.sizeBytes),
  url: r.url
})

export interface AnswerDbRow {
  readonly questionId: string
  readonly label: string
  readonly type: string
  readonly step: number | string
  readonly steps: number | string
  readonly lowLabel: string | null
  readonly highLabel: string | null
  readonly middleLabel: string | null
  readonly optionLabels: unknown
}

/** A `review_answers` row (ordered by `position`; see `toReview`). */
export const toSurveyAnswer = (r: AnswerDbRow): Reviews.SurveyAnswer => ({
  questionId: r.questionId as Reviews.SurveyAnswer["questionId"],
  label: r.label,
  type: r.type,
  step: Number(r.step),
  steps: Number(r.steps),
  lowLabel: r.lowLabel,
  highLabel: r.highLabel,
  middleLabel: r.middleLabel,
  optionLabels: json(r.optionLabels)
})

/** Each column of `reviews r` a page reads, and the name the client would give it (`StoredReviewDbRow`). */
const REVIEW_SELECT_COLUMNS: ReadonlyArray<readonly [column: string, name: string]> = [
  ["id", "id"],
  ["site_id", "siteId"],
  ["product_id", "productId"],
  ["product_variant_id", "productVariantId"],
  ["customer_id", "customerId"],
  ["survey_id", "surveyId"],
  ["title", "title"],
  ["body", "body"],
  ["original_title", "originalTitle"],
  ["original_body", "originalBody"],
  ["redacted_at", "redactedAt"],
  ["rating", "rating"],
  ["published", "published"],
  ["verified_buyer", "verifiedBuyer"],
  ["flagged", "flagged"],
  ["flags", "flags"],
  ["moderated_at", "moderatedAt"],
  ["ip_address", "ipAddress"],
  ["browser_fingerprint", "browserFingerprint"],
  ["ip_country", "ipCountry"],
  ["user_agent", "userAgent"],
  ["submit_seconds", "submitSeconds"],
  ["metadata", "metadata"],
  ["external_id", "externalId"],
  ["created_at", "createdAt"],
  ["updated_at", "updatedAt"],
  ["import_job_id", "importJobId"],
  ["import_row", "importRow"]
]

/**
 * The columns of `reviews r` under the names the client would give them (`StoredReviewDbRow`), for statements run
 * without the client's transforms, which rename every cell of every row (docs/DECISIONS.md §26).
 */
export const REVIEW_SELECT = REVIEW_SELECT_COLUMNS.map(([c, n]) => (c === n ? `r.${c}` : `r.${c} AS "${n}"`)).join(", ")

/** The names of `REVIEW_SELECT`'s columns, in its order (for `rowsOfValues`). */
export const REVIEW_SELECT_NAMES: ReadonlyArray<string> = REVIEW_SELECT_COLUMNS.map(([, n]) => n)

const rowMakers = new Map<string, (values: ReadonlyArray<unknown>) => Record<string, unknown>>()

/**
 * Rows as objects with the given column names, from a statement read as arrays of values (`.values`): one object
 * literal with constant keys, compiled once per column list, where the client's own rows are built key by key
 * (a dictionary per row, slower to build and to read; docs/DECISIONS.md §33). Names are the statement's
 * own column names, in order.
 */
export const rowsOfValues = <A>(
  names: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>
): Array<A> => {
  const key = names.join("\u0000")
  let make = rowMakers.get(key)
  if (make === undefined) {
    make = new Function("v", `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(", ")}}`) as (
      values: ReadonlyArray<unknown>
    ) => Record<string, unknown>
    rowMakers.set(key, make)
  }
  const out = new Array<A>(rows.length)
  for (let i = 0; i < rows.length; i++) out[i] = make(rows[i]!) as A
  return out
}

export const REVIEW_COLUMNS =
  `id, site_id, product_id, product_variant_id, customer_id, survey_id, title, body, original_title,
  original_body, redacted_at, rating, published, verified_buyer, flagged, flags, moderated_at, ip_address,
  browser_fingerprint, ip_country, user_agent, submit_seconds, metadata, external_id, created_at, updated_at`

/**
 * A review as one element of the JSON array that `jsonb_to_recordset(… AS x(${REVIEW_RECORDSET}))` expands. A null
 * column is left out (`undefined`, which JSON.stringify drops): a missing key expands to NULL all the same, and an
 * imported review has a dozen of them, so the text Node writes and PostgreSQL parses is shorter.
 */
export const reviewInput = (review: Reviews.ReviewRecord, importRow: number | null) => ({
  id: review.id,
  site_id: review.siteId ?? undefined,
  product_id: review.productId,
  product_variant_id: review.productVariantId ?? undefined,
  customer_id: review.customerId ?? undefined,
  survey_id: review.surveyId ?? undefined,
  title: review.title ?? undefined,
  body: review.body ?? undefined,
  original_title: review.originalTitle ?? undefined,
  original_body: review.originalBody ?? undefined,
  redacted_at: review.redactedAt ?? undefined,
  rating: review.rating,
  published: review.published,
  verified_buyer: review.verifiedBuyer,
  flagged: review.flagged,
  flags: review.flags,
  moderated_at: review.moderatedAt ?? undefined,
  ip_address: review.ipAddress ?? undefined,
  browser_fingerprint: review.browserFingerprint ?? undefined,
  ip_country: review.ipCountry ?? undefined,
  user_agent: review.userAgent ?? undefined,
  submit_seconds: review.submitSeconds ?? undefined,
  metadata: review.metadata,
  external_id: review.externalId ?? undefined,
  import_row: importRow ?? undefined,
  created_at: review.createdAt,
  updated_at: review.updatedAt
})

export const REVIEW_RECORDSET =
  `id uuid, site_id uuid, product_id uuid, product_variant_id uuid, customer_id uuid, survey_id uuid,
  title text, body text, original_title text, original_body text, redacted_at timestamptz, rating double precision,
  published boolean, verified_buyer boolean, flagged boolean, flags jsonb, moderated_at timestamptz, ip_address text,
  browser_fingerprint text, ip_country text, user_agent text, submit_seconds double precision, metadata jsonb,
  external_id text, import_row integer, created_at timestamptz, updated_at timestamptz`

/**
 * INSERT of the reviews in `$2` (JSON array of `reviewInput`) for organization `$1` with import job `$3`; with
 * `event`, the same statement records that event (occurred at `$4`, and `$11` the same as text; ids from the seed
 * whose two parameters `event.ids` names, kernel/EventIds.ts) for each inserted review in row order. `$2` is read as
 * `json`, not `jsonb`: the rows are expanded once, so building a jsonb of the whole array first (megabytes for an
 * import) is wasted work. `ctes` are further data-modifying CTEs run by the same statement; `rows` replaces the JSON
 * array as the source of the rows (`x`, with `REVIEW_RECORDSET`'s columns).
 */
export const insertReviewsSql = (
  event: { readonly name: string; readonly ids: EventIdSeed } | undefined,
  ctes = "",
  rows = `json_to_recordset($2::json) AS x(${REVIEW_RECORDSET})`
) => {
  const insert = `INSERT INTO reviews (organization_id, ${REVIEW_COLUMNS}, import_job_id, import_row)
    SELECT $1::uuid, ${REVIEW_COLUMNS}, $3::uuid, import_row
    FROM ${rows}`
  if (event === undefined) return ctes === "" ? insert : `WITH ${ctes} ${insert}`
  return `WITH ${ctes === "" ? "" : `${ctes}, `}inserted AS (${insert} RETURNING *)
    INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
    SELECT i.organization_id, ${
    eventIdSql(...event.ids, "ORDER BY i.import_row, i.id")
  }, '${event.name}', to_jsonb(review_json),
      $4::timestamptz
    FROM inserted i ${reviewJsonJoin("i", { updatedAt: atOr("i.updated_at"), moderatedAt: atOr("i.moderated_at") })}
    ORDER BY i.import_row, i.id`
}

/** `REVIEW_RECORDSET`'s columns as (name, type) pairs, in its order. */
const REVIEW_RECORDSET_COLUMNS: ReadonlyArray<readonly [name: string, type: string]> = REVIEW_RECORDSET.split(",").map(
  (c) => {
    const [name, ...type] = c.trim().split(/\s+/)
    return [name!, type.join(" ")] as const
  }
)

/**
 * The reviews of an import slice as columns: `unnest` over one array parameter per column (`$2` the ids, then
 * `$12`, `$13`, … in `REVIEW_RECORDSET`'s order), with the same columns as `json_to_recordset` over `reviewInput`
 * rows. PostgreSQL reads an array literal per column faster than a JSON array of objects, which it validates whole
 * at bind, then parses again, object by object (docs/DECISIONS.md §36).
 */
export const REVIEW_UNNEST = `unnest(${
  REVIEW_RECORDSET_COLUMNS.map(([, type], i) => `${i === 0 ? "$2" : `$${10 + i + 1}`}::${type}[]`).join(", ")
}) AS x(${REVIEW_RECORDSET_COLUMNS.map(([name]) => name).join(", ")})`

/**
 * An element of a column's array literal: numbers and booleans bare (their text holds nothing an array literal
 * must quote), jsonb as its JSON text, any other value (text, ids, timestamps) quoted as text, so that no value can
 * split into two elements and shift the rows of one column against the others. A missing value is NULL.
 */
const elementOf = (type: string): (value: unknown) => string =>
  type === "jsonb"
    ? (v) => quotedElement(JSON.stringify(v))
    : (v) => typeof v === "number" || typeof v === "boolean" ? String(v) : quotedElement(String(v))

const REVIEW_COLUMN_ELEMENTS = REVIEW_RECORDSET_COLUMNS.map(([name, type]) => [name, elementOf(type)] as const)

/**
 * The array literals of `REVIEW_UNNEST` for the rows (`reviewInput` objects): the ids (`$2`), then the other
 * columns in order (`$12`, …).
 */
export const reviewColumnsInput = (rows: ReadonlyArray<Record<string, unknown>>): Array<string> =>
  REVIEW_COLUMN_ELEMENTS.map(([name, element]) =>
    arrayLiteral(rows.length, (i) => {
      const value = rows[i]![name]
      return value === undefined || value === null ? null : element(value)
    })
  )

/**
 * The column as canonical text: `$11` (the text of `$4`, a canonical Timestamp) when it holds that instant, as an
 * imported review's `updated_at` and `moderated_at` do, else `to_char`. The same string either way, without a
 * `to_char` per row in the common case.
 */
const atOr = (column: string) => `CASE WHEN ${column} = $4::timestamptz THEN $11::text ELSE ${tsJson(column)} END`

export const filesInput = (reviewId: string, files: ReadonlyArray<Reviews.ReviewFile>) =>
  files.map((f, position) => ({
    id: f.id,
    review_id: reviewId,
    file_name: f.fileName,
    content_type: f.contentType,
    size_bytes: f.sizeBytes,
    url: f.url,
    position
  }))

const insertFilesFrom = (rows: string) =>
  `INSERT INTO review_files (organization_id, id, review_id, file_name, content_type, size_bytes, url, position)
  SELECT $1::uuid, id, review_id, file_name, content_type, size_bytes, url, position
  FROM jsonb_to_recordset(${rows}::jsonb) AS x(id uuid, review_id uuid, file_name text, content_type text, size_bytes bigint,
    url text, position integer)`
export const INSERT_FILES = insertFilesFrom("$2")

export const answersInput = (reviewId: string, answers: ReadonlyArray<Reviews.SurveyAnswer>) =>
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

const insertAnswersFrom = (rows: string) =>
  `INSERT INTO review_answers (organization_id, review_id, position, question_id, label, type, step, steps,
    low_label, high_label, middle_label, option_labels)
  SELECT $1::uuid, review_id, position, question_id, label, type, step, steps, low_label, high_label, middle_label,
    option_labels
  FROM jsonb_to_recordset(${rows}::jsonb) AS x(review_id uuid, position integer, question_id uuid, label text, type text,
    step integer, steps integer, low_label text, high_label text, middle_label text, option_labels jsonb)`
export const INSERT_ANSWERS = insertAnswersFrom("$2")

export const replyInput = (r: Reviews.ReviewReply) => ({
  id: r.id,
  review_id: r.reviewId,
  body: r.body,
  responder_name: r.responderName,
  published: r.published,
  metadata: r.metadata,
  created_at: r.createdAt,
  updated_at: r.updatedAt
})

const insertRepliesFrom = (rows: string) =>
  `INSERT INTO review_replies (organization_id, id, review_id, body, responder_name, published, metadata,
    created_at, updated_at)
  SELECT $1::uuid, id, review_id, body, responder_name, published, metadata, created_at, updated_at
  FROM jsonb_to_recordset(${rows}::jsonb) AS x(id uuid, review_id uuid, body text, responder_name text, published boolean,
    metadata jsonb, created_at timestamptz, updated_at timestamptz)`
export const INSERT_REPLIES = insertRepliesFrom("$2")

/** INSERT of the customers in `$2` (JSON array of `customerInput`) for organization `$1`. */
export const INSERT_CUSTOMERS = `INSERT INTO customers (organization_id, ${CUSTOMER_COLUMNS})
  SELECT $1::uuid, ${CUSTOMER_COLUMNS} FROM jsonb_to_recordset($2::jsonb) AS x(${CUSTOMER_RECORDSET})`

/** An advisory-lock class for "imports of one organization" (the second key is a hash of the organization). */
export const IMPORT_LOCK_CLASS = 7_240_114

/** The seed of an import slice's event ids (`EventIds.ts`): the two parameters after `REVIEW_UNNEST`'s. */
const IMPORT_EVENT_IDS: EventIdSeed = [
  `$${11 + REVIEW_RECORDSET_COLUMNS.length}`,
  `$${12 + REVIEW_RECORDSET_COLUMNS.length}`
]

/**
 * One slice of an import in ONE statement (one round trip instead of five): the job row (`$5` type, `$6` action,
 * `$7` created at; kept if it exists), the reviews (`REVIEW_UNNEST`: `$2` and `$12`…) and their `review.created`
 * events (`insertReviewsSql`, `$11`, ids from `IMPORT_EVENT_IDS`), and their files (`$8`), survey answers (`$9`)
 * and replies (`$10`). The foreign keys of files, answers, replies and reviews to rows inserted by the same statement
 * hold: PostgreSQL checks them when the whole statement has run.
 */
export const IMPORT_SLICE_SQL = insertReviewsSql(
  { name: "review.created", ids: IMPORT_EVENT_IDS },
  `job AS (INSERT INTO import_jobs (organization_id, id, type, action, created_at)
     VALUES ($1::uuid, $3::uuid, $5, $6, $7::timestamptz) ON CONFLICT DO NOTHING),
   files AS (${insertFilesFrom("$8")}),
   answers AS (${insertAnswersFrom("$9")}),
   replies AS (${insertRepliesFrom("$10")})`,
  REVIEW_UNNEST
)
