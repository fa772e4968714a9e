/**
 * What the review write side accepts (spec: Reviews endpoints; docs/DECISIONS.md §1, §5), as Schemas shared by the HTTP
 * contract and embedding hosts. Bodies are strict (the HTTP adapter rejects unknown keys); `null` is accepted only
 * where the spec says "or null" (`title`, `body`), modelled with `optionalKey(NullOr(...))` so that `null` and an
 * omitted field stay distinct.
 *
 * Every stored string is `StoredText` (`Text.ts`): no NUL, no lone surrogate, bounded length checked first.
 */
import { Schema } from "effect"
import { BoundedArray } from "../kernel/BoundedArray.ts"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { ProductVariantId, ReviewId, SiteId, Uuid } from "../kernel/Ids.ts"
import { MetadataInput } from "../kernel/Metadata.ts"
import { ReviewDeletionReason } from "./Review.ts"
import { parseTimestampValue } from "../kernel/Filter.ts"
import { BoundedText, RequiredText, StoredText } from "../kernel/Text.ts"
import { validInstantPattern } from "../kernel/Timestamp.ts"

/** A review's `title` and `body` are at most this long, wherever they come from (create, redaction, import). */
export const REVIEW_TITLE_MAX_LENGTH = 500
export const REVIEW_BODY_MAX_LENGTH = 20_000

export const ReviewTitle = BoundedText(REVIEW_TITLE_MAX_LENGTH)
export const ReviewBody = BoundedText(REVIEW_BODY_MAX_LENGTH)

/** Any ISO 8601 date-time with an offset (normalised later with `parseTimestampValue`). */
export const InstantInput = Schema.String.check(
  Schema.isMaxLength(64).abort(),
  Schema.makeFilter((s: string) =>
    parseTimestampValue(s) === undefined
      ? "must be an ISO 8601 date-time with a time zone, such as 2026-01-31T12:00:00Z"
      : undefined, { arbitraryConstraint: { patterns: [validInstantPattern] } })
)

/** A rating as customers give it: 1 to 5. */
export const Rating = Schema.Finite.check(Schema.isBetween({ minimum: 1, maximum: 5 }))

/** An email address (matched case-insensitively; stored lower-cased). */
const ReviewImportEmail = EmailAddress

/** An http(s) URL of an image to attach. */
const ImageUrlInput = BoundedText(2048).check(
  Schema.makeFilter((s: string) => {
    try {
      const u = new URL(s)
      return u.protocol === "https:" || u.protocol === "http:" ? undefined : "must be an http or https URL"
    } catch {
      return "must be an absolute http or https URL"
    }
  }, {
    toJsonSchema: () => ({ format: "uri" }),
    arbitraryConstraint: { patterns: [/^https:\/\/[a-z]{1,12}\.example\/[a-z0-9]{0,16}\.jpg$/] }
  })
)

// ---------------------------------------------------------------------------------------------------------------
// PATCH /reviews/{id}

/**
 * A redaction is checked against the stored text in linear time, so its schema is not held to the length limits of
 * new text: a review stored before the limits must still be redactable. The result's length is checked with the
 * stored text (docs/DECISIONS.md §53). The request's size is bounded by the body limit.
 */
export const ReviewPatch = Schema.Struct({
  /** The current title with spans replaced by `[redacted]`; `null` only when the title is null. */
  title: Schema.optionalKey(Schema.NullOr(StoredText)),
  body: Schema.optionalKey(Schema.NullOr(StoredText)),
  published: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput)
}).annotate({ identifier: "ReviewPatch" })
export type ReviewPatch = typeof ReviewPatch.Type

// ---------------------------------------------------------------------------------------------------------------
// DELETE /reviews/{id}

const NOTE_MAX_LENGTH = 2000

export const ReviewDeletionRequest = Schema.Struct({
  reason: ReviewDeletionReason,
  note: Schema.optionalKey(BoundedText(NOTE_MAX_LENGTH))
}).check(Schema.makeFilter((d) =>
  d.reason === "other" && (d.note === undefined || d.note.trim() === "")
    ? { path: ["note"], issue: "is required when reason is \"other\": say why the review is deleted" }
    : undefined
)).annotate({ identifier: "ReviewDeletionRequest" })
export type ReviewDeletionRequest = typeof ReviewDeletionRequest.Type

/** The record kept after a deletion: who, when and why, without the review's content (docs/DECISIONS.md §5). */
export interface ReviewDeletionRecord {
  readonly reviewId: ReviewId
  readonly reason: ReviewDeletionReason
  readonly note: string | null
  readonly actorKeyId: string
  readonly deletedAt: string
}

// ---------------------------------------------------------------------------------------------------------------
// PATCH /reviews/bulk-update

export const BulkUpdateBody = Schema.Struct({ published: Schema.Boolean }).annotate({ identifier: "BulkUpdateBody" })
export type BulkUpdateBody = typeof BulkUpdateBody.Type

export const BulkUpdateResult = Schema.Struct({ count: Schema.Int }).annotate({ identifier: "BulkUpdateResult" })
export type BulkUpdateResult = typeof BulkUpdateResult.Type

// ---------------------------------------------------------------------------------------------------------------
// POST /reviews/import

const IMPORT_MAX_ROWS = 10_000

