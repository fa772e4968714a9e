/**
 * What the storefront API answers (docs/DECISIONS.md §55, shared §18): published content only, shaped for shoppers.
 * No record here has a field for an email, IP address, fingerprint, user agent or metadata, so none can leak: the
 * shapes are built field by field from the admin records (`StorefrontRules.ts`), never spread from them.
 */
import { Schema } from "effect"
import { RatingHistogram } from "../catalog/Catalog.ts"
import { FileId, ProductId, ProductQuestionAnswerId, ProductQuestionId, ReviewId, SurveyId } from "../kernel/Ids.ts"
import { SurveyStatus } from "../surveys/Survey.ts"
import { pageOf } from "../kernel/ListQuery.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const StorefrontReviewFile = Schema.Struct({
  id: FileId,
  url: Schema.String,
  contentType: Schema.String
}).annotate({ identifier: "StorefrontReviewFile" })

export const StorefrontReviewResponse = Schema.Struct({
  body: Schema.String,
  responderName: Schema.String,
  createdAt: Timestamp
}).annotate({ identifier: "StorefrontReviewResponse" })

export const StorefrontReview = Schema.Struct({
  id: ReviewId,
  productId: ProductId,
  rating: Schema.Finite,
  title: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String),
  /** The customer's first name and last initial ("Ada L."), or "Anonymous". */
  authorName: Schema.String,
  verifiedBuyer: Schema.Boolean,
  createdAt: Timestamp,
  /** The merchant's reply, only when it is published. */
  response: Schema.NullOr(StorefrontReviewResponse),
  files: Schema.Array(StorefrontReviewFile)
}).annotate({ identifier: "StorefrontReview" })
export type StorefrontReview = typeof StorefrontReview.Type

export const StorefrontReviewPage = pageOf(StorefrontReview)
export type StorefrontReviewPage = typeof StorefrontReviewPage.Type

export const ProductRating = Schema.Struct({
  productId: ProductId,
  slug: Schema.String,
  /** Published reviews. */
  reviewCount: Schema.Int,
  averageRating: Schema.NullOr(Schema.Finite),
  histogram: RatingHistogram
}).annotate({ identifier: "ProductRating" })
export type ProductRating = typeof ProductRating.Type

export const ProductRatingList = Schema.Struct({ data: Schema.Array(ProductRating) }).annotate({
  identifier: "ProductRatingList"
})
export type ProductRatingList = typeof ProductRatingList.Type

export const StorefrontAnswer = Schema.Struct({
  id: ProductQuestionAnswerId,
  body: Schema.String,
  authorName: Schema.NullOr(Schema.String),
  authorType: Schema.String,
  createdAt: Timestamp
}).annotate({ identifier: "StorefrontAnswer" })

export const StorefrontQuestion = Schema.Struct({
  id: ProductQuestionId,
  body: Schema.String,
  askerName: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  /** Published answers, oldest first. */
  answers: Schema.Array(StorefrontAnswer)
}).annotate({ identifier: "StorefrontQuestion" })
export type StorefrontQuestion = typeof StorefrontQuestion.Type

export const StorefrontQuestionPage = pageOf(StorefrontQuestion)
export type StorefrontQuestionPage = typeof StorefrontQuestionPage.Type

/** The storefront's review sorts (`GET /storefront/products/{productIdOrSlug}/reviews`). */
export const storefrontReviewSorts = ["-createdAt", "createdAt", "-rating", "rating"] as const
export const StorefrontReviewSort = Schema.Literals(storefrontReviewSorts)
export type StorefrontReviewSort = typeof StorefrontReviewSort.Type

/** Page sizes of the storefront lists: 1..50, 10 by default. */
export const storefrontLimits = { defaultLimit: 10, maxLimit: 50 } as const
/** Products of one ratings request: 1..100. */
export const MAX_RATINGS_PRODUCTS = 100

/** `GET /storefront/customer/reviews`: the signed customer's own reviews, pending ones included. */
export const CustomerReview = Schema.Struct({
  ...StorefrontReview.fields,
  published: Schema.Boolean
}).annotate({ identifier: "CustomerReview" })
export type CustomerReview = typeof CustomerReview.Type

export const CustomerReviewPage = pageOf(CustomerReview)
export type CustomerReviewPage = typeof CustomerReviewPage.Type

export const StorefrontSurveyProduct = Schema.Struct({
  id: ProductId,
  title: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  /** Whether the product already has its review through this survey. */
  reviewed: Schema.Boolean
}).annotate({ identifier: "StorefrontSurveyProduct" })

/** What the hosted survey page (`/r/{token}`) shows: the order's products and the customer's first name only. */
export const StorefrontSurvey = Schema.Struct({
  id: SurveyId,
  status: SurveyStatus,
  expiresAt: Timestamp,
  customer: Schema.Struct({ firstName: Schema.NullOr(Schema.String) }),
  products: Schema.Array(StorefrontSurveyProduct)
}).annotate({ identifier: "StorefrontSurvey" })
export type StorefrontSurvey = typeof StorefrontSurvey.Type
