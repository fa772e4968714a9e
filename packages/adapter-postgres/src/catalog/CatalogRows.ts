/**
 * Catalog rows → records: the one mapping of a `sites`, `products` or `customers` row (`SELECT *`, camelCase keys)
 * to the record the API answers, for every reader (catalog, review includes, question includes, the test kit), and
 * the one column list of a customer row that every set-based insert of customers uses.
 */
import type { Catalog } from "@feedback/core"
import { jsonValue, toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"

type Row = Record<string, any>

export const toSite = (r: Row): Catalog.Site => ({
  id: r.id,
  name: r.name,
  domain: r.domain,
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

/** A `products` row, however it was read (through the client's renames or named by `PRODUCT_SELECT`). */
export const toProduct = (r: Row): Catalog.Product => ({
  id: r.id,
  slug: r.slug,
  title: r.title,
  description: r.description,
  imageUrl: r.imageUrl,
  url: r.url,
  externalId: r.externalId,
  metadata: jsonValue(r.metadata),
  notes: r.notes,
  reviewCount: Number(r.reviewCount),
  publishedReviewCount: Number(r.publishedReviewCount),
  averageRating: r.averageRating === null ? null : Number(r.averageRating),
  ratingHistogram: {
    "1": Number(r.publishedOneStar),
    "2": Number(r.publishedTwoStars),
    "3": Number(r.publishedThreeStars),
    "4": Number(r.publishedFourStars),
    "5": Number(r.publishedFiveStars)
  },
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

/** A `customers` row, however it was read (through the client's renames or named by `CUSTOMER_SELECT`). */
export const toCustomer = (r: Row): Catalog.Customer => ({
  id: r.id,
  email: r.email,
  phone: r.phone,
  firstName: r.firstName,
  lastName: r.lastName,
  country: r.country,
  birthday: r.birthday,
  metadata: jsonValue(r.metadata),
  notes: r.notes,
  emailOptOut: r.emailOptOut,
  emailOptOutAt: toNullableTimestamp(r.emailOptOutAt),
  emailOptOutSource: r.emailOptOutSource,
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

/** The columns of a `products` row (alias `p`) under the names the client would give them, for `withoutTransforms`. */
export const PRODUCT_SELECT =
  `p.id, p.slug, p.title, p.description, p.image_url AS "imageUrl", p.url, p.external_id AS "externalId",
  p.metadata, p.notes, p.review_count AS "reviewCount", p.published_review_count AS "publishedReviewCount",
  p.average_rating AS "averageRating", p.published_one_star AS "publishedOneStar", p.published_two_stars AS "publishedTwoStars",
  p.published_three_stars AS "publishedThreeStars", p.published_four_stars AS "publishedFourStars", p.published_five_stars AS "publishedFiveStars",
  p.created_at AS "createdAt", p.updated_at AS "updatedAt"`

/** The columns of a `customers` row (alias `c`) under the names the client would give them, for `withoutTransforms`. */
export const CUSTOMER_SELECT =
  `c.id, c.email, c.phone, c.first_name AS "firstName", c.last_name AS "lastName", c.country,
  c.birthday, c.metadata, c.notes, c.email_opt_out AS "emailOptOut", c.email_opt_out_at AS "emailOptOutAt",
  c.email_opt_out_source AS "emailOptOutSource", c.created_at AS "createdAt", c.updated_at AS "updatedAt"`

export const CUSTOMER_COLUMNS =
  `id, email, phone, first_name, last_name, country, birthday, metadata, notes, email_opt_out,
  email_opt_out_at, email_opt_out_source, created_at, updated_at`

/** The customer columns as `jsonb_to_recordset(… AS x(${CUSTOMER_RECORDSET}))` reads them. */
export const CUSTOMER_RECORDSET = `id uuid, email text, phone text, first_name text, last_name text, country text,
  birthday text, metadata jsonb, notes text, email_opt_out boolean, email_opt_out_at timestamptz,
  email_opt_out_source text, created_at timestamptz, updated_at timestamptz`

/** A customer as one element of the JSON array that `CUSTOMER_RECORDSET` expands. */
export const customerInput = (c: Catalog.Customer) => ({
  id: c.id,
  email: c.email,
  phone: c.phone,
  first_name: c.firstName,
  last_name: c.lastName,
  country: c.country,
  birthday: c.birthday,
  metadata: c.metadata,
  notes: c.notes,
  email_opt_out: c.emailOptOut,
  email_opt_out_at: c.emailOptOutAt,
  email_opt_out_source: c.emailOptOutSource,
  created_at: c.createdAt,
  updated_at: c.updatedAt
})

/** `starOf` in SQL: the whole star a rating counts for (nearest, halves up; docs/DECISIONS.md §55). */
export const starSql = (rating: string) => `least(5, greatest(1, floor(${rating} + 0.5)))::int`

/** The histogram columns of `products`, star 1 to 5. */
export const histogramColumns = [
  "published_one_star",
  "published_two_stars",
  "published_three_stars",
  "published_four_stars",
  "published_five_stars"
]
