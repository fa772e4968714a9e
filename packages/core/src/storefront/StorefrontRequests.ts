/**
 * What the storefront's submission endpoints accept (shared §18): strict bodies, stored-text rules and the same
 * limits as the admin API (a question ≤ 500 characters, an answer ≤ 2,000).
 */
import { Schema } from "effect"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { ProductId } from "../kernel/Ids.ts"
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
