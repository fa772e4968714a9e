/** Webhook registration over HTTP: validation, nullable secret, strict bodies, permissions, isolation. */
import { Webhooks } from "@feedback/core"
import { fixedDns } from "@feedback/testing"
import { afterAll, describe, expect, it } from "vitest"
import { expectInvalid } from "./Http.ts"
import { makeTestServer } from "./TestServer.ts"

// Names a test may register without touching the network; the dispatcher is off, so nothing is ever sent.
const FakeDns = fixedDns({ "hooks.example.com": ["93.184.216.34"], "intranet.example.com": ["192.168.1.20"] })

const strict = makeTestServer(undefined, { webhooks: { dispatcher: false, resolver: FakeDns } })
const relaxed = makeTestServer(undefined, {
  webhooks: { dispatcher: false, resolver: FakeDns, allowInsecure: true, allowPrivate: true }
})
afterAll(async () => {
  await strict.dispose()
  await relaxed.dispose()
})

const HOOK = "https://hooks.example.com/webhooks"

describe("webhook registration over HTTP", () => {
  it("creates a webhook and never returns the secret", async () => {
    const { key } = await strict.provision()
    const res = await strict.request("POST", "/webhooks", {
      token: key,
      body: { url: HOOK, events: ["review.created", "review.updated"], hmacSecret: "whsec_abcdefghijklmnop" }
    })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body).sort()).toEqual(["createdAt", "events", "hasSecret", "id", "updatedAt", "url"])
    expect(res.body).toMatchObject({ url: HOOK, events: ["review.created", "review.updated"], hasSecret: true })
    expect(res.text).not.toContain("whsec_abc")
    const got = await strict.request("GET", `/webhooks/${res.body.id}`, { token: key })
    expect(got.status).toBe(200)
    expect(got.body).toEqual(res.body)
    const list = await strict.request("GET", "/webhooks", { token: key })
    expect(list.body).toEqual({ data: [res.body], nextCursor: null })
    expect(list.text).not.toContain("whsec_abc")
  })

  it.each([
    ["not a URL", "hooks.example.com/x"],
    ["http without WEBHOOK_ALLOW_INSECURE", "http://hooks.example.com/x"],
    ["the cloud metadata address", "https://169.254.169.254/latest/meta-data"],
    ["loopback", "https://127.0.0.1:8443/x"],
    ["IPv6 loopback", "https://[::1]/x"],
    ["localhost", "https://localhost/x"],
    ["a name resolving to a private address", "https://intranet.example.com/x"],
    ["a name that does not resolve", "https://nowhere.example.com/x"],
    ["credentials in the URL", "https://user:pw@hooks.example.com/x"]
  ])("refuses %s with 400 body.url", async (_what, url) => {
    const { key } = await strict.provision()
    const res = await strict.request("POST", "/webhooks", { token: key, body: { url, events: ["review.created"] } })
    expectInvalid(res, "body.url")
    expect(res.body.error.message).toMatch(/webhook URL/)
    const list = await strict.request("GET", "/webhooks", { token: key })
    expect(list.body.data).toEqual([])
  })

  it("accepts http, loopback and metadata addresses when the server allows them", async () => {
    const { key } = await relaxed.provision()
    for (
      const url of [
        "http://127.0.0.1:9/hook",
        "https://169.254.169.254/x",
        "http://localhost:3000/x",
        "https://intranet.example.com/x"
      ]
    ) {
      const res = await relaxed.request("POST", "/webhooks", { token: key, body: { url, events: ["review.created"] } })
      expect(res.status, url).toBe(201)
    }
  })

  it("refuses unknown events, empty lists, unknown fields and wrong types, naming the field", async () => {
    const { key } = await strict.provision()
    const post = (body: unknown) => strict.request("POST", "/webhooks", { token: key, body })
    expectInvalid(await post({ url: HOOK, events: ["review.published"] }), "body.events[0]")
    expectInvalid(await post({ url: HOOK, events: ["review.created", "review.*"] }), "body.events[1]")
    expectInvalid(await post({ url: HOOK, events: [] }), "body.events")
    expectInvalid(await post({ url: HOOK, events: Array(101).fill("review.created") }), "body.events")
    expectInvalid(await post({ url: HOOK, events: "review.created" }), "body.events")
    expectInvalid(await post({ url: HOOK, events: ["review.created"], hmacsecret: "typo" }), "body.hmacsecret")
    expectInvalid(await post({ url: HOOK, events: ["review.created"], hmacSecret: "" }), "body.hmacSecret")
    expectInvalid(await post({ url: HOOK, events: ["review.created"], hmacSecret: 42 }), "body.hmacSecret")
    expectInvalid(await post({ events: ["review.created"] }), "body.url")
    const list = await strict.request("GET", "/webhooks", { token: key })
    expect(list.body.data).toEqual([])
  })

  it("hmacSecret: omitted keeps it, a string replaces it, null removes it (also on create)", async () => {
    const { key } = await strict.provision()
    const created = await strict.request("POST", "/webhooks", {
      token: key,
      body: { url: HOOK, events: ["review.created"], hmacSecret: "first-secret-0123456789" }
    })
    const id = created.body.id
    const patch = (body: unknown) => strict.request("PATCH", `/webhooks/${id}`, { token: key, body })
    const kept = await patch({ events: ["review.deleted", "productQuestion.created"] })
    expect(kept.status).toBe(200)
    expect(kept.body).toMatchObject({ events: ["review.deleted", "productQuestion.created"], hasSecret: true })
    const removed = await patch({ hmacSecret: null })
    expect(removed.status).toBe(200)
    expect(removed.body.hasSecret).toBe(false)
    expect(removed.body.events).toEqual(["review.deleted", "productQuestion.created"])
    const set = await patch({ hmacSecret: "second-secret-0123456789" })
    expect(set.body.hasSecret).toBe(true)
    const unsigned = await strict.request("POST", "/webhooks", {
      token: key,
      body: { url: HOOK, events: ["review.created"], hmacSecret: null }
    })
    expect(unsigned.status).toBe(201)
    expect(unsigned.body.hasSecret).toBe(false)
  })

  it("a bad PATCH changes nothing", async () => {
    const { key } = await strict.provision()
    const created = await strict.request("POST", "/webhooks", {
      token: key,
      body: { url: HOOK, events: ["review.created"] }
    })
    const id = created.body.id
    expectInvalid(
      await strict.request("PATCH", `/webhooks/${id}`, {
        token: key,
        body: { events: ["review.updated"], url: "https://10.0.0.1/" }
      }),
      "body.url"
    )
    expectInvalid(
      await strict.request("PATCH", `/webhooks/${id}`, { token: key, body: { events: ["nope"] } }),
      "body.events[0]"
    )
    expectInvalid(await strict.request("PATCH", `/webhooks/${id}`, { token: key, body: { url: null } }), "body.url")
    expectInvalid(await strict.request("PATCH", `/webhooks/${id}`, { token: key, body: { evnts: [] } }), "body.evnts")
    const after = await strict.request("GET", `/webhooks/${id}`, { token: key })
    expect(after.body).toEqual(created.body)
  })

  it("another organization's webhook is a 404 everywhere", async () => {
    const a = await strict.provision()
    const b = await strict.provision()
    const created = await strict.request("POST", "/webhooks", {
      token: a.key,
      body: { url: HOOK, events: ["review.created"] }
    })
    const id = created.body.id
    for (
      const [method, path, body] of [
        ["GET", `/webhooks/${id}`, undefined],
        ["PATCH", `/webhooks/${id}`, { events: ["review.updated"] }],
        ["DELETE", `/webhooks/${id}`, undefined],
        ["GET", `/webhooks/${id}/events`, undefined]
      ] as const
    ) {
      const res = await strict.request(method, path, { token: b.key, body })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body.error.code).toBe("NOT_FOUND")
    }
    expect((await strict.request("GET", `/webhooks/${id}`, { token: a.key })).body).toEqual(created.body)
    const missing = await strict.request("GET", "/webhooks/00000000-0000-4000-8000-000000000000", { token: a.key })
    expect(missing.status).toBe(404)
    expectInvalid(await strict.request("GET", "/webhooks/not-a-uuid", { token: a.key }), "path.id")
  })

  it("deletes, answering the deleted webhook", async () => {
    const { key } = await strict.provision()
    const created = await strict.request("POST", "/webhooks", {
      token: key,
      body: { url: HOOK, events: ["review.created"] }
    })
    const deleted = await strict.request("DELETE", `/webhooks/${created.body.id}`, { token: key })
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual(created.body)
    expect((await strict.request("DELETE", `/webhooks/${created.body.id}`, { token: key })).status).toBe(404)
  })

  it("needs settings:read to read and settings:write to change", async () => {
    const reader = await strict.provision({ permissions: ["settings:read"] })
    const denied = await strict.request("POST", "/webhooks", {
      token: reader.key,
      body: { url: HOOK, events: ["review.created"] }
    })
    expect(denied.status).toBe(403)
    expect(denied.body.error.message).toContain("settings:write")
    expect((await strict.request("GET", "/webhooks", { token: reader.key })).status).toBe(200)
    const other = await strict.provision({ permissions: ["reviews:read"] })
    expect((await strict.request("GET", "/webhook-events", { token: other.key })).status).toBe(403)
    expect((await strict.request("GET", "/webhooks", {})).status).toBe(401)
  })

  it("lists the event catalog", async () => {
    const { key } = await strict.provision({ permissions: ["settings:read"] })
    const res = await strict.request("GET", "/webhook-events", { token: key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: [...Webhooks.EVENT_NAMES], emitted: [...Webhooks.SERVICE_EVENT_NAMES] })
    // A name nobody emits here is still subscribable (a host may emit it elsewhere; the catalog is the contract).
    const silent = Webhooks.EVENT_NAMES.find((n) => !Webhooks.SERVICE_EVENT_NAMES.includes(n))!
    const created = await strict.request("POST", "/webhooks", {
      token: (await strict.provision()).key,
      body: { url: HOOK, events: [silent] }
    })
    expect(created.status).toBe(201)
  })

  it("paginates newest first and refuses bad limits and cursors", async () => {
    const { key } = await strict.provision()
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await strict.request("POST", "/webhooks", {
          token: key,
          body: { url: `${HOOK}/${i}`, events: ["review.created"] }
        })).body.id
      )
    }
    const first = await strict.request("GET", "/webhooks?limit=2", { token: key })
    expect(first.body.data).toHaveLength(2)
    const second = await strict.request("GET", `/webhooks?limit=2&cursor=${first.body.nextCursor}`, { token: key })
    expect(second.body.nextCursor).toBeNull()
    expect([...first.body.data, ...second.body.data].map((w: { id: string }) => w.id).sort()).toEqual([...ids].sort())
    expectInvalid(await strict.request("GET", "/webhooks?limit=0", { token: key }), "query.limit")
    expectInvalid(await strict.request("GET", "/webhooks?limit=251", { token: key }), "query.limit")
    expectInvalid(await strict.request("GET", "/webhooks?limit=ten", { token: key }), "query.limit")
    expectInvalid(await strict.request("GET", "/webhooks?cursor=bogus", { token: key }), "cursor")
    expectInvalid(await strict.request("GET", "/webhooks?sort=url", { token: key }), "query.sort")
    const log = await strict.request("GET", `/webhooks/${ids[0]}/events`, { token: key })
    expect(log.body).toEqual({ data: [], nextCursor: null })
    expectInvalid(
      await strict.request("GET", `/webhooks/${ids[0]}/events?cursor=${first.body.nextCursor}`, { token: key }),
      "cursor"
    )
  })

  it("documents the endpoints in the OpenAPI document", async () => {
    const res = await strict.request("GET", "/openapi.json")
    for (const path of ["/webhooks", "/webhooks/{id}", "/webhooks/{id}/events", "/webhook-events"]) {
      expect(Object.keys(res.body.paths)).toContain(path)
    }
    expect(res.body.paths["/webhooks"].post["x-required-permission"]).toBe("settings:write")
  })
})

