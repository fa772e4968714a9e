/**
 * The review write endpoints over HTTP: validation (strict bodies, null vs omitted), every error envelope they can
 * answer (400, 403, 404, 409, 422) and their success shapes. Store behaviour itself is covered by the conformance
 * suite; here the store is memory, seeded through the `StoreTestKit` of the same store the server uses.
 */
import { Kernel, Reviews } from "@feedback/core"
import { makeProduct, makeReview, StoreTestKit } from "@feedback/testing"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { MemoryStoreTestKit } from "@feedback/adapter-memory/testing"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeWebHandler } from "../src/server/ApiServer.ts"
import {
  allPermissions,
  expectError,
  issuePaths,
  OPERATOR_TOKEN,
  operatorVia,
  provisionVia,
  requestVia
} from "./Http.ts"

const services = Layer.merge(MemoryStoreTestKit.pipe(Layer.provideMerge(MemoryStoreLayer)), Kernel.IdGenerator.uuidV7)
const runtime = ManagedRuntime.make(services)
// The handler shares the runtime's memo map, so it serves the very store the tests seed.
const { handler, dispose } = makeWebHandler(services, { operatorToken: Redacted.make(OPERATOR_TOKEN) }, runtime.memoMap)

beforeAll(() => runtime.runPromise(Effect.void))
afterAll(async () => {
  await dispose()
  await runtime.dispose()
})

const request = requestVia(handler)
const call = (method: string, path: string, token?: string, body?: unknown, raw?: string) =>
  request(method, path, { token, body, rawBody: raw })
const operator = operatorVia(request)
const provision = provisionVia(request)

const seed = <A>(f: (kit: StoreTestKit["Service"]) => Effect.Effect<A>) => runtime.runPromise(StoreTestKit.use(f))

/** An organization with a key, a product (slug `mug`) and reviews made from the overrides. */
const setup = async (reviews: ReadonlyArray<Partial<Reviews.ReviewRecord>> = [{}]) => {
  const { organizationId, key } = await provision()
  const org = organizationId as Kernel.OrganizationId
  const product = makeProduct({ slug: "mug", title: "Blue Mug" })
  const stored = reviews.map((o) => makeReview(product.id as Kernel.ProductId, o))
  await seed((fx) =>
    Effect.gen(function*() {
      yield* fx.insertProduct(org, product)
      yield* fx.insertReviews(stored.map((review) => ({ organizationId: org, review })))
    })
  )
  return { org, key, product, reviews: stored }
}

const reviewKeys = [
  "id",
  "siteId",
  "productId",
  "productVariantId",
  "customerId",
  "surveyId",
  "title",
  "body",
  "originalTitle",
  "originalBody",
  "redactedAt",
  "rating",
  "published",
  "verifiedBuyer",
  "flagged",
  "flags",
  "moderatedAt",
  "ipAddress",
  "browserFingerprint",
  "ipCountry",
  "userAgent",
  "submitSeconds",
  "metadata",
  "externalId",
  "createdAt",
  "updatedAt"
].sort()

