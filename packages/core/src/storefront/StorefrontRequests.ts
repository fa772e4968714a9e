/**
 * What the storefront's submission endpoints accept (shared §18): strict bodies, stored-text rules and the same
 * limits as the admin API (a question ≤ 500 characters, an answer ≤ 2,000).
 */
import { Schema } from "effect"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { BoundedArray } from "../kernel/BoundedArray.ts"
import { ProductId, ReviewId } from "../kernel/Ids.ts"
import { BoundedText, RequiredText } from "../kernel/Text.ts"
import { InstantInput, ReviewBody, ReviewTitle } from "../reviews/ReviewRequests.ts"
import { AnswerBody, PersonName, QuestionBody } from "../questions/ProductQuestionRequests.ts"

/** A product named by id or by slug (exactly one, checked by the use-case so both problems are named). */
const ProductSlug = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(500))

export const StorefrontQuestionSubmission = Schema.Struct({
  productId: Schema.optionalKey(ProductId),
  productSlug: Schema.optionalKey(ProductSlug),
  body: QuestionBody,
  askerName: Schema.optionalKey(Schema.NullOr(PersonName)),
  askerEmail: Schema.optionalKey(Schema.NullOr(EmailAddress)),
  notifyByEmail: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "StorefrontQuestionSubmission" })
export type StorefrontQuestionSubmission = typeof StorefrontQuestionSubmission.Type

export const StorefrontAnswerSubmission = Schema.Struct({
  body: AnswerBody,
  authorName: PersonName,
  email: Schema.optionalKey(EmailAddress)
}).annotate({ identifier: "StorefrontAnswerSubmission" })
export type StorefrontAnswerSubmission = typeof StorefrontAnswerSubmission.Type

/** What a submission answers (202): the new record's id only; it waits for moderation. */
export const StorefrontSubmitted = Schema.Struct({ id: Schema.String }).annotate({ identifier: "StorefrontSubmitted" })
export type StorefrontSubmitted = typeof StorefrontSubmitted.Type

/** `source` of a question asked through the storefront (shared §18). */
export const WIDGET_QUESTION_SOURCE = "widget"
/** `authorType` of an answer written by a shopper. */
export const CUSTOMER_AUTHOR_TYPE = "customer"

/** A shopper's rating: a whole number of stars, 1 to 5 (shared §18). */
const Stars = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 }))

/** `POST /storefront/reviews`: `email` may be left out only on a signed call (the signature names the customer). */
export const StorefrontReviewSubmission = Schema.Struct({
  productId: Schema.optionalKey(ProductId),
  productSlug: Schema.optionalKey(ProductSlug),
  rating: Stars,
  title: Schema.optionalKey(Schema.NullOr(ReviewTitle)),
  body: Schema.optionalKey(Schema.NullOr(ReviewBody)),
  authorName: RequiredText(100),
  email: Schema.optionalKey(EmailAddress),
  fingerprint: Schema.optionalKey(BoundedText(256, 1)),
  formRenderedAt: Schema.optionalKey(InstantInput)
}).annotate({ identifier: "StorefrontReviewSubmission" })
export type StorefrontReviewSubmission = typeof StorefrontReviewSubmission.Type

/** What `POST /storefront/reviews` answers (202): the review's id and whether it arrived published. */
export const StorefrontReviewSubmitted = Schema.Struct({ id: ReviewId, published: Schema.Boolean }).annotate({
  identifier: "StorefrontReviewSubmitted"
})
export type StorefrontReviewSubmitted = typeof StorefrontReviewSubmitted.Type

/** Reviews one survey submission may carry: one per product of the order at most, an order has at most 100 lines. */
export const MAX_SURVEY_REVIEWS = 100

export const SurveyReviewInput = Schema.Struct({
  productId: ProductId,
  rating: Stars,
  title: Schema.optionalKey(Schema.NullOr(ReviewTitle)),
  body: Schema.optionalKey(Schema.NullOr(ReviewBody))
}).annotate({ identifier: "SurveyReviewInput" })
export type SurveyReviewInput = typeof SurveyReviewInput.Type

/** `POST /storefront/surveys/{token}/reviews`. */
export const SurveyReviewSubmission = Schema.Struct({
  reviews: BoundedArray(SurveyReviewInput, MAX_SURVEY_REVIEWS).check(Schema.isMinLength(1)),
  authorName: Schema.optionalKey(RequiredText(100)),
  fingerprint: Schema.optionalKey(BoundedText(256, 1)),
  formRenderedAt: Schema.optionalKey(InstantInput)
}).annotate({ identifier: "SurveyReviewSubmission" })
export type SurveyReviewSubmission = typeof SurveyReviewSubmission.Type

export const SurveyReviewSubmitted = Schema.Struct({
  reviews: Schema.Array(Schema.Struct({ id: ReviewId, productId: ProductId, published: Schema.Boolean }))
}).annotate({ identifier: "SurveyReviewSubmitted" })
export type SurveyReviewSubmitted = typeof SurveyReviewSubmitted.Type

/** The three query parameters of a signed customer call (docs/STOREFRONT.md), all or none. */
export interface SignedCustomerQuery {
  readonly customerEmail?: string | undefined
  readonly timestamp?: string | undefined
  readonly signature?: string | undefined
}

/** What the request says about where a submission came from, besides the caller's client address. */
export interface SubmissionContext {
  readonly userAgent: string | undefined
  readonly signed: SignedCustomerQuery
}
