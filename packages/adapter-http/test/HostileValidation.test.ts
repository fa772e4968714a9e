/**
 * Hostile input, validation part (docs/DECISIONS.md §11): each finding re-run as an HTTP request on the memory store
 * and on PostgreSQL (a server with TEST_DATABASE_URL, embedded PGlite otherwise). Every refusal is a 4xx in the error
 * envelope and changes nothing. "Fast" is asserted as "does not grow with the input" (one issue for an over-long value,
 * at most 20 issues and a small body for a huge import), never as a wall-clock time.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { type StoreServices } from "@feedback/core"
import { fixedDns } from "@feedback/testing"
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, storeName } from "../../adapter-postgres/test/TestDatabase.ts"
import { JSON_BODY_LIMITS } from "../src/server/JsonBodyShape.ts"
import { expectError } from "./Http.ts"
import { makeTestServer, type TestResponse, type TestServer } from "./TestServer.ts"

const FakeDns = fixedDns({ "hooks.example.com": ["93.184.216.34"] })

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory", () => MemoryStoreLayer],
  [storeName, () => freshLayer((t) => PgStoreLayer(t))]
]

const HOOK = "https://hooks.example.com/webhooks"

/** A 4xx in the envelope of the error model; `path`, when given, is among the issues. */
const issuesOf = (res: TestResponse): ReadonlyArray<{ path: string; message: string }> => res.body.error.details.issues