describe("PATCH /reviews/{id}", () => {
  it("publishes and answers the review without extras", async () => {
    const { key, reviews: [review] } = await setup([{ published: false }])
    const res = await call("PATCH", `/reviews/${review!.id}`, key, { published: true })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(reviewKeys)
    expect(res.body.published).toBe(true)
    expect(res.body.moderatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(res.headers.get("x-rate-limit-cost")).toBe("1")
  })

  it("redacts; a non-redaction edit is 422 INVALID_REDACTION naming the field and changes nothing", async () => {
    const { key, reviews: [review] } = await setup([{ title: "Hello", body: "Call 555-0100 now" }])
    const bad = await call("PATCH", `/reviews/${review!.id}`, key, { body: "Call me now", published: true })
    expectError(bad, 422, "INVALID_REDACTION")
    expect(bad.body.error.details).toEqual({ field: "body" })
    const unchanged = await call("PATCH", `/reviews/${review!.id}`, key, {})
    expect(unchanged.body.published).toBe(review!.published)
    expect(unchanged.body.body).toBe("Call 555-0100 now")
    const ok = await call("PATCH", `/reviews/${review!.id}`, key, { body: `Call ${Reviews.REDACTION_MARKER} now` })
    expect(ok.status).toBe(200)
    expect(ok.body.body).toBe(`Call ${Reviews.REDACTION_MARKER} now`)
    expect(ok.body.originalBody).toBe("Call 555-0100 now")
    expect(ok.body.originalTitle).toBe("Hello")
    expect(ok.body.redactedAt).not.toBeNull()
  })

  it("null title is accepted for a null title and is 422 for a non-null one (null is not omission)", async () => {
    const { key, reviews: [withTitle, withoutTitle] } = await setup([{ title: "Hello" }, { title: null }])
    expectError(await call("PATCH", `/reviews/${withTitle!.id}`, key, { title: null }), 422, "INVALID_REDACTION")
    const ok = await call("PATCH", `/reviews/${withoutTitle!.id}`, key, { title: null })
    expect(ok.status).toBe(200)
    expect(ok.body.title).toBeNull()
  })

  it("a 1 MB body is redacted through HTTP", async () => {
    const body = "x".repeat(500_000) + "0123456789" + "y".repeat(500_000)
    const { key, reviews: [review] } = await setup([{ body }])
    // That the check is linear is Redaction.test.ts's ratio; here the whole path takes such a body.
    const res = await call("PATCH", `/reviews/${review!.id}`, key, {
      body: "x".repeat(500_000) + Reviews.REDACTION_MARKER + "y".repeat(500_000)
    })
    expect(res.status).toBe(200)
    expect(res.body.body.length).toBe(1_000_010)
  })

  it("any other field, a typo, a wrong type or null where not allowed is a 400 naming it", async () => {
    const { key, reviews: [review] } = await setup([{ published: false }])
    const cases: Array<[unknown, string]> = [
      [{ rating: 1 }, "body.rating"],
      [{ publised: true }, "body.publised"],
      [{ published: "yes" }, "body.published"],
      [{ published: null }, "body.published"],
      [{ metadata: { a: 1 } }, "body.metadata.a"],
      [{ metadata: null }, "body.metadata"],
      [{ metadata: { a: "nul\u0000" } }, "body.metadata.a"],
      [{ title: 5 }, "body.title"]
    ]
    for (const [payload, path] of cases) {
      const res = await call("PATCH", `/reviews/${review!.id}`, key, payload)
      expectError(res, 400, "INVALID_REQUEST")
      expect(issuePaths(res)).toContain(path)
    }
    const after = await call("PATCH", `/reviews/${review!.id}`, key, {})
    expect(after.body.published).toBe(false)
    expect(after.body.moderatedAt).toBeNull()
  })

  it("a malformed id is 400; another organization's review is 404; a read-only key is 403", async () => {
    const { reviews: [review] } = await setup()
    const other = await provision()
    expectError(await call("PATCH", "/reviews/not-a-uuid", other.key, {}), 400, "INVALID_REQUEST")
    const foreign = await call("PATCH", `/reviews/${review!.id}`, other.key, { published: true })
    expectError(foreign, 404, "NOT_FOUND")
    expect(foreign.body.error.details).toEqual({ resource: "review" })
    const readOnly = await provision({ permissions: ["reviews:read"] })
    const forbidden = await call("PATCH", `/reviews/${review!.id}`, readOnly.key, { published: true })
    expectError(forbidden, 403, "FORBIDDEN")
    expect(forbidden.body.error.details).toEqual({ permission: "reviews:write" })
  })
})

describe("DELETE /reviews/{id}", () => {
  it("needs a reason, and a note when the reason is other", async () => {
    const { key, reviews: [review] } = await setup()
    expectError(await call("DELETE", `/reviews/${review!.id}`, key), 400, "INVALID_REQUEST")
    const noReason = await call("DELETE", `/reviews/${review!.id}`, key, {})
    expectError(noReason, 400, "INVALID_REQUEST")
    expect(issuePaths(noReason)).toEqual(["body.reason"])
    const badReason = await call("DELETE", `/reviews/${review!.id}`, key, { reason: "boring" })
    expect(issuePaths(badReason)).toEqual(["body.reason"])
    for (const body of [{ reason: "other" }, { reason: "other", note: "  " }]) {
      const res = await call("DELETE", `/reviews/${review!.id}`, key, body)
      expectError(res, 400, "INVALID_REQUEST")
      expect(issuePaths(res)).toEqual(["body.note"])
    }
    const nullNote = await call("DELETE", `/reviews/${review!.id}`, key, { reason: "spam", note: null })
    expectError(nullNote, 400, "INVALID_REQUEST")
    expect(issuePaths(nullNote)).toEqual(["body.note"])
    const extra = await call("DELETE", `/reviews/${review!.id}`, key, { reason: "spam", force: true })
    expect(issuePaths(extra)).toEqual(["body.force"])
  })

  it("answers the deleted review; a second delete and another organization's review are 404", async () => {
    const { key, reviews: [review, second] } = await setup([{}, {}])
    const other = await provision()
    expectError(await call("DELETE", `/reviews/${second!.id}`, other.key, { reason: "spam" }), 404, "NOT_FOUND")
    const res = await call("DELETE", `/reviews/${review!.id}`, key, {
      reason: "other",
      note: "Customer asked by phone"
    })
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(review!.id)
    expect(Object.keys(res.body).sort()).toEqual(reviewKeys)
    expectError(await call("DELETE", `/reviews/${review!.id}`, key, { reason: "spam" }), 404, "NOT_FOUND")
    expectError(await call("PATCH", `/reviews/${review!.id}`, key, {}), 404, "NOT_FOUND")
  })
})

describe("PATCH /reviews/bulk-update", () => {
  it("is routed apart from /reviews/{id}, costs 5 and answers the matched count", async () => {
    const { key } = await setup([{ rating: 5 }, { rating: 4 }, { rating: 1, title: "Broken handle" }])
    const res = await call(
      "PATCH",
      `/reviews/bulk-update?filter=${encodeURIComponent(JSON.stringify({ rating: { $gte: 4 } }))}`,
      key,
      { published: true }
    )
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ count: 2 })
    expect(res.headers.get("x-rate-limit-cost")).toBe("5")
    const searched = await call("PATCH", "/reviews/bulk-update?search=broken", key, { published: false })
    expect(searched.body).toEqual({ count: 1 })
    const all = await call("PATCH", "/reviews/bulk-update", key, { published: true })
    expect(all.body).toEqual({ count: 3 })
  })

  it("rejects a missing or non-boolean published, unknown fields, bad filters and unknown query parameters", async () => {
    const { key } = await setup()
    const cases: Array<[string, unknown, string]> = [
      ["", {}, "body.published"],
      ["", { published: null }, "body.published"],
      ["", { published: "true" }, "body.published"],
      ["", { published: true, rating: 5 }, "body.rating"],
      [`?filter=${encodeURIComponent("{oops")}`, { published: true }, "filter"],
      [`?filter=${encodeURIComponent(JSON.stringify({ title: "x" }))}`, { published: true }, "filter.title"],
      [
        `?filter=${encodeURIComponent(JSON.stringify({ rating: { $gte: "4" } }))}`,
        { published: true },
        "filter.rating.$gte"
      ],
      ["?filtre=%7B%7D", { published: true }, "query.filtre"]
    ]
    for (const [query, body, path] of cases) {
      const res = await call("PATCH", `/reviews/bulk-update${query}`, key, body)
      expectError(res, 400, "INVALID_REQUEST")
      expect(issuePaths(res)).toContain(path)
    }
  })
})

