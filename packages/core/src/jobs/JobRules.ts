/**
 * Pure rules of import and export jobs (docs/DECISIONS.md §20): how a CSV record becomes a row object, how a staged
 * row is decoded with the matching import's row schema, how an exported review is written so that it imports again,
 * and how a job's progress and skipped list grow.
 */
import { Result, Schema } from "effect"
import { CustomerCreate, ProductCreate } from "../catalog/CatalogRequests.ts"
import { requestIssuesOf } from "../kernel/RequestIssues.ts"
import type { Review } from "../reviews/Review.ts"
import { ReviewImportRow } from "../reviews/ReviewRequests.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import { type JobProgress, type JobRecord, type JobSkippedRow, type JobType, MAX_LISTED_SKIPPED } from "./Job.ts"

// ---------------------------------------------------------------------------------------------------------------
// CSV cells → row fields

type CellKind = "number" | "boolean" | "json"

/**
 * Cells are text; these columns hold other types (docs/JOBS.md, column mapping). Lists and objects are JSON in the
 * cell. Every other column is text, and an empty cell is an absent field.
 */
const cellKinds: Record<JobType, Record<string, CellKind>> = {
  reviews: {
    rating: "number",
    published: "boolean",
    pending: "boolean",
    verifiedBuyer: "boolean",
    imageUrls: "json",
    answers: "json",
    metadata: "json",
    flagged: "boolean",
    flags: "json",
    submitSeconds: "number"
  },
  products: { metadata: "json" },
  customers: { metadata: "json", emailOptOut: "boolean" }
}

const cellValue = (kind: CellKind | undefined, cell: string): unknown => {
  switch (kind) {
    case "number": {
      const n = Number(cell)
      return cell.trim() !== "" && Number.isFinite(n) ? n : cell
    }
    case "boolean": {
      const lower = cell.trim().toLowerCase()
      return lower === "true" ? true : lower === "false" ? false : cell
    }
    case "json":
      try {
        return JSON.parse(cell)
      } catch {
        // Left as text: the row's decoding then says what the field should be.
        return cell
      }
    default:
      return cell
  }
}

/** Whether a column's cells hold JSON (a list or an object) for the job's type. */
export const isJsonColumn = (type: JobType, column: string): boolean => cellKinds[type][column] === "json"

/**
 * Spreadsheet formulas (OWASP, CSV injection): a cell that starts with `=`, `+`, `-`, `@`, a tab or a CR is run by
 * spreadsheet programs, so an export writes it behind a `'`. To keep the escape reversible, a text made of quotes
 * then such a character gets one more quote too, and an import removes exactly one quote from any cell of that
 * shape (docs/JOBS.md): every exported file imports as the same values.
 */
const formulaLike = /^'*[=+\-@\t\r]/

export const neutraliseFormula = (text: string): string => formulaLike.test(text) ? `'${text}` : text

export const unneutraliseFormula = (cell: string): string =>
  cell.charCodeAt(0) === 0x27 && formulaLike.test(cell) ? cell.slice(1) : cell

/** A CSV record (header → cell) as the row object the JSON import would take. */
export const rowOfCsvRecord = (type: JobType, record: Readonly<Record<string, string>>): Record<string, unknown> => {
  const kinds = cellKinds[type]
  const row: Record<string, unknown> = {}
  for (const [column, cell] of Object.entries(record)) {
    if (cell === "") continue
    row[column] = cellValue(kinds[column], unneutraliseFormula(cell))
  }
  return row
}

// ---------------------------------------------------------------------------------------------------------------
// Staged row → import row

/**
 * Review fields an export writes that an import does not set (ids of the exporting organization, moderation and
 * fraud signals). An import accepts and ignores them, so an exported file imports as it is; any other unknown
 * column is refused like an unknown field of the JSON import.
 */
const EXPORT_ONLY_REVIEW_FIELDS: ReadonlyArray<string> = [
  "id",
  "siteId",
  "productId",
  "productVariantId",
  "customerId",
  "surveyId",
  "originalTitle",
  "originalBody",
  "redactedAt",
  "flagged",
  "flags",
  "moderatedAt",
  "ipAddress",
  "browserFingerprint",
  "ipCountry",
  "userAgent",
  "submitSeconds",
  "updatedAt"
]

