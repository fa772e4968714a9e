/**
 * The storefront API over HTTP (docs/DECISIONS.md §55) on memory and, with TEST_DATABASE_URL, a PostgreSQL server:
 * the publishable-key scheme refused both ways, buckets per key and client address apart from the organization's,
 * `TRUST_PROXY`, revalidation (304), CORS, hostile input, and a walk over every storefront route proving that nothing
 * unpublished or personal is ever answered.
 */
import type { Kernel } from "@feedback/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeSeededServer, type SeededServer, testStores } from "./SeededServer.ts"
import { TEST_PEER_HEADER } from "./TestServer.ts"

/** Values that must never appear in a storefront answer. */
const secrets = {
  email: "ada.secret@example.com",
  ip: "198.51.100.77",
  fingerprint: "fp_never_shown_9f8e",
  userAgent: "SecretAgent/1.0",
  metadata: "metadata-never-shown",
  unpublishedReview: "UNPUBLISHED review text",
  unpublishedReply: "UNPUBLISHED reply text",
  unpublishedQuestion: "UNPUBLISHED question?",
  unpublishedAnswer: "UNPUBLISHED answer",
  askerEmail: "asker.secret@example.com",
  lastName: "Lovelace"
}
const personalKeys = new Set([
  "email",
  "askerEmail",
  "ipAddress",
  "browserFingerprint",
  "userAgent",
  "metadata",
  "customerId",
  "customer",
  "ipCountry",
  "flags",
  "flagged",
  "published",
  "notifyByEmail",
  "originalTitle",
  "originalBody",
  "externalId"
])

