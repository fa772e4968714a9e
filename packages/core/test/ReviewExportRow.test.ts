import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { csvLine, REVIEW_EXPORT_COLUMNS, reviewExportLine } from "../src/jobs/JobRules.ts"
import type { Review } from "../src/reviews/Review.ts"

/** The export row as specified: every field set, an absent one as null (docs/JOBS.md: NDJSON writes every field). */
const referenceRow = (review: Review): Record<string, unknown> => {
  const pending = !review.published && review.moderatedAt === null
  const row: Record<string, unknown> = {
    externalId: review.externalId,
    product: review.product?.slug ?? null,
    productVariant: review.productVariantId,
    customer: review.customer?.email ?? null,
    title: review.title,
    body: review.body,
    rating: review.rating,
    published: pending ? null : review.published,
    pending: pending ? true : null,
    verifiedBuyer: review.verifiedBuyer,
    createdAt: review.createdAt,
    imageUrls: review.files === undefined || review.files.length === 0 ? null : review.files.map((f) => f.url),
    response: review.response?.body ?? null,
    responderName: review.response?.responderName ?? null,
    responseCreatedAt: review.response?.createdAt ?? null,
    answers: review.answers === undefined || review.answers.length === 0 ? null : review.answers,
    metadata: review.metadata,
    id: review.id,
    siteId: review.siteId,
    productId: review.productId,
    productVariantId: review.productVariantId,
    customerId: review.customerId,
    surveyId: review.surveyId,
    originalTitle: review.originalTitle,
    originalBody: review.originalBody,
    redactedAt: review.redactedAt,
    flagged: review.flagged,
    flags: review.flags,
    moderatedAt: review.moderatedAt,
    ipAddress: review.ipAddress,
    browserFingerprint: review.browserFingerprint,
    ipCountry: review.ipCountry,
    userAgent: review.userAgent,
    submitSeconds: review.submitSeconds,
    updatedAt: review.updatedAt
  }
  for (const key of Object.keys(row)) if (row[key] === undefined) row[key] = null
  return row
}

const text = fc.option(fc.string({ maxLength: 6 }), { nil: null })
const at = fc.option(fc.constantFrom("2025-06-01T12:00:00.000Z", "2026-01-02T03:04:05.678Z"), { nil: null })
const arbReview = fc.record({
  id: fc.uuid(),
  siteId: text,
  productId: fc.uuid(),
  productVariantId: text,
  customerId: text,
  surveyId: text,
  title: text,
  body: text,
  originalTitle: text,
  originalBody: text,
  redactedAt: at,
  rating: fc.integer({ min: 1, max: 5 }),
  published: fc.boolean(),
  verifiedBuyer: fc.boolean(),
  flagged: fc.boolean(),
  flags: fc.array(fc.constantFrom("spam", "profanity"), { maxLength: 2 }),
  moderatedAt: at,
  ipAddress: text,
  browserFingerprint: text,
  ipCountry: text,
  userAgent: text,
  submitSeconds: fc.option(fc.integer({ min: 0, max: 999 }), { nil: null }),
  metadata: fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
  externalId: text,
  createdAt: fc.constant("2025-06-01T12:00:00.000Z"),
  updatedAt: fc.constant("2025-06-01T12:00:00.000Z"),
  product: fc.option(fc.record({ slug: fc.string({ maxLength: 4 }) }), { nil: undefined }),
  customer: fc.option(fc.option(fc.record({ email: fc.string({ maxLength: 4 }) }), { nil: null }), { nil: undefined }),
  response: fc.option(
    fc.option(
      fc.record({
        body: fc.string({ maxLength: 4 }),
        responderName: text,
        createdAt: fc.constant("2025-06-01T12:00:00.000Z")
      }),
      { nil: null }
    ),
    { nil: undefined }
  ),
  files: fc.option(fc.array(fc.record({ url: fc.webUrl() }), { maxLength: 2 }), { nil: undefined }),
  answers: fc.option(
    fc.array(fc.record({ questionId: fc.uuid(), label: fc.string({ maxLength: 3 }) }), { maxLength: 2 }),
    { nil: undefined }
  )
}, {
  requiredKeys: [
    "id",
    "productId",
    "rating",
    "published",
    "verifiedBuyer",
    "flagged",
    "flags",
    "metadata",
    "createdAt",
    "updatedAt"
  ]
}) as unknown as fc.Arbitrary<Review>

describe("reviewExportLine", () => {
  it("writes the reference row: same fields, same values, same key order, as JSON.stringify and the CSV rule do", () => {
    fc.assert(
      fc.property(arbReview, (review) => {
        const reference = referenceRow(review)
        expect(Object.keys(reference)).toEqual(REVIEW_EXPORT_COLUMNS)
        expect(reviewExportLine("ndjson", review)).toBe(JSON.stringify(reference) + "\n")
        expect(reviewExportLine("csv", review)).toBe(csvLine(REVIEW_EXPORT_COLUMNS.map((c) => reference[c])))
      }),
      { numRuns: 500 }
    )
  })

  it("writes JSON values as JSON.stringify does inside an object (escapes, nesting, numbers)", () => {
    fc.assert(
      fc.property(arbReview, fc.string(), fc.jsonValue(), fc.double(), (review, title, metadata, rating) => {
        const odd = { ...review, title, metadata, rating } as Review
        expect(reviewExportLine("ndjson", odd)).toBe(JSON.stringify(referenceRow(odd)) + "\n")
      })
    )
  })
})