describe.each(stores)("hostile input is refused by validation (%s)", (_name, makeStore) => {
  // Built when the block starts, not when the file is collected: a store whose connection opened earlier would sit
  // through the other block's CPU-heavy requests and time out.
  let server: TestServer
  beforeAll(async () => {
    server = makeTestServer(makeStore(), { webhooks: { dispatcher: false, resolver: FakeDns } })
    await server.provision()
  }, 60_000)
  afterAll(() => server.dispose())

  const listIsEmpty = async (key: string, path: string) => {
    const list = await server.request("GET", path, { token: key })
    expect(list.status).toBe(200)
    expect(list.body.data).toEqual([])
  }

  it("an email of 32,000 dots is one issue (the length check aborts), and no customer is created", async () => {
    const { key } = await server.provision()
    const res = await server.request("POST", "/customers", {
      token: key,
      body: { email: "a@" + ".".repeat(32_000) + "@" }
    })
    expectError(res, 400, "INVALID_REQUEST", "body.email")
    expect(issuesOf(res)).toHaveLength(1)
    // Within the length limit, a pattern that made the old regex backtrack is refused as not an address.
    const dots = await server.request("POST", "/customers", {
      token: key,
      body: { email: "a@" + ".".repeat(200) + "@" }
    })
    expectError(dots, 400, "INVALID_REQUEST", "body.email")
    await listIsEmpty(key, "/customers")
  })

  it("the same email check guards import rows and question askers", async () => {
    const { key } = await server.provision()
    const bad = "a@" + ".".repeat(200)
    const imported = await server.request("POST", "/reviews/import", {
      token: key,
      body: { data: [{ product: "mug", rating: 5, customer: bad }] }
    })
    expectError(imported, 400, "INVALID_REQUEST", "body.data[0].customer")
    const customers = await server.request("POST", "/customers/import", {
      token: key,
      body: { data: [{ email: bad }] }
    })
    expectError(customers, 400, "INVALID_REQUEST", "body.data[0].email")
    const product = await server.request("POST", "/products", { token: key, body: { slug: "mug", title: "Mug" } })
    const question = await server.request("POST", "/product-questions", {
      token: key,
      body: { productId: product.body.id, body: "Does it fit?", askerEmail: bad }
    })
    expectError(question, 400, "INVALID_REQUEST", "body.askerEmail")
    await listIsEmpty(key, "/reviews")
    await listIsEmpty(key, "/customers")
    await listIsEmpty(key, "/product-questions")
  })

  it("an import of 200,000 rows is refused before any row is decoded: one issue, a small body", async () => {
    const { key } = await server.provision()
    // Scalar rows pass the body's shape check, so the row cap itself answers, naming `body.data`.
    const rows = JSON.stringify({ data: Array.from({ length: 200_000 }, () => 0) })
    // 200,000 empty objects are refused even earlier, by the shape check in front of the JSON parser.
    const emptyObjects = JSON.stringify({ data: Array.from({ length: 200_000 }, () => ({})) })
    for (const path of ["/reviews/import", "/products/import", "/customers/import"]) {
      const res = await server.request("POST", path, { token: key, rawBody: rows })
      expectError(res, 400, "INVALID_REQUEST", "body.data")
      expect(issuesOf(res)).toHaveLength(1)
      expect(res.body.error.message).toContain("at most 10000 rows")
      expect(res.text.length).toBeLessThan(1_000)
      const objects = await server.request("POST", path, { token: key, rawBody: emptyObjects })
      expectError(objects, 400, "INVALID_REQUEST", "body")
      expect(issuesOf(objects)).toHaveLength(1)
      expect(objects.text.length).toBeLessThan(1_000)
    }
    await listIsEmpty(key, "/reviews")
    await listIsEmpty(key, "/products")
    await listIsEmpty(key, "/customers")
  })

  it("10,001 rows are refused and 10,000 bad rows answer at most 20 issues and say how many more", async () => {
    const { key } = await server.provision()
    const over = await server.request("POST", "/reviews/import", {
      token: key,
      body: { data: Array.from({ length: 10_001 }, () => ({ product: "mug", rating: 5 })) }
    })
    expectError(over, 400, "INVALID_REQUEST", "body.data")
    const bad = await server.request("POST", "/reviews/import", {
      token: key,
      body: { data: Array.from({ length: 10_000 }, () => ({ rating: 9 })) }
    })
    expectError(bad, 400, "INVALID_REQUEST", "body.data[0].rating")
    expect(issuesOf(bad)).toHaveLength(20)
    expect(bad.body.error.message).toMatch(/and \d+ more issues; details list the first 20/)
    expect(bad.text.length).toBeLessThan(5_000)
    await listIsEmpty(key, "/reviews")
  })

  it("a body of as many unknown fields as an object may have answers at most 20 issues; more is one issue", async () => {
    const { key } = await server.provision()
    const withFields = (n: number) => {
      const body: Record<string, unknown> = { email: "ada@example.com" }
      for (let i = 0; i < n; i++) body[`f${i}`] = i
      return body
    }
    const widest = JSON_BODY_LIMITS.maxMembers - 1
    const res = await server.request("POST", "/customers", { token: key, body: withFields(widest) })
    expectError(res, 400, "INVALID_REQUEST", "body.f0")
    expect(issuesOf(res)).toHaveLength(20)
    expect(res.body.error.message).toContain(`and ${widest - 1} more issues`)
    // Wider than any request object: refused by its shape, before parsing (docs/DECISIONS.md §79).
    const wider = await server.request("POST", "/customers", { token: key, body: withFields(50_000) })
    expectError(wider, 400, "INVALID_REQUEST", "body")
    expect(issuesOf(wider)).toHaveLength(1)
    await listIsEmpty(key, "/customers")
  })

  it("metadata with more than 50 keys is refused before its entries are decoded", async () => {
    const { key } = await server.provision()
    const metadata: Record<string, unknown> = {}
    for (let i = 0; i < JSON_BODY_LIMITS.maxMembers; i++) metadata[`k${i}`] = i
    const res = await server.request("POST", "/products", { token: key, body: { slug: "mug", title: "Mug", metadata } })
    expectError(res, 400, "INVALID_REQUEST", "body.metadata")
    expect(issuesOf(res)).toHaveLength(1)
    await listIsEmpty(key, "/products")
  })

  it("NUL and lone surrogates in a webhook secret, an organization name or a key name are a 400, not a 500", async () => {
    const { key, organizationId } = await server.provision()
    for (const secret of ["0123456789abcdef\u0000", "0123456789abcdef\uD800"]) {
      const res = await server.request("POST", "/webhooks", {
        token: key,
        body: { url: HOOK, events: ["review.created"], hmacSecret: secret }
      })
      expectError(res, 400, "INVALID_REQUEST", "body.hmacSecret")
    }
    await listIsEmpty(key, "/webhooks")
    for (const name of ["Acme\u0000", "Acme\uDC00"]) {
      expectError(await server.operator("POST", "/organizations", { name }), 400, "INVALID_REQUEST", "body.name")
      const keyRes = await server.operator("POST", `/organizations/${organizationId}/keys`, {
        permissions: ["reviews:read"],
        name
      })
      expectError(keyRes, 400, "INVALID_REQUEST", "body.name")
    }
    const keys = await server.operator("GET", `/organizations/${organizationId}/keys`)
    expect(keys.body.data).toHaveLength(1)
  })

  it("stored text everywhere: NUL in a product, a site, a question, a reply or metadata is a 400", async () => {
    const { key } = await server.provision()
    expectError(
      await server.request("POST", "/sites", { token: key, body: { name: "Main\u0000" } }),
      400,
      "INVALID_REQUEST",
      "body.name"
    )
    // A bad key is explained like a bad value, never as an "excess property".
    for (
      const [metadata, message] of [
        [{ "k\u0000": "v" }, "key: must not contain the NUL character"],
        [{ k: "v\u0000" }, "must not contain the NUL character"],
        [{ "k\uD800": "v" }, "key: must be well-formed Unicode (it contains a lone surrogate)"],
        [{ ["k".repeat(41)]: "v" }, expect.stringMatching(/^key: .*between 1 and 40/)]
      ] as const
    ) {
      const refused = await server.request("POST", "/products", {
        token: key,
        body: { slug: "mug", title: "Mug", metadata }
      })
      expectError(refused, 400, "INVALID_REQUEST", `body.metadata.${Object.keys(metadata)[0]}`)
      expect(refused.body.error.details.issues).toEqual([{
        path: `body.metadata.${Object.keys(metadata)[0]}`,
        message
      }])
    }
    const product = await server.request("POST", "/products", { token: key, body: { slug: "mug", title: "Mug" } })
    expectError(
      await server.request("POST", "/product-questions", {
        token: key,
        body: { productId: product.body.id, body: "Fits?\uDBFF" }
      }),
      400,
      "INVALID_REQUEST",
      "body.body"
    )
    await listIsEmpty(key, "/sites")
    await listIsEmpty(key, "/product-questions")
  })

  it("review title and body on import are at most 500 and 20,000 characters", async () => {
    const { key } = await server.provision()
    const title = await server.request("POST", "/reviews/import", {
      token: key,
      body: { data: [{ product: "mug", rating: 5, title: "t".repeat(501) }] }
    })
    expectError(title, 400, "INVALID_REQUEST", "body.data[0].title")
    const body = await server.request("POST", "/reviews/import", {
      token: key,
      body: { data: [{ product: "mug", rating: 5, body: "b".repeat(20_001) }] }
    })
    expectError(body, 400, "INVALID_REQUEST", "body.data[0].body")
    expect(issuesOf(body)).toHaveLength(1)
    await listIsEmpty(key, "/reviews")
  })

  it("webhook secrets are 16 to 256 characters, on create and on update", async () => {
    const { key } = await server.provision()
    for (const secret of ["x", "0123456789abcde", "s".repeat(257)]) {
      const res = await server.request("POST", "/webhooks", {
        token: key,
        body: { url: HOOK, events: ["review.created"], hmacSecret: secret }
      })
      expectError(res, 400, "INVALID_REQUEST", "body.hmacSecret")
      expect(res.body.error.message).toContain("16 to 256 characters")
    }
    await listIsEmpty(key, "/webhooks")
    const created = await server.request("POST", "/webhooks", {
      token: key,
      body: { url: HOOK, events: ["review.created"], hmacSecret: "0123456789abcdef" }
    })
    expect(created.status).toBe(201)
    const update = await server.request("PATCH", `/webhooks/${created.body.id}`, {
      token: key,
      body: { hmacSecret: "short" }
    })
    expectError(update, 400, "INVALID_REQUEST", "body.hmacSecret")
    const longest = await server.request("PATCH", `/webhooks/${created.body.id}`, {
      token: key,
      body: { hmacSecret: "s".repeat(256) }
    })
    expect(longest.status).toBe(200)
  })

  it("an upper-case UUID in a path, a body or a filter finds the record and is answered in lower case", async () => {
    const { key } = await server.provision()
    const product = await server.request("POST", "/products", { token: key, body: { slug: "mug", title: "Mug" } })
    const id: string = product.body.id
    const upper = id.toUpperCase()
    const got = await server.request("GET", `/products/${upper}`, { token: key })
    expect(got.status).toBe(200)
    expect(got.body.id).toBe(id)
    const question = await server.request("POST", "/product-questions", {
      token: key,
      body: { productId: upper, body: "Fits?" }
    })
    expect(question.status).toBe(201)
    expect(question.body.productId).toBe(id)
    const filtered = await server.request(
      "GET",
      `/product-questions?filter=${encodeURIComponent(JSON.stringify({ "product.id": upper }))}`,
      { token: key }
    )
    expect(filtered.body.data.map((q: { id: string }) => q.id)).toEqual([question.body.id])
    const missing = await server.request("GET", `/products/${"0190A0B1-C2D3-7E4F-8A5B-6C7D8E9FA0B1"}`, { token: key })
    expectError(missing, 404, "NOT_FOUND")
  })

  it("an impossible date is a 400, not rolled over into the next month or day", async () => {
    const { key } = await server.provision()
    for (const at of ["2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "0000-01-01T00:00:00Z"]) {
      const res = await server.request("POST", "/customers", {
        token: key,
        body: { email: "ada@example.com", emailOptOut: true, emailOptOutAt: at }
      })
      expectError(res, 400, "INVALID_REQUEST", "body.emailOptOutAt")
      const imported = await server.request("POST", "/reviews/import", {
        token: key,
        body: { data: [{ product: "mug", rating: 5, createdAt: at }] }
      })
      expectError(imported, 400, "INVALID_REQUEST", "body.data[0].createdAt")
      const filtered = await server.request(
        "GET",
        `/reviews?filter=${encodeURIComponent(JSON.stringify({ createdAt: { $gte: at } }))}`,
        { token: key }
      )
      expectError(filtered, 400, "INVALID_REQUEST", "filter.createdAt.$gte")
    }
    await listIsEmpty(key, "/customers")
  })
})

describe("the OpenAPI document still describes bounded bodies", () => {
  const server = makeTestServer()
  afterAll(() => server.dispose())

  it("import rows, webhook events and metadata show their members and their bound", async () => {
    const spec = (await server.request("GET", "/openapi.json")).body
    // Bodies are named components now: follow each `$ref` to the schema it names.
    const resolve = (node: any): any =>
      node?.$ref === undefined ? node : resolve(spec.components.schemas[node.$ref.replace("#/components/schemas/", "")])
    const deref = (node: any): any =>
      new Proxy(resolve(node), {
        get: (target, key) => typeof target[key] === "object" && target[key] !== null ? deref(target[key]) : target[key]
      })
    const body = (path: string) => deref(spec.paths[path].post.requestBody.content["application/json"].schema)
    for (const path of ["/reviews/import", "/products/import", "/customers/import"]) {
      const data = body(path).properties.data
      expect(data.type).toBe("array")
      expect(data.maxItems).toBe(10_000)
      expect(data.items.type).toBe("object")
      expect(Object.keys(data.items.properties).length).toBeGreaterThan(3)
    }
    const row = body("/reviews/import").properties.data.items.properties
    expect({ ...row.title.anyOf[0] }).toEqual({ type: "string", maxLength: 500 })
    expect({ ...row.body.anyOf[0] }).toEqual({ type: "string", maxLength: 20_000 })
    expect(body("/webhooks").properties.events).toMatchObject({ type: "array", maxItems: 100 })
    expect(body("/products").properties.metadata).toMatchObject({ type: "object", maxProperties: 50 })
  })
})