const rowSchemas = {
  reviews: ReviewImportRow,
  products: ProductCreate,
  customers: CustomerCreate
} as const

export type DecodedRow =
  | { readonly _tag: "Row"; readonly value: unknown }
  | { readonly _tag: "Invalid"; readonly message: string }

const describe = (error: Schema.SchemaError): string => {
  const { issues, total } = requestIssuesOf("", error)
  const shown = issues.slice(0, 3).map((i) => i.path === "" ? i.message : `${i.path} ${i.message}`)
  return shown.join("; ") + (total > shown.length ? ` (and ${total - shown.length} more)` : "")
}

/** A staged row's JSON text decoded with the row schema of the job's type, or why it cannot be. */
export const decodeStagedRow = (type: JobType, text: string): DecodedRow => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { _tag: "Invalid", message: "is not valid JSON" }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { _tag: "Invalid", message: "must be a JSON object of the import's row fields" }
  }
  // A null field is an absent one, as an empty CSV cell is: an NDJSON export writes every field, nulls included.
  const input: Record<string, unknown> = Object.fromEntries(
    Object.entries(parsed).filter(([, value]) => value !== null)
  )
  if (type === "reviews") { for (const field of EXPORT_ONLY_REVIEW_FIELDS) delete input[field] }
  const decoded = Schema.decodeUnknownResult(rowSchemas[type] as Schema.Codec<unknown, unknown>)(input, {
    onExcessProperty: "error"
  })
  return Result.isSuccess(decoded)
    ? { _tag: "Row", value: decoded.success }
    : { _tag: "Invalid", message: describe(decoded.failure) }
}

/**
 * A row's text as a store can keep it: a raw NUL or a lone surrogate (which no JSON text may hold raw, and no
 * PostgreSQL text can) is written as its JSON escape, so the row is still refused by its decoding, not by the store.
 */
