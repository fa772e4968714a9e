/**
 * Headers an answer carries because of its status (docs/DECISIONS.md §63): every 401 says how to authenticate, every
 * create says where its record lives (and that path reads it), replays included; and the webhook secret's documented
 * bounds are the server's, counted in characters as the document counts them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestServer, type TestServer } from "./TestServer.ts"

describe("answer headers", () => {
  let server: TestServer
  let key: string
  beforeAll(async () => {
    server = makeTestServer(undefined, { webhooks: { allowInsecure: true, allowPrivate: true } })
    key = (await server.provision()).key
  })
  afterAll(() => server.dispose())

  it("a 401 carries WWW-Authenticate with the route's scheme", async () => {
    const admin = await server.request("GET", "/organization", { token: "sk_unknown" })
    expect(admin.status).toBe(401)
    expect(admin.headers.get("www-authenticate")).toBe("Bearer realm=\"feedback\"")
    const anonymous = await server.request("POST", "/webhooks", { body: {} })
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer /)
    const storefront = await server.request("GET", "/storefront/ratings?products=mug", {
      headers: { "x-publishable-key": "pk_unknown" }
    })
    expect(storefront.status).toBe(401)
    expect(storefront.headers.get("www-authenticate")).toBe("PublishableKey realm=\"storefront\"")
    // Other statuses carry none.
    const ok = await server.request("GET", "/organization", { token: key })
    expect(ok.status).toBe(200)
    expect(ok.headers.get("www-authenticate")).toBeNull()
  })

  it("a create carries Location, which reads what it created; a replay carries the same", async () => {
    const created = await server.request("POST", "/sites", {
      token: key,
      body: { name: "Main" },
      headers: { "idempotency-key": "site-1" }
    })
    expect(created.status).toBe(201)
    expect(created.headers.get("location")).toBe(`/sites/${created.body.id}`)
    const read = await server.request("GET", created.headers.get("location")!, { token: key })
    expect(read.status).toBe(200)
    expect(read.body.id).toBe(created.body.id)
    const replayed = await server.request("POST", "/sites", {
      token: key,
      body: { name: "Main" },
      headers: { "idempotency-key": "site-1" }
    })
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    expect(replayed.headers.get("location")).toBe(created.headers.get("location"))

    // A record named by its request path: the reply of a review.
    await server.request("POST", "/products", { token: key, body: { slug: "mug", title: "Mug" } })
    const imported = await server.request("POST", "/reviews/import", {
      token: key,
      body: { data: [{ product: "mug", rating: 5, body: "Lovely.", customer: "ada@example.com" }] }
    })
    const reviewId = imported.body.imported[0].id
    const reply = await server.request("POST", `/reviews/${reviewId}/response`, {
      token: key,
      body: { body: "Thanks!" }
    })
    expect(reply.status).toBe(201)
    expect(reply.headers.get("location")).toBe(`/reviews/${reviewId}/response`)

    // A queued job (202) says where to follow it.
    const job = await server.request("POST", "/export-jobs", { token: key, body: { type: "reviews", format: "csv" } })
    expect(job.status).toBe(202)
    expect(job.headers.get("location")).toBe(`/export-jobs/${job.body.id}`)
    // A refused create has none.
    const refused = await server.request("POST", "/sites", { token: key, body: { name: "" } })
    expect(refused.status).toBe(400)
    expect(refused.headers.get("location")).toBeNull()
  })

  it("a webhook secret is 16 to 256 characters, counted as the document counts them", async () => {
    const secret = async (hmacSecret: string) =>
      (await server.request("POST", "/webhooks", {
        token: key,
        body: { url: "http://127.0.0.1:9/hook", events: ["review.created"], hmacSecret }
      })).status
    const document = (await server.request("GET", "/openapi.json")).body
    const documented = document.components.schemas.CreateWebhook.properties.hmacSecret.anyOf[0]
    expect([documented.minLength, documented.maxLength]).toEqual([16, 256])
    expect(await secret("a".repeat(15))).toBe(400)
    expect(await secret("a".repeat(16))).toBe(201)
    // Eight emoji are sixteen UTF-16 code units but eight characters: too short, as JSON Schema's minLength says.
    expect(await secret("🔑".repeat(8))).toBe(400)
    expect(await secret("🔑".repeat(16))).toBe(201)
    expect(await secret("🔑".repeat(256))).toBe(201)
    expect(await secret("a".repeat(257))).toBe(400)
    const events = document.components.schemas.CreateWebhook.properties.events
    expect(events.minItems).toBe(1)
  })
})