const walk = (value: unknown, path: string, problems: Array<string>) => {
  if (typeof value === "string") {
    for (const [name, secret] of Object.entries(secrets)) if (value.includes(secret)) problems.push(`${path}: ${name}`)
  } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`, problems))
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (personalKeys.has(k)) problems.push(`${path}.${k}: personal field`)
      walk(v, `${path}.${k}`, problems)
    }
  }
}

describe.each(testStores)("storefront API (%s)", (_name, makeStore) => {
  let server: SeededServer
  let org: { organizationId: string; key: string }
  let pk: string
  let mug: { id: string; slug: string }
  let cup: { id: string }
  let surveyToken: string
  const admin = (method: string, path: string, body?: unknown) => server.request(method, path, { token: org.key, body })
  const sf = (path: string, headers: Record<string, string> = {}) =>
    server.request("GET", path, { headers: { "x-publishable-key": pk, ...headers } })

  beforeAll(async () => {
    server = makeSeededServer(makeStore, { trustProxy: "10.0.0.0/8, 192.0.2.1" })
    org = await server.provision()
    expect((await admin("POST", "/sites", { name: "Shop", domain: "shop.example.com" })).status).toBe(201)
    mug = (await admin("POST", "/products", { slug: "mug", title: "Mug" })).body
    cup = (await admin("POST", "/products", { slug: "cup", title: "Cup" })).body
    const customer = (await admin("POST", "/customers", {
      email: secrets.email,
      firstName: "Ada",
      lastName: secrets.lastName,
      metadata: { note: secrets.metadata }
    })).body
    const imported = await admin("POST", "/reviews/import", {
      data: [
        {
          product: "mug",
          rating: 5,
          title: "Great",
          body: "Lovely mug.",
          customer: secrets.email,
          metadata: { m: secrets.metadata }
        },
        { product: "mug", rating: 4.5, title: "Good", body: "Nice." },
        { product: "mug", rating: 2, title: "Meh", body: secrets.unpublishedReview, published: false },
        { product: "cup", rating: 3, title: "Fine", body: "Okay cup.", response: secrets.unpublishedReply }
      ]
    })
    expect(imported.status, imported.text).toBe(200)
    // The cup's reply was imported published; take it back.
    const cupReview = imported.body.imported[3].id
    expect((await admin("PATCH", `/reviews/${cupReview}/response`, { published: false })).status).toBe(200)
    await server.seed(org.organizationId, [{
      productId: mug.id as Kernel.ProductId,
      customerId: customer.id,
      fields: {
        rating: 1,
        title: "Seeded",
        body: "Seeded body",
        ipAddress: secrets.ip,
        browserFingerprint: secrets.fingerprint,
        userAgent: secrets.userAgent,
        metadata: { k: secrets.metadata },
        createdAt: "2020-01-01T00:00:00.000Z" as any
      },
      reply: { body: "Published reply", published: true },
      files: 1
    }, {
      productId: mug.id as Kernel.ProductId,
      fields: { rating: 3, title: "Hidden", body: secrets.unpublishedReview, published: false, ipAddress: secrets.ip }
    }])
    const question = (await admin("POST", "/product-questions", {
      productId: mug.id,
      body: "Is it big?",
      askerName: "Grace",
      askerEmail: secrets.askerEmail,
      published: true,
      metadata: { a: secrets.metadata }
    })).body
    await admin("POST", `/product-questions/${question.id}/answers`, { body: "Yes, 350 ml.", published: true })
    await admin("POST", `/product-questions/${question.id}/answers`, {
      body: secrets.unpublishedAnswer,
      published: false
    })
    await admin("POST", "/product-questions", {
      productId: mug.id,
      body: secrets.unpublishedQuestion,
      askerEmail: secrets.askerEmail
    })
    // The secret customer's review request: its hosted page's data is walked too.
    expect((await admin("POST", "/organization/setup/reviews", { data: { delayDays: 7 } })).status).toBe(201)
    const order = await admin("POST", "/orders", {
      customerId: customer.id,
      lines: [{ productId: mug.id }],
      status: "fulfilled",
      metadata: { m: secrets.metadata }
    })
    expect(order.status, order.text).toBe(201)
    const [survey] = (await admin(
      "GET",
      `/surveys?filter=${encodeURIComponent(JSON.stringify({ "order.id": order.body.id }))}`
    )).body.data
    surveyToken = survey.url.split("/r/")[1]
    const created = await admin("POST", "/publishable-keys")
    expect(created.status).toBe(201)
    pk = created.body.key
  }, 60_000)
  afterAll(() => server.dispose())

  it("reads published reviews only, shaped for shoppers, with sorts, the star filter and a cursor", async () => {
    const page = await sf("/storefront/products/mug/reviews")
    expect(page.status, page.text).toBe(200)
    // Newest first: the two imported together (same instant, then by id), then the older seeded one.
    expect(page.body.data.map((r: any) => r.title).slice(0, 2).sort()).toEqual(["Good", "Great"])
    const seeded = page.body.data[2]
    expect(seeded.title).toBe("Seeded")
    expect(seeded.authorName).toBe("Ada L.")
    expect(page.body.data.find((r: any) => r.title === "Great").authorName).toBe("Ada L.")
    expect(page.body.data.find((r: any) => r.title === "Good").authorName).toBe("Anonymous")
    expect(seeded.response).toMatchObject({ body: "Published reply" })
    expect(seeded.files).toHaveLength(1)
    expect(Object.keys(seeded.files[0]).sort()).toEqual(["contentType", "id", "url"])
    const byId = await sf(`/storefront/products/${mug.id.toUpperCase()}/reviews?sort=rating`)
    expect(byId.body.data.map((r: any) => r.rating)).toEqual([1, 4.5, 5])
    // 4.5 counts as five stars.
    expect((await sf("/storefront/products/mug/reviews?rating=5")).body.data.map((r: any) => r.rating).sort()).toEqual([
      4.5,
      5
    ])
    const first = await sf("/storefront/products/mug/reviews?limit=2&sort=-rating")
    expect(first.body.data).toHaveLength(2)
    const second = await sf(
      `/storefront/products/mug/reviews?limit=2&sort=-rating&cursor=${encodeURIComponent(first.body.nextCursor)}`
    )
    expect(second.body.data.map((r: any) => r.rating)).toEqual([1])
    expect(second.body.nextCursor).toBeNull()
    // A cursor is bound to its product and sort.
    const elsewhere = await sf(
      `/storefront/products/cup/reviews?limit=2&sort=-rating&cursor=${encodeURIComponent(first.body.nextCursor)}`
    )
    expect(elsewhere.status).toBe(400)
    expect((await sf("/storefront/products/cup/reviews")).body.data[0].response).toBeNull()
  })

  it("answers ratings with the histogram over published reviews, in the order asked, unknown products left out", async () => {
    const res = await sf(`/storefront/ratings?products=cup,nope,${mug.id},mug`)
    expect(res.status, res.text).toBe(200)
    expect(res.body.data.map((r: any) => r.slug)).toEqual(["cup", "mug"])
    const mugRating = res.body.data[1]
    // Published: 5, 4.5 (five stars, halves up) and the seeded 1; the unpublished 2 and 3 are not counted.
    expect(mugRating).toMatchObject({
      productId: mug.id,
      reviewCount: 3,
      histogram: { "1": 1, "2": 0, "3": 0, "4": 0, "5": 2 }
    })
    expect(mugRating.averageRating).toBeCloseTo(10.5 / 3)
    const none = await admin("POST", "/products", { slug: "lamp", title: "Lamp" })
    const lamp = await sf("/storefront/ratings?products=lamp")
    expect(lamp.body.data).toEqual([{
      productId: none.body.id,
      slug: "lamp",
      reviewCount: 0,
      averageRating: null,
      histogram: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0 }
    }])
    // The admin product gains the histogram too.
    expect((await admin("GET", `/products/${mug.id}`)).body.ratingHistogram).toEqual({
      "1": 1,
      "2": 0,
      "3": 0,
      "4": 0,
      "5": 2
    })
  })

  it("reads published questions with published answers only", async () => {
    const res = await sf("/storefront/products/mug/questions")
    expect(res.status, res.text).toBe(200)
    expect(res.body.data).toHaveLength(1)
    expect(res.body.data[0]).toMatchObject({ body: "Is it big?", askerName: "Grace" })
    expect(res.body.data[0].answers.map((a: any) => a.body)).toEqual(["Yes, 350 ml."])
    expect(res.body.data[0].answers[0].authorType).toBe("merchant")
  })

  it("never answers anything unpublished or personal on any storefront route", async () => {
    const problems: Array<string> = []
    const paths = [
      "/storefront/products/mug/reviews?limit=50",
      "/storefront/products/mug/reviews?sort=rating&limit=50",
      ...[1, 2, 3, 4, 5].map((n) => `/storefront/products/mug/reviews?rating=${n}`),
      "/storefront/products/cup/reviews",
      `/storefront/ratings?products=mug,cup,${mug.id},${cup.id}`,
      "/storefront/products/mug/questions?limit=50",
      "/storefront/products/cup/questions"
    ]
    for (const path of paths) {
      const res = await sf(path)
      expect(res.status, `${path}: ${res.text}`).toBe(200)
      walk(res.body, path, problems)
      for (const [name, secret] of Object.entries(secrets)) {
        if (res.text.includes(secret)) problems.push(`${path} text: ${name}`)
      }
    }
    // The survey page names its customer by first name only (shared §18), and nothing else of theirs.
    const page = await sf(`/storefront/surveys/${surveyToken}`)
    expect(page.status, page.text).toBe(200)
    const { customer: named, ...rest } = page.body
    expect(named).toEqual({ firstName: "Ada" })
    walk(rest, "survey", problems)
    for (const [name, secret] of Object.entries(secrets)) {
      if (page.text.includes(secret)) problems.push(`survey text: ${name}`)
    }
    // The customer's own reviews (pending ones, `published`) need a signature from the merchant's backend.
    const own = await sf(`/storefront/customer/reviews?customerEmail=${encodeURIComponent(secrets.email)}`)
    expect(own.status).toBe(400)
    for (const [name, secret] of Object.entries(secrets)) {
      if (own.text.includes(secret)) problems.push(`customer reviews: ${name}`)
    }
    const forged = await sf(
      `/storefront/customer/reviews?customerEmail=${encodeURIComponent(secrets.email)}&timestamp=${
        Math.floor(Date.now() / 1_000)
      }&signature=${"0".repeat(64)}`
    )
    expect(forged.status).toBe(401)
    expect(forged.text).not.toContain(secrets.unpublishedReview)
    expect(problems).toEqual([])
  })

  it("refuses missing, unknown, revoked and secret keys with one 401, and publishable keys on admin routes", async () => {
    const unauthorized = async (path: string, headers: Record<string, string>) => {
      const res = await server.request("GET", path, { headers })
      expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401)
      expect(res.body.error.code).toBe("UNAUTHORIZED")
      return res.body.error.message
    }
    const messages = new Set([
      await unauthorized("/storefront/ratings?products=mug", {}),
      await unauthorized("/storefront/ratings?products=mug", { "x-publishable-key": "pk_" + "x".repeat(32) }),
      await unauthorized("/storefront/ratings?products=mug", { "x-publishable-key": org.key }),
      await unauthorized(`/storefront/ratings?products=mug&apiPublishableKey=${org.key}`, {}),
      await unauthorized("/storefront/ratings?products=mug", { authorization: `Bearer ${org.key}` })
    ])
    expect(messages.size).toBe(1)
    // The query parameter works as well as the header.
    expect((await server.request("GET", `/storefront/ratings?products=mug&apiPublishableKey=${pk}`)).status).toBe(200)
    // A publishable key is refused on admin routes however it is sent.
    await unauthorized("/organization", { authorization: `Bearer ${pk}` })
    await unauthorized("/reviews", { "x-publishable-key": pk })
    expect((await server.request("GET", `/reviews?apiPublishableKey=${pk}`)).status).toBe(401)
    // Revoked: refused at once.
    const spare = (await admin("POST", "/publishable-keys")).body
    expect(
      (await server.request("GET", "/storefront/ratings?products=mug", { headers: { "x-publishable-key": spare.key } }))
        .status
    ).toBe(200)
    const revoked = await admin("DELETE", `/publishable-keys/${spare.id}`)
    expect(revoked.status).toBe(200)
    expect(revoked.body.revokedAt).not.toBeNull()
    await unauthorized("/storefront/ratings?products=mug", { "x-publishable-key": spare.key })
    const listed = (await admin("GET", "/publishable-keys")).body.data
    expect(listed.find((k: any) => k.id === spare.id).revokedAt).toBe(revoked.body.revokedAt)
    expect(listed.every((k: any) => !("signingSecret" in k))).toBe(true)
  })

  it("answers ETag and Cache-Control, and 304 to a matching If-None-Match", async () => {
    for (
      const path of [
        "/storefront/products/mug/reviews",
        "/storefront/ratings?products=mug",
        "/storefront/products/mug/questions"
      ]
    ) {
      const first = await sf(path)
      const etag = first.headers.get("etag")!
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/)
      expect(first.headers.get("cache-control")).toBe("public, max-age=60")
      const again = await sf(path, { "if-none-match": `W/"other", ${etag}` })
      expect(again.status).toBe(304)
      expect(again.text).toBe("")
      expect(again.headers.get("etag")).toBe(etag)
      expect((await sf(path, { "if-none-match": "\"stale\"" })).status).toBe(200)
      // `*` has no tag to compare: the read runs, and answers 304 with the current tag.
      const any = await sf(path, { "if-none-match": "*" })
      expect([any.status, any.headers.get("etag")]).toEqual([304, etag])
    }
    // The tag is of the request too: another query's tag does not revalidate this one.
    const mugTag = (await sf("/storefront/ratings?products=mug")).headers.get("etag")!
    expect((await sf("/storefront/ratings?products=mug,cup", { "if-none-match": mugTag })).status).toBe(200)
    expect((await sf("/storefront/products/missing/reviews", { "if-none-match": "*" })).status).toBe(404)
    const before = (await sf("/storefront/ratings?products=cup")).headers.get("etag")!
    await admin("POST", "/reviews/import", { data: [{ product: "cup", rating: 1, title: "Cracked" }] })
    const after = await sf("/storefront/ratings?products=cup", { "if-none-match": before })
    expect(after.status).toBe(200)
    expect(after.headers.get("etag")).not.toBe(before)
  })

  it("answers CORS only to the organization's site origins, and preflights", async () => {
    for (const origin of ["https://shop.example.com", "https://www.shop.example.com", "https://SHOP.example.com"]) {
      const res = await sf("/storefront/ratings?products=mug", { origin })
      expect(res.headers.get("access-control-allow-origin"), origin).toBe(origin)
      expect(res.headers.get("vary")).toContain("Origin")
    }
    for (
      const origin of [
        "http://shop.example.com",
        "https://evil.example",
        "https://shop.example.com:8443",
        "https://xshop.example.com",
        "null"
      ]
    ) {
      const res = await sf("/storefront/ratings?products=mug", { origin })
      expect(res.status).toBe(200)
      expect(res.headers.get("access-control-allow-origin"), origin).toBeNull()
    }
    const preflight = await server.request("OPTIONS", `/storefront/ratings?apiPublishableKey=${pk}`, {
      headers: {
        origin: "https://shop.example.com",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-publishable-key"
      }
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://shop.example.com")
    expect(preflight.headers.get("access-control-allow-headers")).toContain("X-Publishable-Key")
    const refused = await server.request("OPTIONS", `/storefront/ratings?apiPublishableKey=${pk}`, {
      headers: { origin: "https://evil.example" }
    })
    expect(refused.status).toBe(204)
    expect(refused.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("answers hostile input with a 4xx in the envelope", async () => {
    const cases = [
      "/storefront/products/mug/reviews?limit=0",
      "/storefront/products/mug/reviews?limit=51",
      "/storefront/products/mug/reviews?limit=1e1",
      "/storefront/products/mug/reviews?rating=6",
      "/storefront/products/mug/reviews?rating=4.5",
      "/storefront/products/mug/reviews?sort=title",
      "/storefront/products/mug/reviews?cursor=forged",
      "/storefront/products/mug/reviews?unknown=1",
      "/storefront/products/mug/reviews?limit=1&limit=2",
      "/storefront/ratings",
      "/storefront/ratings?products=",
      "/storefront/ratings?products=,,,",
      `/storefront/ratings?products=${Array.from({ length: 101 }, (_, i) => `p${i}`).join(",")}`,
      "/storefront/products/no-such-product/reviews",
      "/storefront/products/no-such-product/questions",
      "/storefront/products/%00/reviews",
      "/storefront/products/%ED%A0%80/questions",
      `/storefront/products/${"x".repeat(600)}/reviews`
    ]
    for (const path of cases) {
      const res = await sf(path)
      expect(res.status >= 400 && res.status < 500, `${path}: ${res.status} ${res.text}`).toBe(true)
      expect(typeof res.body?.error?.code, path).toBe("string")
    }
  })
})

describe.each(testStores)("storefront submissions (%s)", (_name, makeStore) => {
  let server: SeededServer
  beforeAll(() => {
    server = makeSeededServer(makeStore)
  })
  afterAll(() => server.dispose())

  it("questions arrive unpublished from the widget, answers only on published questions; hostile bodies change nothing", async () => {
    const org = await server.provision()
    const admin = (method: string, path: string, body?: unknown) =>
      server.request(method, path, { token: org.key, body })
    const mug = (await admin("POST", "/products", { slug: "mug", title: "Mug" })).body
    const pk = (await admin("POST", "/publishable-keys")).body.key
    const submit = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      server.request("POST", path, { body, headers: { "x-publishable-key": pk, ...headers } })

    const asked = await submit("/storefront/questions", {
      productSlug: "mug",
      body: "Big enough?",
      askerName: "Grace",
      askerEmail: "grace@example.com"
    })
    expect(asked.status, asked.text).toBe(202)
    expect(Object.keys(asked.body)).toEqual(["id"])
    const stored = (await admin("GET", `/product-questions/${asked.body.id}`)).body
    expect(stored).toMatchObject({
      published: false,
      moderatedAt: null,
      source: "widget",
      askerEmail: "grace@example.com",
      notifyByEmail: true,
      productId: mug.id
    })
    expect(
      (await server.request("GET", "/storefront/products/mug/questions", { headers: { "x-publishable-key": pk } })).body
        .data
    ).toEqual([])
    // Its productQuestion.created event is checked on the outbox by the conformance suite (the feed on a shared
    // PostgreSQL server shows an event only once every older transaction of the cluster has ended).

    // Unpublished (or unknown) questions take no answers.
    expect((await submit(`/storefront/questions/${asked.body.id}/answers`, { body: "Yes", authorName: "Alan" })).status)
      .toBe(404)
    await admin("PATCH", `/product-questions/${asked.body.id}`, { published: true })
    const answered = await submit(`/storefront/questions/${asked.body.id}/answers`, {
      body: "Yes, 350 ml.",
      authorName: "Alan",
      email: "alan@example.com"
    })
    expect(answered.status, answered.text).toBe(202)
    const answers = (await admin("GET", `/product-questions/${asked.body.id}/answers`)).body.data
    expect(answers).toHaveLength(1)
    expect(answers[0]).toMatchObject({
      id: answered.body.id,
      authorType: "customer",
      authorName: "Alan",
      published: false
    })
    const question = (await admin("GET", `/product-questions/${asked.body.id}`)).body
    expect(question).toMatchObject({ answerCount: 1, publishedAnswerCount: 0, answeredAt: null })

    // Idempotency-Key: the same submission twice is one question.
    const once = await submit("/storefront/questions", { productId: mug.id, body: "Colours?" }, {
      "idempotency-key": "k-1"
    })
    const twice = await submit("/storefront/questions", { productId: mug.id, body: "Colours?" }, {
      "idempotency-key": "k-1"
    })
    expect(twice.status).toBe(202)
    expect(twice.body.id).toBe(once.body.id)
    expect(twice.headers.get("idempotent-replayed")).toBe("true")

    const before = (await admin("GET", "/product-questions?limit=250")).body.data.length
    for (
      const body of [
        {},
        { body: "No product" },
        { productId: mug.id, productSlug: "mug", body: "Both" },
        { productSlug: "nope", body: "Unknown" },
        { productId: mug.id, body: "x".repeat(501) },
        { productId: mug.id, body: "" },
        { productId: mug.id, body: "NUL \u0000" },
        { productId: mug.id, body: "Email", askerEmail: "not-an-email" },
        { productId: mug.id, body: "Notify", notifyByEmail: true },
        { productId: mug.id, body: "Extra", published: true },
        { productId: "not-a-uuid", body: "Bad id" }
      ]
    ) {
      const res = await submit("/storefront/questions", body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe("INVALID_REQUEST")
    }
    for (
      const raw of [
        "{",
        "[]",
        "null",
        JSON.stringify({ productId: mug.id, body: "deep", x: JSON.parse("[".repeat(70) + "]".repeat(70)) })
      ]
    ) {
      const res = await server.request("POST", "/storefront/questions", {
        rawBody: raw,
        headers: { "x-publishable-key": pk }
      })
      expect(res.status >= 400 && res.status < 500, raw).toBe(true)
    }
    expect((await admin("GET", "/product-questions?limit=250")).body.data.length).toBe(before)
    // A secret key cannot submit, and a publishable key cannot use the admin route.
    expect(
      (await server.request("POST", "/storefront/questions", {
        token: org.key,
        body: { productId: mug.id, body: "Hi" }
      })).status
    ).toBe(401)
    expect(
      (await server.request("POST", "/product-questions", {
        body: { productId: mug.id, body: "Hi" },
        headers: { "x-publishable-key": pk }
      })).status
    ).toBe(401)
  })

  it("submissions spend their own hourly bucket, not the reads'", async () => {
    const org = await server.provision()
    await server.request("POST", "/products", { token: org.key, body: { slug: "mug", title: "Mug" } })
    const pk = (await server.request("POST", "/publishable-keys", { token: org.key })).body.key
    await server.operator("PATCH", `/organizations/${org.organizationId}`, { storefrontSubmissionsPerHour: 2 })
    const ask = () =>
      server.request("POST", "/storefront/questions", {
        body: { productSlug: "mug", body: "Hello?" },
        headers: { "x-publishable-key": pk, [TEST_PEER_HEADER]: "203.0.113.9" }
      })
    expect((await ask()).status).toBe(202)
    const second = await ask()
    expect(second.status).toBe(202)
    expect(second.headers.get("ratelimit-policy")).toBe("\"storefront-submission\";q=2;w=3600")
    const refused = await ask()
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(60)
    const read = await server.request("GET", "/storefront/ratings?products=mug", {
      headers: { "x-publishable-key": pk, [TEST_PEER_HEADER]: "203.0.113.9" }
    })
    expect(read.status).toBe(200)
  })
})

describe("storefront rate limits (memory)", () => {
  let server: SeededServer
  beforeAll(() => {
    server = makeSeededServer(testStores[0]![1], { trustProxy: "10.0.0.0/8, 192.0.2.1" })
  })
  afterAll(() => server.dispose())

  it("charges a bucket per key and client address, never the organization's; the plan sizes it", async () => {
    const org = await server.provision({ apiRequestsPerMinute: 50 })
    await server.request("POST", "/products", { token: org.key, body: { slug: "mug", title: "Mug" } })
    const pk = (await server.request("POST", "/publishable-keys", { token: org.key })).body.key
    const plan = await server.operator("PATCH", `/organizations/${org.organizationId}`, { storefrontReadsPerMinute: 3 })
    expect(plan.status, plan.text).toBe(200)
    expect(plan.body.plan.storefrontReadsPerMinute).toBe(3)
    const read = (peer: string, headers: Record<string, string> = {}) =>
      server.request("GET", "/storefront/ratings?products=mug", {
        headers: { "x-publishable-key": pk, [TEST_PEER_HEADER]: peer, ...headers }
      })

    const adminBefore = await server.request("GET", "/organization", { token: org.key })
    const remainingBefore = Number(adminBefore.headers.get("x-ratelimit-remaining"))
    for (let i = 0; i < 3; i++) {
      const ok = await read("203.0.113.1")
      expect(ok.status).toBe(200)
      expect(ok.headers.get("x-ratelimit-limit")).toBe("3")
      expect(ok.headers.get("ratelimit-policy")).toBe("\"storefront-read\";q=3;w=60")
    }
    const refused = await read("203.0.113.1")
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe("TOO_MANY_REQUESTS")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    // Another address has its own bucket; the organization's bucket was never spent (one admin read since).
    expect((await read("203.0.113.2")).status).toBe(200)
    const adminAfter = await server.request("GET", "/organization", { token: org.key })
    expect(Number(adminAfter.headers.get("x-ratelimit-remaining"))).toBeGreaterThanOrEqual(remainingBefore - 1)
    // Another publishable key has its own bucket too.
    const other = (await server.request("POST", "/publishable-keys", { token: org.key })).body.key
    expect(
      (await server.request("GET", "/storefront/ratings?products=mug", {
        headers: { "x-publishable-key": other, [TEST_PEER_HEADER]: "203.0.113.1" }
      })).status
    ).toBe(200)

    // X-Forwarded-For counts only behind a trusted proxy: a spoofing client shares its own bucket.
    expect((await read("203.0.113.1", { "x-forwarded-for": "198.51.100.9" })).status).toBe(429)
    // Behind a trusted proxy the right-most untrusted hop is the client (trusted hops skipped).
    for (let i = 0; i < 3; i++) {
      expect((await read("10.1.2.3", { "x-forwarded-for": "203.0.113.1, 198.51.100.20, 192.0.2.1" })).status).toBe(200)
    }
    expect((await read("10.1.2.3", { "x-forwarded-for": "9.9.9.9, 198.51.100.20" })).status).toBe(429)
    // A garbled hop ends the walk: the hop right of it counts.
    expect((await read("10.1.2.3", { "x-forwarded-for": "198.51.100.20, not-an-ip" })).status).toBe(200)
  })
})
