/**
 * Shopper product questions and their answers, in the shape the API returns them (spec: Product question, Product
 * question answer). What the admin API accepts for them is in `ProductQuestionRequests.ts`.
 *
 * A question is "in the moderation queue" while it has never been moderated (`moderatedAt` null): it arrives there
 * unpublished unless `published` was sent, and any `published` value sent later (either way) takes it out and
 * stamps `moderatedAt`. `answeredAt` is the time of its first published answer; `notifiedAt` the time the asker was
 * emailed about it (docs/DECISIONS.md §6).
 */
import { Schema } from "effect"
import { Customer, Product } from "../catalog/Catalog.ts"
import {
  CustomerId,
  ProductId,
  ProductQuestionAnswerId,
  ProductQuestionId,
  SiteId,
  UserId,
  Uuid
} from "../kernel/Ids.ts"
import { Metadata } from "../kernel/Metadata.ts"
import { Flag } from "../reviews/Review.ts"
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
}).annotate({ identifier: "ProductQuestionAnswer" })
export type ProductQuestionAnswer = typeof ProductQuestionAnswer.Type

/** The stored fields of a question (what the list returns without `include`). */
const ProductQuestionFields = {
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

export const ProductQuestionRecord = Schema.Struct(ProductQuestionFields).annotate({
  identifier: "ProductQuestionRecord"
})
export type ProductQuestionRecord = typeof ProductQuestionRecord.Type

/** The extras `include` can add, each present only when asked for. */
const ProductQuestionIncludes = {
  customer: Schema.optionalKey(Schema.NullOr(Customer)),
  product: Schema.optionalKey(Schema.NullOr(Product)),
  answers: Schema.optionalKey(Schema.Array(ProductQuestionAnswer))
} as const

export const ProductQuestion = Schema.Struct({ ...ProductQuestionFields, ...ProductQuestionIncludes }).annotate({
  identifier: "ProductQuestion"
})
export type ProductQuestion = typeof ProductQuestion.Type

export const productQuestionIncludeNames = ["customer", "product", "answers"] as const
export type ProductQuestionInclude = (typeof productQuestionIncludeNames)[number]