describe("POST /reviews/import", () => {
  it("imports good rows, lists skipped ones, and costs 10", async () => {
    const { key } = await setup([])
    const res = await call("POST", "/reviews/import", key, {
      data: [
        {
          product: "mug",
          rating: 5,
          title: null,
          customer: "Ada@Example.com",
          imageUrls: ["https://cdn.example/a.png"]
        },
        { product: "nope", rating: 4 },
        { product: "mug", rating: 3, pending: true, response: "Thanks", externalId: "e1" }
      ]
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-rate-limit-cost")).toBe("10")
    expect(res.body.imported.map((i: { index: number }) => i.index)).toEqual([0, 2])
    expect(res.body.imported[0].imageUrls).toEqual(["https://cdn.example/a.png"])
    expect(res.body.skipped).toEqual([{ index: 1, message: expect.stringContaining("\"nope\"") }])
    const imported = await call("PATCH", `/reviews/${res.body.imported[1].id}`, key, {})
    expect(imported.body.published).toBe(false)
    expect(imported.body.moderatedAt).toBeNull()
  })

  it("a strict import with an unresolvable row is 422 IMPORT_FAILED with the row index, and imports nothing", async () => {
    const { key } = await setup([])
    const res = await call("POST", "/reviews/import", key, {
      strict: true,
      data: [{ product: "mug", rating: 5, externalId: "s1" }, { product: "mug", rating: 5, externalId: "s2" }, {
        product: "nope",
        rating: 1
      }]
    })
    expectError(res, 422, "IMPORT_FAILED")
    expect(res.body.error.details).toEqual({ index: 2, message: res.body.error.message })
    const again = await call("POST", "/reviews/import", key, {
      data: [{ product: "mug", rating: 5, externalId: "s1" }],
      strict: true
    })
    expect(again.status).toBe(200)
    expect(again.body.imported.length).toBe(1)
  })

  it("validates every row: rating range, a product reference, types, null only for title/body, unknown fields", async () => {
    const { key } = await setup([])
    const cases: Array<[unknown, string]> = [
      [{ product: "mug", rating: 6 }, "body.data[0].rating"],
      [{ product: "mug", rating: 0 }, "body.data[0].rating"],
      [{ product: "mug" }, "body.data[0].rating"],
      [{ rating: 5 }, "body.data[0].product"],
      [{ product: "mug", rating: 5, externalId: null }, "body.data[0].externalId"],
      [{ product: "mug", rating: 5, customer: "not-an-email" }, "body.data[0].customer"],
      [{ product: "mug", rating: 5, site: "nope" }, "body.data[0].site"],
      [{ product: "mug", rating: 5, createdAt: "yesterday" }, "body.data[0].createdAt"],
      [{ product: "mug", rating: 5, imageUrls: ["ftp://x/y.png"] }, "body.data[0].imageUrls[0]"],
      [{ product: "mug", rating: 5, pending: true, published: true }, "body.data[0].published"],
      [{ product: "mug", rating: 5, responderName: "Sam" }, "body.data[0].responderName"],
      [{ product: "mug", rating: 5, stars: 5 }, "body.data[0].stars"],
      [{ product: "mug", rating: 5, body: "bad\u0000text" }, "body.data[0].body"]
    ]
    for (const [row, path] of cases) {
      const res = await call("POST", "/reviews/import", key, { data: [row] })
      expectError(res, 400, "INVALID_REQUEST")
      expect(issuePaths(res)).toContain(path)
    }
    expectError(await call("POST", "/reviews/import", key, { rows: [] }), 400, "INVALID_REQUEST")
    expectError(await call("POST", "/reviews/import", key, { data: [], strict: "yes" }), 400, "INVALID_REQUEST")
  })

  it("more than 10,000 rows is a 400", async () => {
    const { key } = await setup([])
    const res = await call("POST", "/reviews/import", key, {
      data: Array.from({ length: 10_001 }, () => ({ product: "mug", rating: 5 }))
    })
    expectError(res, 400, "INVALID_REQUEST")
    expect(issuePaths(res)).toContain("body.data")
    expect(res.body.error.message).toContain("10000")
  })
})

describe("/reviews/{id}/response", () => {
  it("creates a draft named after the organization (201); a second create is 409 CONFLICT", async () => {
    const { key, reviews: [review] } = await setup()
    const res = await call("POST", `/reviews/${review!.id}/response`, key, { body: "Thanks!" })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      reviewId: review!.id,
      body: "Thanks!",
      published: false,
      responderName: "Test organization",
      metadata: {}
    })
    expect(Object.keys(res.body).sort()).toEqual([
      "body",
      "createdAt",
      "id",
      "metadata",
      "published",
      "responderName",
      "reviewId",
      "updatedAt"
    ])
    expectError(
      await call("POST", `/reviews/${review!.id}/response`, key, { body: "Again", published: true }),
      409,
      "CONFLICT"
    )
  })

  it("validates the reply body", async () => {
    const { key, reviews: [review] } = await setup()
    const cases: Array<[unknown, string]> = [
      [{}, "body.body"],
      [{ body: "" }, "body.body"],
      [{ body: "ok", published: null }, "body.published"],
      [{ body: "ok", responderName: null }, "body.responderName"],
      [{ body: "ok", author: "x" }, "body.author"]
    ]
    for (const [payload, path] of cases) {
      const res = await call("POST", `/reviews/${review!.id}/response`, key, payload)
      expectError(res, 400, "INVALID_REQUEST")
      expect(issuePaths(res)).toContain(path)
    }
  })

  it("PATCH changes only sent fields; DELETE answers the reply; both are 404 without one", async () => {
    const { key, reviews: [review] } = await setup()
    expectError(await call("PATCH", `/reviews/${review!.id}/response`, key, { published: true }), 404, "NOT_FOUND")
    expectError(await call("DELETE", `/reviews/${review!.id}/response`, key), 404, "NOT_FOUND")
    const created = await call("POST", `/reviews/${review!.id}/response`, key, {
      body: "Draft",
      metadata: { a: "1" },
      responderName: "Sam"
    })
    const published = await call("PATCH", `/reviews/${review!.id}/response`, key, { published: true })
    expect(published.status).toBe(200)
    expect(published.body).toMatchObject({ body: "Draft", responderName: "Sam", published: true, metadata: { a: "1" } })
    const bad = await call("PATCH", `/reviews/${review!.id}/response`, key, { body: null })
    expectError(bad, 400, "INVALID_REQUEST")
    expect(issuePaths(bad)).toEqual(["body.body"])
    const replaced = await call("PATCH", `/reviews/${review!.id}/response`, key, { metadata: { b: "2" } })
    expect(replaced.body.metadata).toEqual({ b: "2" })
    const deleted = await call("DELETE", `/reviews/${review!.id}/response`, key)
    expect(deleted.status).toBe(200)
    expect(deleted.body).toMatchObject({ id: created.body.id, published: true, metadata: { b: "2" } })
    expectError(await call("DELETE", `/reviews/${review!.id}/response`, key), 404, "NOT_FOUND")
    const reviewAfter = await call("PATCH", `/reviews/${review!.id}`, key, {})
    expect(reviewAfter.body).toEqual(JSON.parse(JSON.stringify(review)))
  })

  it("another organization's review is 404 for every reply operation", async () => {
    const { reviews: [review] } = await setup()
    const other = await provision()
    expectError(await call("POST", `/reviews/${review!.id}/response`, other.key, { body: "x" }), 404, "NOT_FOUND")
    expectError(await call("PATCH", `/reviews/${review!.id}/response`, other.key, { body: "x" }), 404, "NOT_FOUND")
    expectError(await call("DELETE", `/reviews/${review!.id}/response`, other.key), 404, "NOT_FOUND")
  })
})

