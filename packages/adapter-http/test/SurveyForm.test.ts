/**
 * `GET|POST /r/{token}` for an organization with no publishable key (shared DECISIONS §19: the page works with no
 * storefront at all): the server renders the survey form, and its POST submits through the survey endpoint's own
 * use-case — verified reviews carrying the survey id, the survey completed — or answers the form again with the errors,
 * changing nothing.
 */
import { afterAll, describe, expect, it } from "vitest"
import { makeSeededServer, testStores } from "./SeededServer.ts"
import { TEST_PEER_HEADER } from "./TestServer.ts"

describe.each(testStores)("the hosted survey form with no publishable key (%s)", (_name, makeStore) => {
  const server = makeSeededServer(makeStore, { trustProxy: "10.0.0.0/8" })
  afterAll(() => server.dispose())

  const shop = async () => {
    const { key } = await server.provision()
    const admin = (method: string, path: string, body?: unknown) =>
      server.request(method as any, path, { token: key, ...(body === undefined ? {} : { body }) })
    const mug = (await admin("POST", "/products", { slug: "mug", title: "Mug <big>" })).body
    const cup = (await admin("POST", "/products", { slug: "cup", title: "Cup" })).body
    const keys = await admin("GET", "/publishable-keys")
    expect(keys.status).toBe(200)
    expect(keys.body.data).toEqual([])
    const setup = await admin("POST", "/organization/setup/reviews", { data: { delayDays: 7, reminder: false } })
    expect(setup.status, JSON.stringify(setup.body)).toBe(201)
    const order = await admin("POST", "/orders", {
      customer: { email: "sue@example.com", firstName: "Sue" },
      lines: [{ productId: mug.id }, { productId: cup.id }],
      status: "fulfilled"
    })
    expect(order.status).toBe(201)
    const [survey] = (await admin(
      "GET",
      `/surveys?filter=${encodeURIComponent(JSON.stringify({ "order.id": order.body.id }))}`
    )).body.data
    const token: string = survey.url.split("/r/")[1]
    return { admin, mug, cup, survey, token }
  }
  const post = (token: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    server.request("POST", `/r/${token}`, {
      rawBody: new URLSearchParams(form).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers }
    })

  it("GET renders the form; POST creates verified reviews of the survey and completes it", async () => {
    const { admin, mug, cup, survey, token } = await shop()
    const page = await server.request("GET", `/r/${token}`)
    expect(page.status, page.text).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("cache-control")).toBe("no-store")
    expect(page.text).toContain("<form method=\"post\">")
    expect(page.text).toContain("Hi Sue")
    expect(page.text).toContain("<legend>Mug &lt;big&gt;</legend>")
    expect(page.text).not.toContain("Mug <big>")
    for (const n of [1, 2, 3, 4, 5]) {
      expect(page.text).toContain(`name="rating.${mug.id}" value="${n}"`)
      expect(page.text).toMatch(new RegExp(`id="(rating-\\d-${n})"[^>]*><label for="\\1">${n} star`))
    }
    expect(page.text).toContain(`<label for="title-0">`)
    expect(page.text).toContain(`<label for="authorName">`)
    expect(page.text).not.toContain("embed.js")

    const done = await post(token, {
      [`rating.${mug.id}`]: "5",
      [`title.${mug.id}`]: "Lovely",
      [`body.${mug.id}`]: "Holds tea well.",
      [`rating.${cup.id}`]: "3",
      authorName: "Sue S.",
      formRenderedAt: new Date(Date.now() - 60_000).toISOString()
    }, { "user-agent": "FormTest/1.0", [TEST_PEER_HEADER]: "10.1.2.3", "x-forwarded-for": "198.51.100.7" })
    expect(done.status, done.text).toBe(200)
    expect(done.text).toContain("Thank you for your review")

    const reviews = (await admin("GET", "/reviews")).body.data
    expect(reviews).toHaveLength(2)
    const byProduct = Object.fromEntries(reviews.map((r: any) => [r.productId, r]))
    expect(byProduct[mug.id]).toMatchObject({
      rating: 5,
      title: "Lovely",
      body: "Holds tea well.",
      verifiedBuyer: true,
      surveyId: survey.id,
      userAgent: "FormTest/1.0",
      // Provenance as the storefront's: the client address behind the trusted proxy (TRUST_PROXY).
      ipAddress: "198.51.100.7"
    })
    expect(byProduct[cup.id]).toMatchObject({
      rating: 3,
      title: null,
      body: null,
      verifiedBuyer: true,
      surveyId: survey.id
    })
    expect((await admin("GET", `/surveys/${survey.id}`)).body.status).toBe("completed")
    // Completed: the link now thanks, and a second POST is a 409 page that adds nothing.
    expect((await server.request("GET", `/r/${token}`)).text).toContain("Thank you")
    const again = await post(token, { [`rating.${mug.id}`]: "4" })
    expect(again.status).toBe(409)
    expect(again.text).toContain("already has its review")
    expect((await admin("GET", "/reviews")).body.data).toHaveLength(2)
  })

  it("bad input answers the form again with the errors (400) and changes nothing; an unknown token is a 404 page", async () => {
    const { admin, mug, cup, survey, token } = await shop()
    const before = (await admin("GET", `/surveys/${survey.id}`)).body
    const cases: Array<Record<string, string>> = [
      {},
      { [`rating.${mug.id}`]: "9" },
      { [`rating.${mug.id}`]: "five" },
      { [`title.${cup.id}`]: "No rating given" },
      { [`rating.${mug.id}`]: "4", [`body.${mug.id}`]: "x".repeat(20_001) },
      { [`rating.${mug.id}`]: "4", authorName: "n".repeat(101) }
    ]
    for (const form of cases) {
      const res = await post(token, form)
      expect(res.status, JSON.stringify(form)).toBe(400)
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(res.text).toContain("role=\"alert\"")
      expect(res.text).toContain("<form method=\"post\">")
    }
    const wrongType = await server.request("POST", `/r/${token}`, { body: { reviews: [] } })
    expect(wrongType.status).toBe(400)
    // The entered text is shown again, escaped.
    const shown = await post(token, { [`title.${cup.id}`]: "<b>hi</b>" })
    expect(shown.text).toContain("&lt;b&gt;hi&lt;/b&gt;")
    expect((await admin("GET", "/reviews")).body.data).toEqual([])
    expect((await admin("GET", `/surveys/${survey.id}`)).body).toEqual(before)

    const unknown = "A".repeat(43)
    for (const method of ["GET", "POST"] as const) {
      const res = await server.request(method, `/r/${unknown}`)
      expect(res.status).toBe(404)
      expect(res.text).toContain("This link is not valid")
      expect((await server.request(method, "/r/short")).status).toBe(404)
    }
  })
})
