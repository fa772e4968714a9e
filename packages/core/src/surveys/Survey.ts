/**
 * Surveys (docs/DECISIONS.md §48): one order's review request through one survey flow, the spec's "sent survey" and a
 * review's `surveyId`. A survey carries the flow's steps as they were when it was enrolled, each with when it is due
 * and how it ended, so an edit of the flow never changes what an enrolled order receives.
 */
import { randomBytes } from "node:crypto"
import { Schema } from "effect"
import {
  CustomerId,
  EmailTemplateId,
  OrderId,
  ProductId,
  ProductVariantId,
  ReviewId,
  SurveyFlowId,
  SurveyId
} from "../kernel/Ids.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const SURVEY_STATUSES = ["scheduled", "sent", "completed", "cancelled", "skipped"] as const
export const SurveyStatus = Schema.Literals(SURVEY_STATUSES).annotate({ identifier: "SurveyStatus" })
export type SurveyStatus = typeof SurveyStatus.Type

export const StepOutcome = Schema.Literals(["sent", "skipped", "cancelled", "failed"])
export type StepOutcome = typeof StepOutcome.Type

export const SurveyStep = Schema.Struct({
  position: Schema.Int,
  /** `wait` or `email`. */
  type: Schema.String,
  /** When the step runs: a wait ends, an email is sent. Null until the steps before it have run. */
  dueAt: Schema.NullOr(Timestamp),
  doneAt: Schema.NullOr(Timestamp),
  /** How an email step ended (a finished wait has none); null while pending. */
  outcome: Schema.NullOr(StepOutcome),
  /** The template an `email` step sends. */
  emailTemplateId: Schema.NullOr(EmailTemplateId),
  /** How long a `wait` step waits. */
  waitSeconds: Schema.NullOr(Schema.Int)
}).annotate({ identifier: "SurveyStep" })
export type SurveyStep = typeof SurveyStep.Type

export const SurveyProduct = Schema.Struct({
  productId: ProductId,
  productVariantId: Schema.NullOr(ProductVariantId),
  /** The review written through this survey, once there is one. */
  reviewId: Schema.NullOr(ReviewId)
}).annotate({ identifier: "SurveyProduct" })
export type SurveyProduct = typeof SurveyProduct.Type

export const Survey = Schema.Struct({
  id: SurveyId,
  flowId: SurveyFlowId,
  orderId: OrderId,
  customerId: CustomerId,
  status: SurveyStatus,
  /** Why a survey was skipped or cancelled. */
  reason: Schema.NullOr(Schema.String),
  /** One per distinct product of the order, in line order. */
  products: Schema.Array(SurveyProduct),
  steps: Schema.Array(SurveyStep),
  /** Where the shopper writes the reviews: `{PUBLIC_API_BASE_URL}/r/{token}`. */
  url: Schema.String,
  expiresAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Survey" })
export type Survey = typeof Survey.Type

/** A survey expires this long after it is created (docs/DECISIONS.md §48). */
export const SURVEY_LIFETIME_DAYS = 90

/** A survey token: 32 random bytes, URL-safe (43 characters of `[A-Za-z0-9_-]`, 256 bits). */
export const generateSurveyToken = (): string => randomBytes(32).toString("base64url")

/** The survey's page: `{base}/r/{token}` (the storefront serves it). */
export const surveyUrl = (baseUrl: string, token: string): string => `${baseUrl.replace(/\/+$/, "")}/r/${token}`
