/**
 * The storefront's rules as plain functions over data (docs/DECISIONS.md §55): how a shopper is named, which records a
 * publishable key may read and in which shape, the per-key-and-address buckets, and which origins get CORS.
 */
import { Result } from "effect"
import { hash } from "node:crypto"
import { emptyHistogram, type Product } from "../catalog/Catalog.ts"
import { InvalidRequest } from "../kernel/Errors.ts"
import { productQuestionFilterCatalog } from "../questions/ProductQuestionLists.ts"
import { reviewFilterCatalog } from "../reviews/ReviewLists.ts"
import { defineListEndpoint } from "../kernel/ListQuery.ts"
import type { KeyedBucket } from "../ratelimit/RateLimitTable.ts"
import type { ProductQuestionAnswer, ProductQuestionRecord } from "../questions/ProductQuestion.ts"
import type { Review } from "../reviews/Review.ts"
import {
  type CustomerReview,
  MAX_RATINGS_PRODUCTS,
  type ProductRating,
  type StorefrontQuestion,
  type StorefrontReview,
  storefrontReviewSorts
} from "./Storefront.ts"

/**
 * The shapes the storefront answers are written in: part of every tag, so a server answering another shape never
 * revalidates a body of the previous one.
 */
const STOREFRONT_REPRESENTATION = "1"

/**
 * The entity tag of a storefront read (docs/DECISIONS.md §70), known without running the read: the organization's
 * content version, the route and its request's parameters. A write to what the read shows moves the version, so a
 * tag the client holds from before it no longer matches; anything else answers the same tag and, on revalidation, 304.
 */
export const storefrontTag = (
  organizationId: string,
  version: string,
  route: string,
  params: ReadonlyArray<string | number | undefined>
): string =>
  `"${
    hash(
      "sha256",
      JSON.stringify([STOREFRONT_REPRESENTATION, organizationId, version, route, params.map((p) => p ?? null)]),
      "base64url"
    ).slice(0, 32)
  }"`

/** "Ada L.": the first name and the last name's first character; the first name alone; "Anonymous" without one. */
export const authorNameOf = (
  customer: { readonly firstName: string | null; readonly lastName: string | null } | null | undefined
): string => {
  const first = customer?.firstName?.trim() ?? ""
  if (first === "") return "Anonymous"
  const last = customer?.lastName?.trim() ?? ""
  const initial = last === "" ? "" : String.fromCodePoint(last.codePointAt(0)!)
  return initial === "" ? first : `${first} ${initial.toLocaleUpperCase("en")}.`
}

/** A published review as a shopper sees it: built field by field, so nothing personal can ride along. */
export const toStorefrontReview = (review: Review): StorefrontReview => ({
  id: review.id,
  productId: review.productId,
  rating: review.rating,
  title: review.title,
  body: review.body,
  authorName: authorNameOf(review.customer),
  verifiedBuyer: review.verifiedBuyer,
  createdAt: review.createdAt,
  response: review.response != null && review.response.published
    ? { body: review.response.body, responderName: review.response.responderName, createdAt: review.response.createdAt }
    : null,
  files: (review.files ?? []).map((f) => ({ id: f.id, url: f.url, contentType: f.contentType }))
})

/** A published question with its published answers, oldest first (`answers` as the store gives them, oldest first). */
export const toStorefrontQuestion = (
  question: ProductQuestionRecord,
  answers: ReadonlyArray<ProductQuestionAnswer>
): StorefrontQuestion => ({
  id: question.id,
  body: question.body,
  askerName: question.askerName,
  createdAt: question.createdAt,
  answers: answers
    .filter((a) => a.published && a.productQuestionId === question.id)
    .map((a) => ({
      id: a.id,
      body: a.body,
      authorName: a.authorName,
      authorType: a.authorType,
      createdAt: a.createdAt
    }))
})

export const toProductRating = (product: Product): ProductRating => ({
  productId: product.id,
  slug: product.slug,
  reviewCount: product.publishedReviewCount,
  averageRating: product.publishedReviewCount === 0 ? null : product.averageRating,
  histogram: product.ratingHistogram ?? emptyHistogram
})

/**
 * The storefront lists over the admin read side: their cursors are bound to these names, so neither list's cursor
 * works on the other or on an admin list, and each is sealed for its organization like every cursor.
 */
export const storefrontReviewListEndpoint = defineListEndpoint({
  name: "storefront-reviews",
  sorts: storefrontReviewSorts,
  defaultSort: "-createdAt",
  includes: ["customer", "response", "files"],
  catalog: reviewFilterCatalog
})

/** The signed customer's own reviews (`GET /storefront/customer/reviews`), newest first. */
export const storefrontCustomerReviewListEndpoint = defineListEndpoint({
  name: "storefront-customer-reviews",
  sorts: ["-createdAt"],
  defaultSort: "-createdAt",
  includes: ["customer", "response", "files"],
  catalog: reviewFilterCatalog
})

/** One of the customer's own reviews: the shopper's shape and whether it is published yet. */
export const toCustomerReview = (review: Review): CustomerReview => ({
  ...toStorefrontReview(review),
  published: review.published
})

export const storefrontQuestionListEndpoint = defineListEndpoint({
  name: "storefront-questions",
  sorts: ["-createdAt"],
  defaultSort: "-createdAt",
  includes: [],
  catalog: productQuestionFilterCatalog
})

