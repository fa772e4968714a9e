/**
 * Shopper reviews over HTTP (shared §18, docs/DECISIONS.md §57) on memory and, with TEST_DATABASE_URL, a PostgreSQL
 * server: provenance from the request, the customer by email, the arrival rules and auto-publishing, collisions
 * counted from real submissions, `Idempotency-Key`, signed customer calls, the survey token endpoints, and hostile
 * input answered with a 4xx in the envelope that changes nothing.
 */
import { Storefront } from "@feedback/core"
import { afterAll, describe, expect, it } from "vitest"
import { makeSeededServer, testStores } from "./SeededServer.ts"
import { TEST_PEER_HEADER } from "./TestServer.ts"

const expectError = (res: { status: number; body: any }, status: number, code: string, path?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body?.error?.code).toBe(code)
  if (path !== undefined) expect(res.body.error.details.issues.map((i: any) => i.path)).toContain(path)
}

const nowSeconds = () => String(Math.floor(Date.now() / 1_000))

describe.each(testStores)("storefront reviews (%s)", (_name, makeStore) => {
  const server = makeSeededServer(makeStore, { trustProxy: "10.0.0.0/8" })
  afterAll(() => server.dispose())

  const shop = async () => {
    const tenant = await server.provision()
    const admin = (method: string, path: string, body?: unknown) =>
      server.request(method, path, { token: tenant.key, body })
    const mug = (await admin("POST", "/products", { slug: "mug", title: "Mug", imageUrl: "https://img/mug.png" })).body
    const cup = (await admin("POST", "/products", { slug: "cup", title: "Cup" })).body
    const key = (await admin("POST", "/publishable-keys")).body
    // Plenty of submissions for one address: the bucket itself is tested elsewhere.
    await server.operator("PATCH", `/organizations/${tenant.organizationId}`, { storefrontSubmissionsPerHour: 10_000 })
    const submit = (
      path: string,
      body: unknown,
      headers: Record<string, string> = {},
      peer = "203.0.113.10"
    ) =>
      server.request("POST", path, {
        body,
        headers: { "x-publishable-key": key.key, [TEST_PEER_HEADER]: peer, ...headers }
      })
    const read = (path: string) =>
      server.request("GET", path, { headers: { "x-publishable-key": key.key, [TEST_PEER_HEADER]: "203.0.113.10" } })
    const signed = (email: string, timestamp = nowSeconds(), secret = key.signingSecret) =>
      `customerEmail=${encodeURIComponent(email)}&timestamp=${timestamp}&signature=${
        Storefront.signCustomer(secret, key.key, email, timestamp)
      }`
    return { tenant, admin, mug, cup, key, submit, read, signed }
  }

  it("records provenance (TRUST_PROXY included) and the customer by email; arrives unpublished in the queue", async () => {
    const { admin, mug, submit } = await shop()
    const renderedAt = new Date(Date.now() - 42_000).toISOString()
    const res = await submit("/storefront/reviews", {
      productSlug: "mug",
      rating: 5,
      title: "Lovely",
      body: "A lovely mug.",
      authorName: "Ada Lovelace",
      email: "Ada@Example.com",
      fingerprint: "fp-1",
      formRenderedAt: renderedAt
    }, { "user-agent": "Shopper/1.0" })
    expect(res.status, res.text).toBe(202)
    expect(Object.keys(res.body).sort()).toEqual(["id", "published"])
    expect(res.body.published).toBe(false)
    const review = (await admin("GET", `/reviews/${res.body.id}?include=customer,collisions`)).body
    expect(review).toMatchObject({
      productId: mug.id,
      rating: 5,
      published: false,
      moderatedAt: null,
      flagged: false,
      flags: [],
      verifiedBuyer: false,
      surveyId: null,
      ipAddress: "203.0.113.10",
      userAgent: "Shopper/1.0",
      browserFingerprint: "fp-1",
      collisions: { ipAddress: 0, browserFingerprint: 0 },
      customer: { email: "ada@example.com", firstName: "Ada", lastName: "Lovelace" }
    })
    expect(review.submitSeconds).toBeGreaterThanOrEqual(42)
    expect(review.submitSeconds).toBeLessThan(600)
    // Behind a TRUST_PROXY peer the right-most untrusted X-Forwarded-For hop is the address; from any other peer the
    // header is ignored, so a shopper cannot choose the address a review is recorded with.
    const proxied = await submit(
      "/storefront/reviews",
      {
        productSlug: "mug",
        rating: 4,
        authorName: "Ada",
        email: "ada@example.com"
      },
      { "x-forwarded-for": "192.0.2.7, 198.51.100.20, 10.0.0.5" },
      "10.1.2.3"
    )
    expect((await admin("GET", `/reviews/${proxied.body.id}`)).body.ipAddress).toBe("198.51.100.20")
    const spoofed = await submit(
      "/storefront/reviews",
      {
        productSlug: "mug",
        rating: 4,
        authorName: "Ada",
        email: "ada@example.com"
      },
      { "x-forwarded-for": "192.0.2.99" },
      "203.0.113.44"
    )
    expect((await admin("GET", `/reviews/${spoofed.body.id}`)).body.ipAddress).toBe("203.0.113.44")
    // Pending: not on the storefront yet, but counted in the admin stats.
    expect((await admin("GET", `/products/${mug.id}`)).body).toMatchObject({ reviewCount: 3, publishedReviewCount: 0 })
  })

  it("auto-publishes from the review settings; flags (duplicate, collisions, too fast) keep a review in the queue", async () => {
    const { admin, submit } = await shop()
    expect((await admin("PATCH", "/review-settings", { autoPublish: true, autoPublishMinRating: 4 })).status).toBe(200)
    const review = (body: object, peer?: string) =>
      submit("/storefront/reviews", { productSlug: "mug", authorName: "Grace H", ...body }, {}, peer)
    const good = await review({ rating: 5, email: "g1@example.com", body: "Great" }, "198.51.100.1")
    expect(good.body.published).toBe(true)
    const low = await review({ rating: 3, email: "g2@example.com", body: "Fine" }, "198.51.100.2")
    expect(low.body.published).toBe(false)
    const fast = await review({
      rating: 5,
      email: "g3@example.com",
      formRenderedAt: new Date().toISOString()
    }, "198.51.100.3")
    expect(fast.body.published).toBe(false)
    expect((await admin("GET", `/reviews/${fast.body.id}`)).body.flags.map((f: any) => f.code)).toEqual(["too_fast"])
    // The same text again from the same email: a duplicate.
    const again = await review({ rating: 5, email: "g1@example.com", body: "  great " }, "198.51.100.4")
    expect(again.body.published).toBe(false)
    const dup = (await admin("GET", `/reviews/${again.body.id}`)).body
    expect(dup.flagged).toBe(true)
    expect(dup.flags).toEqual([expect.objectContaining({ code: "duplicate", score: 1 })])
    expect(dup.moderatedAt).toBeNull()
    // Three reviews from one address, then a fourth: it collides, and include=collisions counts real data.
    const ids = []
    for (const n of [1, 2, 3, 4]) {
      ids.push((await review({ rating: 5, email: `ip${n}@example.com`, fingerprint: "same-fp" }, "192.0.2.50")).body)
    }
    expect(ids.map((r) => r.published)).toEqual([true, true, true, false])
    const fourth = (await admin("GET", `/reviews/${ids[3].id}?include=collisions`)).body
    expect(fourth.flags.map((f: any) => f.code)).toEqual(["ip_collision", "fingerprint_collision"])
    expect(fourth.collisions).toEqual({ ipAddress: 3, browserFingerprint: 3 })
    const first = (await admin("GET", `/reviews/${ids[0].id}?include=collisions`)).body
    expect(first.collisions).toEqual({ ipAddress: 3, browserFingerprint: 3 })
    const listed = (await admin(
      "GET",
      `/reviews?include=collisions&filter=${encodeURIComponent(JSON.stringify({ ipAddress: "192.0.2.50" }))}`
    )).body.data
    expect(listed.map((r: any) => r.collisions.ipAddress)).toEqual([3, 3, 3, 3])
    // autoPublishVerifiedOnly: an unsigned review is never a verified buyer.
    await admin("PATCH", "/review-settings", { autoPublishVerifiedOnly: true })
    expect((await review({ rating: 5, email: "v@example.com" }, "198.51.100.9")).body.published).toBe(false)
  })

  it("Idempotency-Key: a retried submission is one review", async () => {
    const { admin, submit } = await shop()
    const body = { productSlug: "mug", rating: 4, authorName: "Alan", email: "alan@example.com" }
    const once = await submit("/storefront/reviews", body, { "idempotency-key": "review-1" })
    const twice = await submit("/storefront/reviews", body, { "idempotency-key": "review-1" })
    expect(twice.status).toBe(202)
    expect(twice.body).toEqual(once.body)
    expect(twice.headers.get("idempotent-replayed")).toBe("true")
    const other = await submit("/storefront/reviews", { ...body, rating: 1 }, { "idempotency-key": "review-1" })
    expect(other.status).toBe(422)
    expect((await admin("GET", "/reviews")).body.data).toHaveLength(1)
  })

  it("signed customer calls: the email from the signature, verified buyer only with a matching order, own reviews", async () => {
    const { admin, mug, cup, submit, read, signed, key } = await shop()
    const order = await admin("POST", "/orders", {
      customer: { email: "buyer@example.com", firstName: "Bea" },
      lines: [{ productId: mug.id }]
    })
    expect(order.status).toBe(201)
    const bought = await submit(`/storefront/reviews?${signed("buyer@example.com")}`, {
      productId: mug.id,
      rating: 5,
      authorName: "Bea"
    })
    expect(bought.status, bought.text).toBe(202)
    const boughtReview = (await admin("GET", `/reviews/${bought.body.id}`)).body
    expect(boughtReview).toMatchObject({ verifiedBuyer: true, customerId: order.body.customerId })
    // Another product, not in any order: not verified.
    const other = await submit(`/storefront/reviews?${signed("buyer@example.com")}`, {
      productId: cup.id,
      rating: 4,
      authorName: "Bea",
      email: "BUYER@example.com"
    })
    expect((await admin("GET", `/reviews/${other.body.id}`)).body.verifiedBuyer).toBe(false)
    // A cancelled order verifies nothing.
    const cancelled = await admin("POST", "/orders", {
      customer: { email: "gone@example.com" },
      lines: [{ productId: mug.id }]
    })
    await admin("PATCH", `/orders/${cancelled.body.id}`, { status: "cancelled" })
    const afterCancel = await submit(`/storefront/reviews?${signed("gone@example.com")}`, {
      productId: mug.id,
      rating: 4,
      authorName: "Gone"
    })
    expect((await admin("GET", `/reviews/${afterCancel.body.id}`)).body.verifiedBuyer).toBe(false)
    // Unsigned, even with the buyer's email: not verified.
    const unsigned = await submit("/storefront/reviews", {
      productId: mug.id,
      rating: 4,
      authorName: "Bea",
      email: "buyer@example.com"
    })
    expect((await admin("GET", `/reviews/${unsigned.body.id}`)).body.verifiedBuyer).toBe(false)

    const before = (await admin("GET", "/reviews?limit=250")).body.data.length
    const base = { productId: mug.id, rating: 5, authorName: "Bea" }
    expectError(
      await submit(`/storefront/reviews?${signed("buyer@example.com")}`, { ...base, email: "else@example.com" }),
      400,
      "INVALID_REQUEST",
      "body.email"
    )
    expectError(await submit("/storefront/reviews", base), 400, "INVALID_REQUEST", "body.email")
    const stale = String(Math.floor(Date.now() / 1_000) - 86_400 - 60)
    expectError(await submit(`/storefront/reviews?${signed("buyer@example.com", stale)}`, base), 401, "UNAUTHORIZED")
    const early = String(Math.floor(Date.now() / 1_000) + 3_600)
    expectError(await submit(`/storefront/reviews?${signed("buyer@example.com", early)}`, base), 401, "UNAUTHORIZED")
    const forged = signed("buyer@example.com", nowSeconds(), "pks_not-the-secret")
    expectError(await submit(`/storefront/reviews?${forged}`, base), 401, "UNAUTHORIZED")
    const swapped = signed("buyer@example.com").replace("buyer%40", "other%40")
    expectError(await submit(`/storefront/reviews?${swapped}`, base), 401, "UNAUTHORIZED")
    expectError(
      await submit(`/storefront/reviews?customerEmail=buyer%40example.com&timestamp=${nowSeconds()}`, base),
      400,
      "INVALID_REQUEST",
      "query.signature"
    )
    expect((await admin("GET", "/reviews?limit=250")).body.data.length).toBe(before)

    // The customer's own reviews, pending ones included.
    const mine = await read(`/storefront/customer/reviews?${signed("buyer@example.com")}`)
    expect(mine.status, mine.text).toBe(200)
    expect(mine.headers.get("cache-control")).toBe("private, no-store")
    expect(mine.body.data.map((r: any) => r.id).sort()).toEqual(
      [bought.body.id, other.body.id, unsigned.body.id].sort()
    )
    expect(mine.body.data.every((r: any) => r.published === false && r.authorName === "Bea")).toBe(true)
    const page = await read(`/storefront/customer/reviews?limit=1&${signed("buyer@example.com")}`)
    expect(page.body.data).toHaveLength(1)
    const next = await read(
      `/storefront/customer/reviews?limit=1&cursor=${page.body.nextCursor}&${signed("buyer@example.com")}`
    )
    expect(next.body.data).toHaveLength(1)
    expect(next.body.data[0].id).not.toBe(page.body.data[0].id)
    // Another customer's cursor does not carry over.
    expectError(
      await read(`/storefront/customer/reviews?cursor=${page.body.nextCursor}&${signed("gone@example.com")}`),
      400,
      "INVALID_REQUEST"
    )
    expect((await read(`/storefront/customer/reviews?${signed("nobody@example.com")}`)).body).toEqual({
      data: [],
      nextCursor: null
    })
    expectError(await read("/storefront/customer/reviews"), 401, "UNAUTHORIZED")
    expectError(await read(`/storefront/customer/reviews?${forged}`), 401, "UNAUTHORIZED")
    expect(key.signingSecret).toMatch(/^pks_/)
  })

  it("survey token endpoints: the hosted page's data, verified reviews, completion stops the reminders", async () => {
    const { admin, mug, cup, submit, read } = await shop()
    const setup = await admin("POST", "/organization/setup/reviews", { data: { delayDays: 7, reminder: true } })
    expect(setup.status, JSON.stringify(setup.body)).toBe(201)
    const order = await admin("POST", "/orders", {
      customer: { email: "sue@example.com", firstName: "Sue", lastName: "Smith" },
      lines: [{ productId: mug.id }, { productId: cup.id, quantity: 2 }],
      status: "fulfilled"
    })
    expect(order.status).toBe(201)
    const [survey] = (await admin(
      "GET",
      `/surveys?filter=${encodeURIComponent(JSON.stringify({ "order.id": order.body.id }))}`
    )).body.data
    expect(survey.url).toMatch(/\/r\/[A-Za-z0-9_-]{43}$/)
    const token = survey.url.split("/r/")[1]

    const page = await read(`/storefront/surveys/${token}`)
    expect(page.status, page.text).toBe(200)
    expect(page.headers.get("cache-control")).toBe("private, no-store")
    expect(page.body).toEqual({
      id: survey.id,
      status: "scheduled",
      expiresAt: survey.expiresAt,
      customer: { firstName: "Sue" },
      products: [
        { id: mug.id, title: "Mug", imageUrl: "https://img/mug.png", url: null, reviewed: false },
        { id: cup.id, title: "Cup", imageUrl: null, url: null, reviewed: false }
      ]
    })
    expectError(await read(`/storefront/surveys/${"x".repeat(43)}`), 404, "NOT_FOUND")
    expectError(await read("/storefront/surveys/short"), 400, "INVALID_REQUEST")

    const path = `/storefront/surveys/${token}/reviews`
    const before = (await admin("GET", "/reviews?limit=250")).body.data.length
    expectError(
      await submit(path, { reviews: [{ productId: "00000000-0000-4000-8000-000000000000", rating: 5 }] }),
      400,
      "INVALID_REQUEST",
      "body.reviews[0].productId"
    )
    expectError(await submit(path, { reviews: [] }), 400, "INVALID_REQUEST")
    expectError(await submit(path, { reviews: [{ productId: mug.id, rating: 6 }] }), 400, "INVALID_REQUEST")
    expectError(
      await submit(path, { reviews: [{ productId: mug.id, rating: 5 }, { productId: mug.id, rating: 4 }] }),
      409,
      "CONFLICT"
    )
    expectError(
      await submit(`/storefront/surveys/${"y".repeat(43)}/reviews`, { reviews: [{ productId: mug.id, rating: 5 }] }),
      404,
      "NOT_FOUND"
    )
    expect((await admin("GET", "/reviews?limit=250")).body.data.length).toBe(before)

    const first = await submit(path, { reviews: [{ productId: mug.id, rating: 5, title: "Mug!", body: "Good." }] })
    expect(first.status, first.text).toBe(201)
    expect(first.body.reviews).toEqual([{ id: expect.any(String), productId: mug.id, published: false }])
    const review = (await admin("GET", `/reviews/${first.body.reviews[0].id}`)).body
    expect(review).toMatchObject({ verifiedBuyer: true, surveyId: survey.id, customerId: order.body.customerId })
    const partly = (await admin("GET", `/surveys/${survey.id}`)).body
    expect(partly.status).toBe("scheduled")
    expect(partly.products.map((p: any) => p.reviewId)).toEqual([review.id, null])
    expect((await read(`/storefront/surveys/${token}`)).body.products.map((p: any) => p.reviewed)).toEqual([
      true,
      false
    ])
    expectError(await submit(path, { reviews: [{ productId: mug.id, rating: 4 }] }), 409, "CONFLICT")

    const second = await submit(path, { reviews: [{ productId: cup.id, rating: 4 }] })
    expect(second.status, second.text).toBe(201)
    const done = (await admin("GET", `/surveys/${survey.id}`)).body
    expect(done.status).toBe("completed")
    expect(done.completedAt).not.toBeNull()
    // Nothing more is sent: every step still pending ended skipped.
    expect(done.steps.every((s: any) => s.outcome !== null || s.doneAt !== null)).toBe(true)
    expect(done.steps.filter((s: any) => s.type === "email").map((s: any) => s.outcome)).toEqual([
      "skipped",
      "skipped"
    ])
    expect((await read(`/storefront/surveys/${token}`)).body.status).toBe("completed")
  })

  it("hostile review bodies answer a 4xx in the envelope and change nothing", async () => {
    const { admin, mug, submit } = await shop()
    const before = (await admin("GET", "/reviews?limit=250")).body.data.length
    const ok = { productId: mug.id, rating: 5, authorName: "Ada", email: "ada@example.com" }
    for (
      const body of [
        {},
        { ...ok, productId: undefined },
        { ...ok, productSlug: "mug" },
        { ...ok, productId: undefined, productSlug: "nope" },
        { ...ok, rating: 0 },
        { ...ok, rating: 4.5 },
        { ...ok, rating: "5" },
        { ...ok, authorName: "" },
        { ...ok, authorName: "x".repeat(101) },
        { ...ok, email: "not-an-email" },
        { ...ok, title: "x".repeat(501) },
        { ...ok, body: "NUL \u0000" },
        { ...ok, fingerprint: "f".repeat(257) },
        { ...ok, formRenderedAt: "yesterday" },
        { ...ok, published: true },
        { ...ok, verifiedBuyer: true },
        { ...ok, ipAddress: "1.2.3.4" }
      ]
    ) {
      const res = await submit("/storefront/reviews", body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe("INVALID_REQUEST")
    }
    for (const raw of ["{", "[]", "null", JSON.stringify({ ...ok, x: JSON.parse("[".repeat(70) + "]".repeat(70)) })]) {
      const res = await server.request("POST", "/storefront/reviews", {
        rawBody: raw,
        headers: { "x-publishable-key": (await admin("GET", "/publishable-keys")).body.data[0].key }
      })
      expect(res.status >= 400 && res.status < 500, raw).toBe(true)
    }
    expect((await admin("GET", "/reviews?limit=250")).body.data.length).toBe(before)
    expect((await admin("GET", "/customers?limit=250")).body.data).toEqual([])
  })
})