describe("OpenAPI document", () => {
  it("lists the write endpoints with their permission and rate cost", async () => {
    const res = await call("GET", "/openapi.json")
    const paths = res.body.paths
    expect(paths["/reviews/bulk-update"].patch["x-rate-limit-cost"]).toBe(5)
    expect(paths["/reviews/import"].post["x-rate-limit-cost"]).toBe(10)
    expect(paths["/reviews/{id}"].patch["x-required-permission"]).toBe("reviews:write")
    expect(paths["/reviews/{id}"].delete).toBeDefined()
    expect(Object.keys(paths["/reviews/{id}/response"]).sort()).toEqual(["delete", "patch", "post"])
  })
})

describe("POST /reviews/import under the rate limit (issue 3 acceptance)", () => {
  it("with 9 tokens left it is 429 with nothing imported; after Retry-After seconds it succeeds", async () => {
    // A plan of 19 requests/minute: one import (cost 10) leaves 9 tokens, refilling at 19/60 per second.
    const org = await operator("POST", "/organizations", { name: "Small plan", apiRequestsPerMinute: 19 })
    const key = (await operator("POST", `/organizations/${org.body.id}/keys`, { permissions: allPermissions })).body
      .secretKey as string
    const product = makeProduct({ slug: "mug", title: "Blue Mug" })
    await seed((fx) => fx.insertProduct(org.body.id as Kernel.OrganizationId, product))
    const row = (externalId: string) => ({ data: [{ product: "mug", rating: 5, externalId }] })

    const first = await call("POST", "/reviews/import", key, row("first"))
    expect(first.status).toBe(200)
    expect(first.headers.get("x-ratelimit-remaining")).toBe("9")

    const refused = await call("POST", "/reviews/import", key, row("refused"))
    expectError(refused, 429, "TOO_MANY_REQUESTS")
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(4)
    // Nothing was imported: the refused row's externalId is still free.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000))
    const later = await call("POST", "/reviews/import", key, { ...row("refused"), strict: true })
    expect(later.status).toBe(200)
    expect(later.body.imported).toHaveLength(1)
  }, 20_000)
})