/**
 * The filter of a product's published reviews, with one star (`starOf`: the nearest whole star, halves up) when
 * asked; as a filter document, so the admin read side of every store answers it.
 */
export const publishedReviewsFilter = (productId: string, star: number | undefined): string =>
  JSON.stringify({
    published: true,
    "product.id": productId,
    ...(star === undefined ? {} : { rating: { $gte: star - 0.5, $lt: star + 0.5 } })
  })

export const publishedQuestionsFilter = (productId: string): string =>
  JSON.stringify({ published: true, "product.id": productId })

/** `products=` of the ratings read: 1..100 ids or slugs, comma-separated; blanks and repeats ignored. */
export const parseProductRefs = (raw: string): Result.Result<ReadonlyArray<string>, InvalidRequest> => {
  const refs = [...new Set(raw.split(",").map((s) => s.trim()).filter((s) => s !== ""))]
  if (refs.length === 0) {
    return Result.fail(InvalidRequest.single("query.products", "must name at least one product id or slug"))
  }
  if (refs.length > MAX_RATINGS_PRODUCTS) {
    return Result.fail(InvalidRequest.single("query.products", `names at most ${MAX_RATINGS_PRODUCTS} products`))
  }
  return Result.succeed(refs)
}

// --- limits ----------------------------------------------------------------------------------------------------

export const DEFAULT_STOREFRONT_READS_PER_MINUTE = 600
export const DEFAULT_STOREFRONT_SUBMISSIONS_PER_HOUR = 20

/** What a storefront request spends from: reads (every GET) or submissions (everything else). */
export type StorefrontAction = "read" | "submission"

export const storefrontActionOf = (
  method: string
): StorefrontAction => (method === "GET" || method === "HEAD" ? "read" : "submission")

export interface StorefrontPlan {
  readonly storefrontReadsPerMinute?: number | undefined
  readonly storefrontSubmissionsPerHour?: number | undefined
}

/**
 * The one bucket a storefront request spends from, per publishable key and client address: never the organization's
 * secret-key bucket (`"org"`), whose key cannot clash with these. Reads refill their ceiling in a minute, submissions
 * in an hour (the rate rounds to the nearest representable one, `TokenBucket.rateUnitsPerMs`).
 */
export const storefrontBucket = (
  action: StorefrontAction,
  keyId: string,
  clientAddress: string,
  plan: StorefrontPlan
): KeyedBucket => {
  if (action === "read") {
    const n = plan.storefrontReadsPerMinute ?? DEFAULT_STOREFRONT_READS_PER_MINUTE
    return { key: `storefront-read:${keyId}:${clientAddress}`, spec: { ceiling: n, refillPerSecond: n / 60 } }
  }
  const n = plan.storefrontSubmissionsPerHour ?? DEFAULT_STOREFRONT_SUBMISSIONS_PER_HOUR
  return { key: `storefront-submission:${keyId}:${clientAddress}`, spec: { ceiling: n, refillPerSecond: n / 3600 } }
}

/**
 * How long a storefront bucket left alone takes, at most, to be full again, by key prefix: twice its refill from empty
 * (the rate is rounded). A bucket idle that long is full, the same as no bucket, so stores drop it
 * (`RateLimitRepository.purgeIdle`, docs/DECISIONS.md §61): one bucket per key and client address must not pile up.
 */
export const storefrontBucketIdleMs: ReadonlyArray<readonly [prefix: string, idleMs: number]> = [
  ["storefront-read:", 2 * 60_000],
  ["storefront-submission:", 2 * 3_600_000]
]

/** Whether the bucket `key`, last credited at `updatedAtMs`, is full at `nowMs` whatever its plan (see above). */
export const isIdleStorefrontBucket = (key: string, updatedAtMs: number, nowMs: number): boolean =>
  storefrontBucketIdleMs.some(([prefix, idleMs]) => key.startsWith(prefix) && nowMs - updatedAtMs >= idleMs)

/** The IETF rate-limit policy name of a storefront bucket (`RateLimit-Policy`). */
export const storefrontPolicyName = (action: StorefrontAction) =>
  action === "read" ? "storefront-read" : "storefront-submission"

// --- CORS ------------------------------------------------------------------------------------------------------

/** A site's `domain` as a host name: lower-cased and trimmed; a scheme or path someone stored is ignored. */
export const siteHost = (domain: string): string => {
  let host = domain.trim().toLowerCase()
  const scheme = host.indexOf("://")
  if (scheme !== -1) host = host.slice(scheme + 3)
  const slash = host.indexOf("/")
  return slash === -1 ? host : host.slice(0, slash)
}

/**
 * Whether a browser page of `origin` may read storefront answers: exactly `https://` + a site's domain, or `https://www.`
 * + it (docs/DECISIONS.md §55). Case-insensitive; any port, path or other scheme is refused.
 */
export const isAllowedOrigin = (origin: string, domains: ReadonlyArray<string | null>): boolean => {
  const lower = origin.toLowerCase()
  if (!lower.startsWith("https://")) return false
  const host = lower.slice("https://".length)
  if (host === "" || host.includes("/") || host.includes(":")) return false
  for (const domain of domains) {
    if (domain === null) continue
    const site = siteHost(domain)
    if (site !== "" && (host === site || host === `www.${site}`)) return true
  }
  return false
}