/** The issue of an import with too many rows (shared by every import endpoint). */
export const importTooLarge = (max: number): string =>
  `an import takes at most ${max} rows; split the file into several requests`
const IMPORT_MAX_IMAGES_PER_ROW = 20

/** A survey answer as imported (the labels may be omitted). */
export const ImportAnswer = Schema.Struct({
  questionId: Uuid,
  label: BoundedText(1000),
  type: RequiredText(100),
  step: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  steps: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  lowLabel: Schema.optionalKey(Schema.NullOr(BoundedText(1000))),
  highLabel: Schema.optionalKey(Schema.NullOr(BoundedText(1000))),
  middleLabel: Schema.optionalKey(Schema.NullOr(BoundedText(1000))),
  optionLabels: Schema.optionalKey(BoundedArray(BoundedText(1000), 100))
})
export type ImportAnswer = typeof ImportAnswer.Type

/** One row of `POST /reviews/import` (spec: Row fields). */
export const ReviewImportRow = Schema.Struct({
  /** The review's id on the merchant's side; a row whose externalId was imported before is not imported again. */
  externalId: Schema.optionalKey(RequiredText(255)),
  /** A site id of the organization. */
  site: Schema.optionalKey(SiteId),
  /** The customer's email: matched case-insensitively, a customer is created when none has it. */
  customer: Schema.optionalKey(ReviewImportEmail),
  /** The product's slug. */
  product: Schema.optionalKey(RequiredText(500)),
  productExternalId: Schema.optionalKey(RequiredText(500)),
  productUrl: Schema.optionalKey(RequiredText(2048)),
  /** The variant's id (stored as the review's productVariantId). */
  productVariant: Schema.optionalKey(ProductVariantId),
  title: Schema.optionalKey(Schema.NullOr(ReviewTitle)),
  body: Schema.optionalKey(Schema.NullOr(ReviewBody)),
  rating: Rating,
  published: Schema.optionalKey(Schema.Boolean),
  pending: Schema.optionalKey(Schema.Boolean),
  verifiedBuyer: Schema.optionalKey(Schema.Boolean),
  createdAt: Schema.optionalKey(InstantInput),
  imageUrls: Schema.optionalKey(BoundedArray(ImageUrlInput, IMPORT_MAX_IMAGES_PER_ROW)),
  /** The merchant's reply text. */
  response: Schema.optionalKey(RequiredText(100_000)),
  responderName: Schema.optionalKey(RequiredText(200)),
  responseCreatedAt: Schema.optionalKey(InstantInput),
  answers: Schema.optionalKey(BoundedArray(ImportAnswer, 100)),
  metadata: Schema.optionalKey(MetadataInput)
}).check(Schema.makeFilter((row) => {
  const issues: Array<Schema.FilterIssue> = []
  if (row.product === undefined && row.productExternalId === undefined && row.productUrl === undefined) {
    issues.push({
      path: ["product"],
      issue: "name the product with product (its slug), productExternalId or productUrl"
    })
  }
  if (row.pending === true && row.published === true) {
    issues.push({
      path: ["published"],
      issue: "cannot be true for a pending review; drop one of pending and published"
    })
  }
  if (row.response === undefined) {
    if (row.responderName !== undefined) {
      issues.push({ path: ["responderName"], issue: "needs response (the reply text)" })
    }
    if (row.responseCreatedAt !== undefined) {
      issues.push({ path: ["responseCreatedAt"], issue: "needs response (the reply text)" })
    }
  }
  return issues
}))
export type ReviewImportRow = typeof ReviewImportRow.Type

export const ImportRequest = Schema.Struct({
  /** Counted before any row is decoded: a larger import is refused at once (`docs/SECURITY.md`). */
  data: BoundedArray(ReviewImportRow, IMPORT_MAX_ROWS, importTooLarge(IMPORT_MAX_ROWS)),
  /** Fail the whole import on the first row that cannot be resolved (default false: skip and list such rows). */
  strict: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ImportRequest" })
export type ImportRequest = typeof ImportRequest.Type

export const ReviewImportResult = Schema.Struct({
  imported: Schema.Array(Schema.Struct({ index: Schema.Int, id: ReviewId, imageUrls: Schema.Array(Schema.String) })),
  skipped: Schema.Array(Schema.Struct({ index: Schema.Int, message: Schema.String }))
}).annotate({ identifier: "ReviewImportResult" })
export type ReviewImportResult = typeof ReviewImportResult.Type

// ---------------------------------------------------------------------------------------------------------------
// Replies: POST / PATCH /reviews/{id}/response

const REPLY_BODY_MAX_LENGTH = 10_000

export const ReplyCreate = Schema.Struct({
  body: RequiredText(REPLY_BODY_MAX_LENGTH),
  /** Omit to save a draft. */
  published: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput),
  /** Defaults to the organization's name. */
  responderName: Schema.optionalKey(RequiredText(200))
}).annotate({ identifier: "ReplyCreate" })
export type ReplyCreate = typeof ReplyCreate.Type

export const ReplyPatch = Schema.Struct({
  body: Schema.optionalKey(RequiredText(REPLY_BODY_MAX_LENGTH)),
  responderName: Schema.optionalKey(RequiredText(200)),
  published: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput)
}).annotate({ identifier: "ReplyPatch" })
export type ReplyPatch = typeof ReplyPatch.Type