export const stageableText = (text: string): string =>
  text.replace(
    /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

// ---------------------------------------------------------------------------------------------------------------
// Claims

/** A job as a worker's claim leaves it: running under the worker's lease, started when it was first claimed. */
export const claimedJob = (job: JobRecord, owner: string, at: Timestamp, leaseUntil: Timestamp): JobRecord => ({
  ...job,
  status: "running",
  startedAt: job.startedAt ?? at,
  leaseOwner: owner,
  leaseExpiresAt: leaseUntil
})

// ---------------------------------------------------------------------------------------------------------------
// Progress

/** The job's progress and skipped list after a batch: counts always grow, the list stops at its cap. */
export const advanceProgress = (
  progress: JobProgress,
  skippedList: ReadonlyArray<JobSkippedRow>,
  batch: { readonly processed: number; readonly imported: number; readonly skipped: ReadonlyArray<JobSkippedRow> }
): { readonly progress: JobProgress; readonly skipped: ReadonlyArray<JobSkippedRow> } => ({
  progress: {
    totalRows: progress.totalRows,
    processedRows: progress.processedRows + batch.processed,
    importedRows: progress.importedRows + batch.imported,
    skippedRows: progress.skippedRows + batch.skipped.length
  },
  skipped: skippedList.length >= MAX_LISTED_SKIPPED
    ? skippedList
    : [...skippedList, ...batch.skipped.slice(0, MAX_LISTED_SKIPPED - skippedList.length)]
})

// ---------------------------------------------------------------------------------------------------------------
// Export

/**
 * One exported review's fields, in column order: the import's row fields first (naming related records by what
 * another organization can resolve: product slug, customer email, reply text, image URLs), then every other field of
 * the list's review. A table, so the columns and the row cannot drift apart.
 */
const reviewExportFields = [
  ["externalId", (r) => r.externalId],
  ["product", (r) => r.product?.slug],
  ["productVariant", (r) => r.productVariantId],
  ["customer", (r) => r.customer?.email],
  ["title", (r) => r.title],
  ["body", (r) => r.body],
  ["rating", (r) => r.rating],
  ["published", (r) => isPending(r) ? null : r.published],
  ["pending", (r) => isPending(r) ? true : null],
  ["verifiedBuyer", (r) => r.verifiedBuyer],
  ["createdAt", (r) => r.createdAt],
  ["imageUrls", (r) => r.files === undefined || r.files.length === 0 ? null : r.files.map((f) => f.url)],
  ["response", (r) => r.response?.body],
  ["responderName", (r) => r.response?.responderName],
  ["responseCreatedAt", (r) => r.response?.createdAt],
  ["answers", (r) => r.answers === undefined || r.answers.length === 0 ? null : r.answers],
  ["metadata", (r) => r.metadata],
  ["id", (r) => r.id],
  ["siteId", (r) => r.siteId],
  ["productId", (r) => r.productId],
  ["productVariantId", (r) => r.productVariantId],
  ["customerId", (r) => r.customerId],
  ["surveyId", (r) => r.surveyId],
  ["originalTitle", (r) => r.originalTitle],
  ["originalBody", (r) => r.originalBody],
  ["redactedAt", (r) => r.redactedAt],
  ["flagged", (r) => r.flagged],
  ["flags", (r) => r.flags],
  ["moderatedAt", (r) => r.moderatedAt],
  ["ipAddress", (r) => r.ipAddress],
  ["browserFingerprint", (r) => r.browserFingerprint],
  ["ipCountry", (r) => r.ipCountry],
  ["userAgent", (r) => r.userAgent],
  ["submitSeconds", (r) => r.submitSeconds],
  ["updatedAt", (r) => r.updatedAt]
] as const satisfies ReadonlyArray<readonly [string, (review: Review) => unknown]>

const isPending = (review: Review) => !review.published && review.moderatedAt === null

/** The columns of a review export, in order. */
export const REVIEW_EXPORT_COLUMNS = reviewExportFields.map(([column]) => column)

/** The include list an export reads reviews with, to write the import's reference fields. */
export const REVIEW_EXPORT_INCLUDES = "product,customer,response,files,answers"

/**
 * One exported review: every export field in column order, `null` where the review has no value (NDJSON writes it,
 * CSV leaves the cell empty); an import reads a `null` as an absent field, so the row is also a valid import row.
 */
const reviewExportValues = (review: Review): Array<unknown> =>
  reviewExportFields.map(([, value]) => value(review) ?? null)

/** Each column's key as an NDJSON line writes it before the value: `{"externalId":`, `,"product":`, … */
const ndjsonKeys = REVIEW_EXPORT_COLUMNS.map((column, i) => `${i === 0 ? "{" : ","}${JSON.stringify(column)}:`)

/**
 * One exported review's line in the job's format. An NDJSON line is the text `JSON.stringify` gives the row object
 * (every column, in order), written value by value from the column table: a row object of every column would be
 * built by keyed stores past V8's fast-property limit, a dictionary that takes longer to build and to stringify than
 * the line itself, once per exported row (docs/DECISIONS.md §39).
 */
export const reviewExportLine = (format: "csv" | "ndjson", review: Review): string => {
  const values = reviewExportValues(review)
  if (format === "csv") return csvLine(values)
  let line = ""
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    line += ndjsonKeys[i] + (value === null ? "null" : JSON.stringify(value))
  }
  return `${line}}\n`
}

/**
 * One CSV field (RFC 4180): quoted when it holds a quote, comma, CR or LF, quotes doubled. Lists and objects are
 * JSON; absent values are empty; a formula is neutralised. A six-line rule, so the core needs no CSV library for
 * writing.
 */
const csvField = (value: unknown): string => {
  if (value === undefined || value === null) return ""
  const text = neutraliseFormula(typeof value === "object" ? JSON.stringify(value) : String(value))
  return /[",\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

export const csvLine = (fields: ReadonlyArray<unknown>): string => fields.map(csvField).join(",") + "\r\n"

export const exportHeader = (format: "csv" | "ndjson"): string => format === "csv" ? csvLine(REVIEW_EXPORT_COLUMNS) : ""
