/**
 * A customer review in the shape the API returns it (spec: Review), its reply, files, survey answers and import
 * provenance. The optional extras (`importJob`, `customer`, `product`, `response`, `files`, `answers`,
 * `collisions`) are present only when requested with `include`.
 */
import { Schema } from "effect"
import { Customer, Product } from "../catalog/Catalog.ts"
import {
  CustomerId,
  FileId,
  ImportJobId,
  ProductId,
  ProductVariantId,
  ReviewId,
  ReviewReplyId,
  SiteId,
  SurveyId,
  Uuid
} from "../kernel/Ids.ts"
import { Metadata } from "../kernel/Metadata.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const Flag = Schema.Struct({ code: Schema.String, detail: Schema.String, score: Schema.Finite }).annotate({
  identifier: "Flag"
})
export type Flag = typeof Flag.Type

export const ReviewReply = Schema.Struct({
  id: ReviewReplyId,
  reviewId: ReviewId,
  body: Schema.String,
  responderName: Schema.String,
  published: Schema.Boolean,
  metadata: Metadata,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "ReviewReply" })
export type ReviewReply = typeof ReviewReply.Type

export const ReviewFile = Schema.Struct({
  id: FileId,
  fileName: Schema.String,
  contentType: Schema.String,
  sizeBytes: Schema.Int,
  url: Schema.String
}).annotate({ identifier: "ReviewFile" })
export type ReviewFile = typeof ReviewFile.Type

export const SurveyAnswer = Schema.Struct({
  questionId: Uuid,
  label: Schema.String,
  type: Schema.String,
  step: Schema.Int,
  steps: Schema.Int,
  lowLabel: Schema.NullOr(Schema.String),
  highLabel: Schema.NullOr(Schema.String),
  middleLabel: Schema.NullOr(Schema.String),
  optionLabels: Schema.Array(Schema.String)
}).annotate({ identifier: "SurveyAnswer" })
export type SurveyAnswer = typeof SurveyAnswer.Type

export const ImportJobRef = Schema.Struct({
  id: ImportJobId,
  type: Schema.String,
  action: Schema.String,
  row: Schema.Int,
  createdAt: Timestamp
}).annotate({ identifier: "ImportJobRef" })
export type ImportJobRef = typeof ImportJobRef.Type

/** How many other reviews of the organization share this review's browser fingerprint / IP address. */
export const Collisions = Schema.Struct({ browserFingerprint: Schema.Int, ipAddress: Schema.Int }).annotate({
  identifier: "Collisions"
})
export type Collisions = typeof Collisions.Type

/** The stored fields of a review (what `PATCH /reviews/{id}` returns: no extras). */
const ReviewFields = {
  id: ReviewId,
  siteId: Schema.NullOr(SiteId),
  productId: ProductId,
  productVariantId: Schema.NullOr(ProductVariantId),
  customerId: Schema.NullOr(CustomerId),
  surveyId: Schema.NullOr(SurveyId),
  title: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String),
  /** The customer's original text, stored on the first redaction; null until then. */
  originalTitle: Schema.NullOr(Schema.String),
  originalBody: Schema.NullOr(Schema.String),
  redactedAt: Schema.NullOr(Timestamp),
  rating: Schema.Finite,
  published: Schema.Boolean,
  verifiedBuyer: Schema.Boolean,
  flagged: Schema.Boolean,
  flags: Schema.Array(Flag),
  moderatedAt: Schema.NullOr(Timestamp),
  ipAddress: Schema.NullOr(Schema.String),
  browserFingerprint: Schema.NullOr(Schema.String),
  ipCountry: Schema.NullOr(Schema.String),
  userAgent: Schema.NullOr(Schema.String),
  submitSeconds: Schema.NullOr(Schema.Finite),
  metadata: Metadata,
  /** The merchant's id for an imported review (de-duplicates imports); null otherwise. */
  externalId: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp
} as const

export const ReviewRecord = Schema.Struct(ReviewFields).annotate({ identifier: "ReviewRecord" })
export type ReviewRecord = typeof ReviewRecord.Type

/**
 * A new review: what the caller gives over blank optional fields (unpublished, unmoderated, unflagged, no
 * text). The one constructor of the record, for use-cases and test seeds alike.
 */
export const newReview = (
  id: ReviewId,
  at: Timestamp,
  fields: Pick<ReviewRecord, "productId" | "rating"> & Partial<ReviewRecord>
): ReviewRecord => ({
  id,
  siteId: null,
  productVariantId: null,
  customerId: null,
  surveyId: null,
  title: null,
  body: null,
  originalTitle: null,
  originalBody: null,
  redactedAt: null,
  published: false,
  verifiedBuyer: false,
  flagged: false,
  flags: [],
  moderatedAt: null,
  ipAddress: null,
  browserFingerprint: null,
  ipCountry: null,
  userAgent: null,
  submitSeconds: null,
  metadata: {},
  externalId: null,
  createdAt: at,
  updatedAt: at,
  ...fields
})

/** The extras `include` can add, each present only when asked for. */
const ReviewIncludes = {
  importJob: Schema.optionalKey(Schema.NullOr(ImportJobRef)),
  customer: Schema.optionalKey(Schema.NullOr(Customer)),
  product: Schema.optionalKey(Schema.NullOr(Product)),
  response: Schema.optionalKey(Schema.NullOr(ReviewReply)),
  files: Schema.optionalKey(Schema.Array(ReviewFile)),
  answers: Schema.optionalKey(Schema.Array(SurveyAnswer)),
  collisions: Schema.optionalKey(Collisions)
} as const

export const Review = Schema.Struct({ ...ReviewFields, ...ReviewIncludes }).annotate({ identifier: "Review" })
export type Review = typeof Review.Type

export const reviewIncludeNames = [
  "importJob",
  "customer",
  "product",
  "response",
  "files",
  "answers",
  "collisions"
] as const
export type ReviewInclude = (typeof reviewIncludeNames)[number]

/** Reasons accepted by `DELETE /reviews/{id}`; `other` requires a note. */
export const ReviewDeletionReason = Schema.Literals([
  "customer_request",
  "spam",
  "abusive_content",
  "not_about_product",
  "duplicate",
  "test_data",
  "other"
])
export type ReviewDeletionReason = typeof ReviewDeletionReason.Type
