/**
 * Catalog records that reviews and questions refer to (docs/DECISIONS.md §9): sites, products and customers, in the shape
 * the API returns them. Products carry their review stats, kept current by the review write side.
 */
import { Schema } from "effect"
import { CustomerId, ProductId, SiteId } from "../kernel/Ids.ts"
import { Metadata } from "../kernel/Metadata.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

const Text = Schema.String

export const Site = Schema.Struct({
  id: SiteId,
  name: Text,
  domain: Schema.NullOr(Text),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Site" })
export type Site = typeof Site.Type

/**
 * How many published reviews of a product have each number of stars (docs/DECISIONS.md §55). A rating counts for the
 * nearest whole star, halves up (`starOf`): 4.5 is a 5, 4.49 a 4.
 */
export const RatingHistogram = Schema.Struct({
  "1": Schema.Int,
  "2": Schema.Int,
  "3": Schema.Int,
  "4": Schema.Int,
  "5": Schema.Int
}).annotate({ identifier: "RatingHistogram" })
export type RatingHistogram = typeof RatingHistogram.Type

export const stars = ["1", "2", "3", "4", "5"] as const

/** The whole star a rating (1..5, fractions allowed) counts for: the nearest, halves up; the SQL is `floor(r + 0.5)`. */
export const starOf = (rating: number): 1 | 2 | 3 | 4 | 5 =>
  Math.min(5, Math.max(1, Math.floor(rating + 0.5))) as 1 | 2 | 3 | 4 | 5

export const emptyHistogram: RatingHistogram = { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 }

/** The histogram of the published ones among `reviews`. */
export const histogramOf = (
  reviews: Iterable<{ readonly rating: number; readonly published: boolean }>
): RatingHistogram => {
  const counts = [0, 0, 0, 0, 0]
  for (const r of reviews) if (r.published) counts[starOf(r.rating) - 1]!++
  return { "1": counts[0]!, "2": counts[1]!, "3": counts[2]!, "4": counts[3]!, "5": counts[4]! }
}

/**
 * Review stats of a product: counts, the average rating of its published reviews (null when none) and their
 * histogram by star.
 */
export const ProductReviewStats = Schema.Struct({
  reviewCount: Schema.Int,
  publishedReviewCount: Schema.Int,
  averageRating: Schema.NullOr(Schema.Finite),
  ratingHistogram: RatingHistogram
})
export type ProductReviewStats = typeof ProductReviewStats.Type

export const Product = Schema.Struct({
  id: ProductId,
  /** Unique per organization. */
  slug: Text,
  title: Text,
  description: Schema.NullOr(Text),
  imageUrl: Schema.NullOr(Text),
  url: Schema.NullOr(Text),
  /** The product's id in the merchant's store (unique per organization when set). */
  externalId: Schema.NullOr(Text),
  metadata: Metadata,
  notes: Schema.NullOr(Text),
  ...ProductReviewStats.fields,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Product" })
export type Product = typeof Product.Type

export const Customer = Schema.Struct({
  id: CustomerId,
  /** Unique per organization, stored lower-cased. */
  email: Text,
  phone: Schema.NullOr(Text),
  firstName: Schema.NullOr(Text),
  lastName: Schema.NullOr(Text),
  country: Schema.NullOr(Text),
  birthday: Schema.NullOr(Text),
  metadata: Metadata,
  notes: Schema.NullOr(Text),
  emailOptOut: Schema.Boolean,
  emailOptOutAt: Schema.NullOr(Timestamp),
  emailOptOutSource: Schema.NullOr(Text),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Customer" })
export type Customer = typeof Customer.Type

/**
 * A new product: what the caller gives over blank optional fields and no reviews yet. The one constructor of the
 * record, for use-cases and test seeds alike.
 */
export const newProduct = (
  id: ProductId,
  at: Timestamp,
  fields: Pick<Product, "slug" | "title"> & Partial<Product>
): Product => ({
  id,
  description: null,
  imageUrl: null,
  url: null,
  externalId: null,
  metadata: {},
  notes: null,
  reviewCount: 0,
  publishedReviewCount: 0,
  averageRating: null,
  ratingHistogram: emptyHistogram,
  createdAt: at,
  updatedAt: at,
  ...fields
})

/** A new customer: what the caller gives over blank optional fields, opted in. */
export const newCustomer = (
  id: CustomerId,
  at: Timestamp,
  fields: Pick<Customer, "email"> & Partial<Customer>
): Customer => ({
  id,
  phone: null,
  firstName: null,
  lastName: null,
  country: null,
  birthday: null,
  metadata: {},
  notes: null,
  emailOptOut: false,
  emailOptOutAt: null,
  emailOptOutSource: null,
  createdAt: at,
  updatedAt: at,
  ...fields
})
