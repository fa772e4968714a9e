/**
 * JSON bodies are measured before they are parsed (docs/SECURITY.md): a body whose values would hold the event loop
 * while `JSON.parse` builds them is refused with a 400 first, on every store, and nothing changes.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import type { StoreServices } from "@feedback/core"
import type { Layer } from "effect"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, storeName } from "../../adapter-postgres/test/TestDatabase.ts"
import { JSON_BODY_LIMITS, scanJsonBody } from "../src/server/JsonBodyShape.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"

const bytes = (s: string) => new TextEncoder().encode(s)
const scan = (s: string) => Effect.runSync(scanJsonBody(bytes(s)))

/** The reference: nesting depth and container count of a parsed value. */
const measure = (v: unknown, depth = 1): { depth: number; containers: number } => {
  if (typeof v !== "object" || v === null) return { depth: 0, containers: 0 }
  const children = Object.values(v).map((c) => measure(c, depth + 1))
  return {
    depth: Math.max(depth, ...children.map((c) => c.depth)),
    containers: 1 + children.reduce((n, c) => n + c.containers, 0)
  }
}

describe("JSON body shape", () => {
  it("counts the depth that JSON.parse would build, strings and escapes included", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
      const text = JSON.stringify(value)
      expect(scan(text)).toBeUndefined()
      expect(measure(value).depth).toBeLessThanOrEqual(JSON_BODY_LIMITS.maxDepth)
    }))
    expect(scan(JSON.stringify({ s: "{{{{[[[[\\\"" + "[".repeat(1000) }))).toBeUndefined()
  })

  it("refuses deep nesting, too many objects and too many values", () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n)
    expect(scan(deep(JSON_BODY_LIMITS.maxDepth))).toBeUndefined()
    expect(scan(deep(JSON_BODY_LIMITS.maxDepth + 1))).toBe("depth")
    expect(scan(`[${Array(JSON_BODY_LIMITS.maxContainers).fill("{}").join(",")}]`)).toBe("containers")
    expect(scan(`[${Array(JSON_BODY_LIMITS.maxValues + 1).fill("0").join(",")}]`)).toBe("values")
  })
})

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory", () => MemoryStoreLayer],
  [storeName, () => freshLayer((target) => PgStoreLayer(target))]
]

describe.each(stores)("JSON bodies over HTTP on %s", (_name, makeStore) => {
  let server: TestServer
  let key: string
  beforeAll(async () => {
    server = makeTestServer(makeStore())
    key = (await server.provision()).key
  })
  afterAll(() => server.dispose())

  it("an import of a million empty objects is a 400 naming the body, before any parsing, and imports nothing", async () => {
    const rawBody = `{"data":[${Array(1_000_000).fill("{}").join(",")}]}`
    const res = await server.request("POST", "/customers/import", {
      token: key,
      rawBody,
      headers: { "content-type": "application/json" }
    })
    expect(res.status, res.text).toBe(400)
    expect(res.body.error.code).toBe("INVALID_REQUEST")
    expect(res.body.error.details.issues).toEqual([{
      path: "body",
      message: expect.stringContaining("objects and arrays")
    }])
    expect((await server.request("GET", "/customers", { token: key })).body.data).toEqual([])
  })

  it("is measured only after authentication: an anonymous client's body is a 401, never a 400", async () => {
    const rawBody = `{"data":[${Array(300_000).fill("{}").join(",")}]}`
    const anonymous = await server.request("POST", "/customers/import", {
      rawBody,
      headers: { "content-type": "application/json" }
    })
    expect(anonymous.status, anonymous.text).toBe(401)
    const wrongKey = await server.request("POST", "/customers/import", {
      token: "sk_" + "x".repeat(43),
      rawBody,
      headers: { "content-type": "application/json" }
    })
    expect(wrongKey.status, wrongKey.text).toBe(401)
  })

  it("a body nested deeper than the limit is a 400; ordinary bodies pass", async () => {
    const rawBody = `{"name":"x","metadata":${"[".repeat(100)}${"]".repeat(100)}}`
    const res = await server.request("POST", "/sites", {
      token: key,
      rawBody,
      headers: { "content-type": "application/json" }
    })
    expect(res.status, res.text).toBe(400)
    expect(res.body.error.message).toContain("deeper than")
    const ok = await server.request("POST", "/sites", { token: key, body: { name: "Shop" } })
    expect(ok.status, ok.text).toBe(201)
    expect((await server.request("GET", "/sites", { token: key })).body.data).toHaveLength(1)
  })
})
