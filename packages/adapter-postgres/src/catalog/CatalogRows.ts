/**
 * Catalog rows → records: the one mapping of a `sites`, `products` or `customers` row (`SELECT *`, camelCase keys)
 * to the record the API answers, for every reader (catalog, review includes, question includes, the test kit).
 */
import type { Customer, Product, Site } from "@feedback/core"
import { jsonValue, toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"

type Row = Record<string, any>

export const toSite = (r: Row): Site => ({
  id: r.id,
  name: r.name,
  domain: r.domain,
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

export const toProduct = (r: Row): Product => ({
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
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

export const toCustomer = (r: Row): Customer => ({
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
