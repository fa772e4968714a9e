/**
 * The pure rules of the review write side, without any store: what a PATCH does, which import rows resolve, and the
 * input schemas' cross-field checks.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Result, Schema } from "effect"
import { Kernel, Reviews } from "@feedback/core"
import { makeReview } from "@feedback/testing"

const AT = "2026-02-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp
const failure = <A, E>(r: Result.Result<A, E>): E | undefined => Result.isFailure(r) ? r.failure : undefined
const product = "0190f000-0000-7000-8000-000000000001" as never

describe("planReviewPatch", () => {
  const base = makeReview(product, { title: "Hi", body: "Call 555-0100", published: false, metadata: { a: "1" } })

  it("an empty patch writes and announces nothing", () => {
    const out = Result.getOrThrow(Reviews.planReviewPatch(base, {}, AT))
    expect(out).toEqual({ review: base, write: false, announce: false, publishedChanged: false })
  })

  it("published: a change announces; the same value only stamps moderatedAt", () => {
    const changed = Result.getOrThrow(Reviews.planReviewPatch(base, { published: true }, AT))
    expect(changed).toMatchObject({ write: true, announce: true, publishedChanged: true })
    expect(changed.review).toMatchObject({ published: true, moderatedAt: AT, updatedAt: AT })
    const same = Result.getOrThrow(Reviews.planReviewPatch(base, { published: false }, AT))
    expect(same).toMatchObject({ write: true, announce: false, publishedChanged: false })
    expect(same.review).toMatchObject({ published: false, moderatedAt: AT, updatedAt: AT })
  })

  it("the first redaction stores both originals; a later one keeps them", () => {
    const first =
      Result.getOrThrow(Reviews.planReviewPatch(base, { body: `Call ${Reviews.REDACTION_MARKER}` }, AT)).review
    expect(first).toMatchObject({
      body: `Call ${Reviews.REDACTION_MARKER}`,
      originalTitle: "Hi",
      originalBody: "Call 555-0100",
      redactedAt: AT
    })
    const later = "2026-03-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp
    const second = Result.getOrThrow(Reviews.planReviewPatch(first, { title: Reviews.REDACTION_MARKER }, later)).review
    expect(second).toMatchObject({
      title: Reviews.REDACTION_MARKER,
      originalTitle: "Hi",
      originalBody: "Call 555-0100",
      redactedAt: later
    })
  })

  it("a refused redaction names the field, title first", () => {
    const error = failure(Reviews.planReviewPatch(base, { title: "Hello", body: "nope" }, AT))
    expect(error).toMatchObject({ _tag: "InvalidRedaction", field: "title" })
  })

  it("a redaction whose markers would grow a text past its limit is refused naming the field (DECISIONS §53)", () => {
    // 4,000 one-letter words: each letter turned into a marker grows the body from 8,000 to 44,000 characters.
    const body = "a ".repeat(4_000)
    const review = makeReview(product, { title: "t ".repeat(250).trim(), body, published: false })
    const everyLetter = body.replaceAll("a", Reviews.REDACTION_MARKER)
    expect(failure(Reviews.planReviewPatch(review, { body: everyLetter }, AT))).toMatchObject({
      _tag: "InvalidRequest",
      issues: [{
        path: "body.body",
        message: expect.stringMatching(/^would be 44000 characters after redaction, over the limit of 20000/)
      }]
    })
    expect(
      failure(Reviews.planReviewPatch(review, { title: review.title!.replaceAll("t", Reviews.REDACTION_MARKER) }, AT))
    )
      .toMatchObject({
        _tag: "InvalidRequest",
        issues: [{ path: "body.title" }]
      })
    // One wider span is the same redaction and fits.
    expect(Result.getOrThrow(Reviews.planReviewPatch(review, { body: Reviews.REDACTION_MARKER }, AT)).review.body).toBe(
      Reviews.REDACTION_MARKER
    )
    // A text already over its limit (stored before the limits) can be redacted as long as it does not grow.
    const legacy = makeReview(product, {
      title: null,
      body: "x".repeat(25_000) + "secret" + "y".repeat(100),
      published: false
    })
    const hidden = "x".repeat(25_000) + Reviews.REDACTION_MARKER + "y".repeat(96)
    expect(Result.getOrThrow(Reviews.planReviewPatch(legacy, { body: hidden }, AT)).review.body).toBe(hidden)
    expect(
      failure(
        Reviews.planReviewPatch(legacy, { body: "x".repeat(25_000) + Reviews.REDACTION_MARKER + "y".repeat(100) }, AT)
      )
    )
      .toMatchObject({ _tag: "InvalidRequest" })
  })

  it("metadata: equal pairs in another order change nothing; different ones replace wholesale", () => {
    expect(Result.getOrThrow(Reviews.planReviewPatch(base, { metadata: { a: "1" } }, AT)).write).toBe(false)
    const out = Result.getOrThrow(Reviews.planReviewPatch(base, { metadata: { b: "2" } }, AT))
    expect(out).toMatchObject({ announce: true, review: { metadata: { b: "2" }, moderatedAt: null } })
  })
})

describe("planReplyPatch", () => {
  const reply = {
    id: "0190f000-0000-7000-8000-0000000000r1" as never,
    reviewId: "0190f000-0000-7000-8000-0000000000r2" as never,
    body: "Thanks",
    responderName: "Shop",
    published: false,
    metadata: { a: "1" },
    createdAt: AT,
    updatedAt: AT
  }
  const later = "2026-03-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp
  it("changes only sent fields and stamps updatedAt; nothing sent or equal values change nothing", () => {
    expect(Reviews.planReplyPatch(reply, {}, later)).toBeUndefined()
    expect(Reviews.planReplyPatch(reply, { body: "Thanks", metadata: { a: "1" } }, later)).toBeUndefined()
    expect(Reviews.planReplyPatch(reply, { published: true }, later)).toEqual({
      ...reply,
      published: true,
      updatedAt: later
    })
    expect(Reviews.planReplyPatch(reply, { metadata: {} }, later)).toEqual({ ...reply, metadata: {}, updatedAt: later })
  })
})

describe("selectImportRows", () => {
  const mug = "0190f000-0000-7000-8000-00000000mug1" as never
  const site = "0190f000-0000-7000-8000-0000000000s1"
  const refs: Reviews.ResolvedImportReferences = {
    siteIds: new Set([site]),
    productsBySlug: new Map([["mug", mug]]),
    productsByExternalId: new Map([["ext", mug]]),
    productsByUrl: new Map([["https://x/mug", [mug]], ["https://x/shared", [mug, "other" as never]]]),
    customersByEmail: new Map(),
    importedExternalIds: new Set(["old"])
  }

  it("resolves by slug, then externalId, then url; refuses ambiguous urls, foreign sites and repeated externalIds", () => {
    const rows = [
      { product: "mug", rating: 5 },
      { product: "nope", productExternalId: "ext", rating: 5 },
      { productUrl: "https://x/shared", rating: 5 },
      { product: "mug", site: "0190f000-0000-7000-8000-0000000000s9" as never, rating: 5 },
      { product: "mug", externalId: "old", rating: 5 },
      { product: "mug", externalId: "new", rating: 5 },
      { product: "mug", externalId: "new", rating: 5 },
      { product: "nope", productUrl: "https://x/nowhere", rating: 5 }
    ]
    const out = Result.getOrThrow(Reviews.selectImportRows(rows, refs, false))
    expect(out.accepted.map((a) => a.index)).toEqual([0, 1, 5])
    expect(out.skipped).toEqual([
      { index: 2, message: expect.stringContaining("several products") },
      { index: 3, message: expect.stringContaining("no site") },
      { index: 4, message: "a review with externalId \"old\" was imported before" },
      { index: 6, message: "externalId \"new\" repeats row 5 of this import" },
      { index: 7, message: "no product of this organization has slug \"nope\" or url \"https://x/nowhere\"" }
    ])
    const strict = failure(Reviews.selectImportRows(rows, refs, true))
    expect(strict).toMatchObject({ _tag: "ImportFailed", index: 2 })
  })

  it("collects distinct references, emails lower-cased", () => {
    const refsOf = Reviews.importReferencesOf([
      { product: "a", customer: "X@Y.com", rating: 1 },
      { product: "a", customer: "x@y.com", externalId: "e", rating: 1 }
    ])
    expect(refsOf).toEqual({
      siteIds: [],
      productSlugs: ["a"],
      productExternalIds: [],
      productUrls: [],
      customerEmails: ["x@y.com"],
      reviewExternalIds: ["e"]
    })
  })
})

describe("fileFromUrl", () => {
  it("takes the decoded last segment and guesses the type from the extension", () => {
    expect(Reviews.fileFromUrl("https://cdn.example/a/b%20c.PNG?x=1")).toEqual({
      fileName: "b c.PNG",
      contentType: "image/png"
    })
    expect(Reviews.fileFromUrl("https://cdn.example/")).toEqual({
      fileName: "image",
      contentType: "application/octet-stream"
    })
    expect(Reviews.fileFromUrl("https://cdn.example/x%00.jpg").fileName).toBe("x%00.jpg")
    expect(Reviews.fileFromUrl("https://cdn.example/%E0%A4%A.gif").fileName).toBe("%E0%A4%A.gif")
  })
})

describe("input schemas", () => {
  const decode = <S extends Schema.Top>(schema: S) => Schema.decodeUnknownResult(Schema.toCodecJson(schema) as never)

  it("a deletion with reason other needs a non-blank note", () => {
    expect(Result.isSuccess(decode(Reviews.ReviewDeletionRequest)({ reason: "other", note: "why" }))).toBe(true)
    expect(Result.isFailure(decode(Reviews.ReviewDeletionRequest)({ reason: "other" }))).toBe(true)
    expect(Result.isFailure(decode(Reviews.ReviewDeletionRequest)({ reason: "other", note: " " }))).toBe(true)
    expect(Result.isSuccess(decode(Reviews.ReviewDeletionRequest)({ reason: "spam" }))).toBe(true)
  })

  it("import rows: a product reference, pending xor published, response before its details, at most 10,000 rows", () => {
    const ok = (data: unknown) => Result.isSuccess(decode(Reviews.ImportRequest)({ data }))
    expect(ok([{ product: "a", rating: 5 }])).toBe(true)
    expect(ok([{ rating: 5 }])).toBe(false)
    expect(ok([{ product: "a", rating: 5, pending: true, published: false }])).toBe(true)
    expect(ok([{ product: "a", rating: 5, pending: true, published: true }])).toBe(false)
    expect(ok([{ product: "a", rating: 5, responseCreatedAt: "2026-01-01T00:00:00Z" }])).toBe(false)
    expect(ok([{ product: "a", rating: 5.5 }])).toBe(false)
    expect(ok([{ product: "a", rating: 4.5, title: null, body: null }])).toBe(true)
    expect(ok(Array.from({ length: 10_000 }, () => ({ product: "a", rating: 1 })))).toBe(true)
    expect(ok(Array.from({ length: 10_001 }, () => ({ product: "a", rating: 1 })))).toBe(false)
  })
})

describe("productStatsDeltas", () => {
  const products = [
    "0190f000-0000-7000-8000-000000000001",
    "0190f000-0000-7000-8000-000000000002",
    "0190f000-0000-7000-8000-000000000003"
  ] as Array<Kernel.ProductId>
  const review = fc.record({
    productId: fc.constantFrom(...products),
    published: fc.boolean(),
    // Quarters, so every sum is exact whatever the order of adding.
    rating: fc.integer({ min: 4, max: 20 }).map((q) => q / 4)
  })

  it("adds up, per product and once each in order of first appearance, what a recomputation counts", () =>
    fc.assert(fc.property(fc.array(review, { maxLength: 40 }), (reviews) => {
      const deltas = Reviews.productStatsDeltas(reviews)
      expect(deltas.map((d) => d.productId)).toEqual([...new Set(reviews.map((r) => r.productId))])
      for (const d of deltas) {
        const mine = reviews.filter((r) => r.productId === d.productId)
        const published = mine.filter((r) => r.published)
        expect(d).toEqual({
          productId: d.productId,
          reviews: mine.length,
          published: published.length,
          publishedRatingSum: published.reduce((sum, r) => sum + r.rating, 0),
          publishedByStar: [1, 2, 3, 4, 5].map((n) =>
            published.filter((r) => Math.min(5, Math.round(r.rating)) === n).length
          )
        })
      }
    })))
})
