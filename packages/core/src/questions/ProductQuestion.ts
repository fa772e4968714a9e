/**
 * Shopper product questions and their answers, in the shape the API returns them (spec: Product question, Product
 * question answer), and the bodies the admin API accepts for them.
 *
 * A question is "in the moderation queue" while it has never been moderated (`moderatedAt` null): it arrives there
 * unpublished unless `published` was sent, and any `published` value sent later (either way) takes it out and
 * stamps `moderatedAt`. `answeredAt` is the time of its first published answer; `notifiedAt` the time the asker was
 * emailed about it (docs/DECISIONS.md §6).
 */
import { Schema } from "effect"
import { Customer, Product } from "../catalog/Catalog.ts"
import { CustomerId, ProductId, ProductQuestionAnswerId, ProductQuestionId, SiteId, UserId, Uuid } from "../kernel/Ids.ts"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { Metadata, MetadataInput } from "../kernel/Metadata.ts"
import { Flag } from "../reviews/Review.ts"
import { characterCount, textProblem } from "../kernel/Text.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

/** Spec: Limits. Counted in Unicode code points, so an emoji is one character. */
export const QUESTION_BODY_MAX_CHARACTERS = 500
export const ANSWER_BODY_MAX_CHARACTERS = 2000

/** `source` of a question recorded through the admin API (the spec shows no list of values; widgets use others). */
export const ADMIN_API_QUESTION_SOURCE = "admin_api"
/** `authorType` of an answer written through the admin API (docs/DECISIONS.md §6). */
export const MERCHANT_AUTHOR_TYPE = "merchant"

export const ProductQuestionAnswer = Schema.Struct({
  id: ProductQuestionAnswerId,
  productQuestionId: ProductQuestionId,
  body: Schema.String,
  authorType: Schema.String,
  authorName: Schema.NullOr(Schema.String),
  /** The dashboard user who wrote it; null for answers written with a secret key or by shoppers. */
  userId: Schema.NullOr(UserId),
  /** The shopper who wrote it; null for merchant answers. */
  customerId: Schema.NullOr(CustomerId),
  published: Schema.Boolean,
  moderatedAt: Schema.NullOr(Timestamp),
  flagged: Schema.Boolean,
  flags: Schema.Array(Flag),
  metadata: Metadata,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type ProductQuestionAnswer = typeof ProductQuestionAnswer.Type

/** The stored fields of a question (what the list returns without `include`). */
export const ProductQuestionFields = {
  id: ProductQuestionId,
  productId: ProductId,
  siteId: Schema.NullOr(SiteId),
  customerId: Schema.NullOr(CustomerId),
  body: Schema.String,
  /** Null shows the question anonymously. */
  askerName: Schema.NullOr(Schema.String),
  /** Where the answer is sent; null when the asker left none, and removed with the question. */
  askerEmail: Schema.NullOr(Schema.String),
  notifyByEmail: Schema.Boolean,
  published: Schema.Boolean,
  moderatedAt: Schema.NullOr(Timestamp),
  flagged: Schema.Boolean,
  flags: Schema.Array(Flag),
  instantAnswerId: Schema.NullOr(Uuid),
  answeredAt: Schema.NullOr(Timestamp),
  notifiedAt: Schema.NullOr(Timestamp),
  source: Schema.String,
  answerCount: Schema.Int,
  publishedAnswerCount: Schema.Int,
  metadata: Metadata,
  createdAt: Timestamp,
  updatedAt: Timestamp
} as const

export const ProductQuestionRecord = Schema.Struct(ProductQuestionFields)
export type ProductQuestionRecord = typeof ProductQuestionRecord.Type

/** The extras `include` can add, each present only when asked for. */
export const ProductQuestionIncludes = {
  customer: Schema.optionalKey(Schema.NullOr(Customer)),
  product: Schema.optionalKey(Schema.NullOr(Product)),
  answers: Schema.optionalKey(Schema.Array(ProductQuestionAnswer))
} as const

export const ProductQuestion = Schema.Struct({ ...ProductQuestionFields, ...ProductQuestionIncludes })
export type ProductQuestion = typeof ProductQuestion.Type

export const productQuestionIncludeNames = ["customer", "product", "answers"] as const
export type ProductQuestionInclude = (typeof productQuestionIncludeNames)[number]

// ---------------------------------------------------------------------------------------------------------------
// Request bodies

/**
 * Text of 1..max characters (code points), not only blanks, storable. The cheap length bound (a code point is at
 * most two code units) aborts first, so an over-long value is never scanned.
 */
const Text = (max: number, what: string) =>
  Schema.String.pipe(Schema.check(
    Schema.isMaxLength(2 * max, { message: `${what} is longer than ${max} characters` }).abort(),
    Schema.makeFilter((s: string) => {
      const problem = textProblem(s)
      if (problem !== undefined) return problem
      if (s.trim() === "") return `${what} must not be empty`
      const n = characterCount(s)
      return n <= max ? undefined : `${what} is ${n} characters long; at most ${max} are allowed`
    }, { expected: `${what} of 1 to ${max} characters` })
  ))

export const QuestionBody = Text(QUESTION_BODY_MAX_CHARACTERS, "the question")
export const AnswerBody = Text(ANSWER_BODY_MAX_CHARACTERS, "the answer")
export const PersonName = Text(200, "the name")

/**
 * `POST /product-questions`. Fields the spec marks "or null" take null as "none", exactly like omitting them.
 * `notifyByEmail` is not in the spec's table; it is accepted because its default (true when an address is given,
 * docs/DECISIONS.md §6) implies a caller may turn it off.
 */
export const CreateProductQuestion = Schema.Struct({
  productId: ProductId,
  body: QuestionBody,
  askerName: Schema.optionalKey(Schema.NullOr(PersonName)),
  askerEmail: Schema.optionalKey(Schema.NullOr(EmailAddress)),
  siteId: Schema.optionalKey(Schema.NullOr(SiteId)),
  customerId: Schema.optionalKey(Schema.NullOr(CustomerId)),
  published: Schema.optionalKey(Schema.Boolean),
  notifyByEmail: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput)
})
export type CreateProductQuestion = typeof CreateProductQuestion.Type

/**
 * `PATCH /product-questions/{id}`: only sent fields change. `askerName: null` makes the question anonymous, an
 * omitted `askerName` leaves it. The question text is not editable, so `body` is an unknown field (400).
 */
export const UpdateProductQuestion = Schema.Struct({
  published: Schema.optionalKey(Schema.Boolean),
  askerName: Schema.optionalKey(Schema.NullOr(PersonName)),
  metadata: Schema.optionalKey(MetadataInput)
})
export type UpdateProductQuestion = typeof UpdateProductQuestion.Type

/** `POST /product-questions/{id}/answers`. `published` defaults to true. */
export const CreateProductQuestionAnswer = Schema.Struct({
  body: AnswerBody,
  published: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput),
  authorName: Schema.optionalKey(PersonName)
})
export type CreateProductQuestionAnswer = typeof CreateProductQuestionAnswer.Type
