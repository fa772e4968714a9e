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
import { NO_LIMITS, scanJson, startScan } from "../src/server/JsonBytes.ts"
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

/** The reference: the most members of any one object in a parsed value. */
const widest = (v: unknown): number => {
  if (typeof v !== "object" || v === null) return 0
  const own = Array.isArray(v) ? 0 : Object.keys(v).length
  return Math.max(own, ...Object.values(v).map(widest))
}

/** Whether a scan with at most `maxMembers` members per object crosses that limit, the text fed in two slices. */
const crossesMembers = (text: string, maxMembers: number, cut: number) => {
  const b = bytes(text)
  const at = Math.min(cut, b.length)
  const state = startScan()
  const limits = { ...NO_LIMITS, maxMembers }
  return scanJson(b, 0, at, state, limits, false) ?? scanJson(b, at, b.length, state, limits, false)
}

/** Strings made of JSON's own punctuation, which must not count as members. */
const punctuation = fc.string({ unit: fc.constantFrom(",", ":", "{", "}", "[", "]", "\"", "\\", "a") })
const tricky = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    punctuation,
    fc.integer(),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(punctuation, tie("value"), { maxKeys: 6 })
  )
})).value

describe("JSON body members", () => {
  it("counts the members of each object apart, never a comma or colon inside a string", () => {
    fc.assert(fc.property(fc.oneof(tricky, fc.jsonValue({ maxDepth: 6 })), fc.nat(200), (value, cut) => {
      const text = JSON.stringify(value)
      const most = widest(JSON.parse(text))
      expect(crossesMembers(text, most, cut)).toBeUndefined()
      if (most > 0) expect(crossesMembers(text, most - 1, cut)).toBe("members")
    }))
  })

  it("refuses an object wider than any request object, and not its nested objects' sum", () => {
    const object = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":"a,b:{c}"`).join(",")}}`
    const max = JSON_BODY_LIMITS.maxMembers
    expect(scan(object(max))).toBeUndefined()
    expect(scan(object(max + 1))).toBe("members")
    // Many objects of `max` members each, side by side and nested: each counted alone.
    expect(scan(`[${Array(5).fill(object(max)).join(",")}]`)).toBeUndefined()
    expect(scan(`{"a":${object(max)},"b":${object(max)}}`)).toBeUndefined()
    // An array of many values is not an object of many members.
    expect(scan(`[${Array(max * 10).fill("1").join(",")}]`)).toBeUndefined()
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

  it("an object of 96,000 keys is a 400 naming it, on a one-shot route and a sliced one, and changes nothing", async () => {
    const wide = Array.from({ length: 96_000 }, (_, i) => `"${i}":0`).join(",")
    const bodies = [
      ["/products", `{"slug":"w","title":"W",${wide}}`],
      ["/reviews/import", `{"data":[{"product":"w","rating":5,${wide}}]}`]
    ] as const
    for (const [path, rawBody] of bodies) {
      expect(rawBody.length).toBeGreaterThan(900_000)
      const res = await server.request("POST", path, {
        token: key,
        rawBody,
        headers: { "content-type": "application/json" }
      })
      expect(res.status, res.text).toBe(400)
      expect(res.body.error.code).toBe("INVALID_REQUEST")
      expect(res.body.error.details.issues).toEqual([{
        path: "body",
        message: expect.stringContaining(`more than ${JSON_BODY_LIMITS.maxMembers} members`)
      }])
    }
    expect((await server.request("GET", "/products", { token: key })).body.data).toEqual([])
    expect((await server.request("GET", "/reviews", { token: key })).body.data).toEqual([])
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