describe("the OpenAPI document's webhooks section", () => {
  const doc = makeTestServer()
  afterAll(() => doc.dispose())

  it("describes one delivery per event the service emits, with the envelope and the record as data", async () => {
    const spec = (await doc.request("GET", "/openapi.json")).body
    expect(spec.openapi).toMatch(/^3\.1\./)
    expect(Object.keys(spec.webhooks).sort()).toEqual([...Webhooks.SERVICE_EVENT_NAMES, "webhook.ping"].sort())
    const review = spec.webhooks["review.created"].post
    const body = review.requestBody.content["application/json"].schema
    expect(body.required).toEqual(["event", "timestamp", "idempotencyKey", "eventId", "data"])
    expect(body.properties.event.const).toBe("review.created")
    // The record is the named component the API's own operations answer, so generated receivers share its type.
    expect(body.properties.data).toEqual({ $ref: "#/components/schemas/ReviewRecord" })
    const record = spec.components.schemas["ReviewRecord"]
    expect(Object.keys(record.properties)).toEqual(
      expect.arrayContaining(["id", "rating", "title", "body", "productId"])
    )
    expect(review.parameters.map((p: { name: string }) => p.name)).toEqual([
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
      "X-Webhook-Signature"
    ])
    const ping = spec.webhooks["webhook.ping"].post.requestBody.content["application/json"].schema
    expect(ping.properties.data).toEqual({ $ref: "#/components/schemas/Webhook" })
    expect(Object.keys(spec.components.schemas["Webhook"].properties)).toContain("hasSecret")
    expect(JSON.stringify(spec.components.schemas["Webhook"])).not.toContain("hmacSecret")
  })
})
