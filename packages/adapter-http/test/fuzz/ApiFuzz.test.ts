/**
 * Hostile input (docs/DECISIONS.md §1, §11): every endpoint of the admin and operator APIs, read from their HttpApi
 * definitions, gets Schema-generated requests mixed with hostile values, on the memory store and on PostgreSQL. No
 * answer may be a 5xx; every error is JSON in the envelope; every success is JSON; B's records are 404s to A.
 * Deterministic per seed (printed). CI sends 10,000 requests per store; set FUZZ_REQUESTS / FUZZ_SEED to change.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import type { StoreServices } from "@feedback/core"
import type { Layer } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, serverUrl, storeName } from "../../../adapter-postgres/test/TestDatabase.ts"
import { allEndpoints, samplesOf } from "./ApiShape.ts"
import { hostileImportFiles, hostileJson, isRaw } from "./HostileCorpus.ts"
import { type FuzzRequest } from "./FuzzRequests.ts"
import { problemsOf, runFuzz, send, toRequest } from "./FuzzRun.ts"
import { type FuzzServer, makeFuzzServer } from "./FuzzServer.ts"
import { allPermissions } from "../TestServer.ts"

const ci = process.env["CI"] === "true"
const seed = Number(process.env["FUZZ_SEED"] ?? 20_261_122)
const concurrency = 8
/** CI: 10,000 per store. Locally fewer, and fewer still on embedded PGlite (one connection, ~30 requests/s). */
const requestsFor = (embedded: boolean) =>
  Number(process.env["FUZZ_REQUESTS"] ?? (ci ? 10_000 : embedded ? 500 : 2_000))

const stores: ReadonlyArray<readonly [string, number, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory store", requestsFor(false), () => MemoryStoreLayer],
  [storeName, requestsFor(serverUrl === undefined), () => freshLayer(PgStoreLayer)]
]

const ms = (n: number) => `${n.toFixed(1)} ms`
const json = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" })

describe("API fuzz: the API as data", () => {
  it("finds every endpoint of both APIs, and samples each one's path, query and body from its schemas", () => {
    const endpoints = allEndpoints()
    expect(endpoints.map((e) => e.auth)).toContain("secretKey")
    expect(endpoints.map((e) => e.auth)).toContain("operator")
    expect(endpoints.map((e) => e.auth)).toContain("publishableKey")
    for (const endpoint of endpoints) {
      // A secured endpoint without a permission is a contract bug the middleware turns into a 500.
      if (endpoint.auth === "secretKey") expect(endpoint.permission, endpoint.name).toBeTypeOf("string")
      for (const schema of [endpoint.params, endpoint.query, endpoint.payload]) {
        if (schema !== undefined) expect(samplesOf(schema, seed, 2).length, endpoint.name).toBe(2)
      }
    }
  })
})

describe("API fuzz: the answer checks", () => {
  const endpoint = allEndpoints()[0]!
  const request = (crossOrganization = false): FuzzRequest => ({
    index: 0,
    endpoint,
    method: "GET",
    url: "/x",
    headers: {},
    body: undefined,
    labels: [],
    pathIds: [],
    crossOrganization,
    lowerCaseTwin: undefined
  })
  const answer = (status: number, text: string, contentType: string | null = "application/json") => ({
    status,
    contentType,
    text,
    ms: 0
  })
  const envelope = (details?: object) =>
    JSON.stringify({ error: { code: "INVALID_REQUEST", message: "m", ...(details === undefined ? {} : { details }) } })

  it("accepts the envelope and JSON successes", () => {
    expect(problemsOf(request(), answer(400, envelope({ issues: [{ path: "body", message: "m" }] })))).toEqual([])
    expect(problemsOf(request(), answer(404, envelope(), "application/json; charset=utf-8"))).toEqual([])
    expect(problemsOf(request(), answer(200, "{\"data\":[]}"))).toEqual([])
    expect(problemsOf(request(true), answer(404, envelope()))).toEqual([])
  })

  it("flags 5xx, other content types and bodies, long issue lists, internals, and B's records answered to A", () => {
    expect(problemsOf(request(), answer(500, envelope()))).toEqual(["server error"])
    expect(problemsOf(request(), answer(415, "Unsupported", "text/plain"))).toHaveLength(2)
    expect(problemsOf(request(), answer(400, "{\"_tag\":\"X\"}"))).toHaveLength(1)
    expect(problemsOf(request(), answer(400, envelope({ issues: Array.from({ length: 21 }, () => ({})) }))))
      .toHaveLength(1)
    expect(
      problemsOf(
        request(),
        answer(400, JSON.stringify({ error: { code: "X", message: "SqlError at\n    at f (x.ts:1:2)" } }))
      )
    ).toHaveLength(1)
    expect(problemsOf(request(), answer(200, "not json"))).toHaveLength(1)
    expect(problemsOf(request(true), answer(200, "{}"))).toHaveLength(1)
  })
})

describe.each(stores)("API fuzz, %s", (store, requests, makeStore) => {
  const endpoints = allEndpoints()
  let server: FuzzServer
  let slowest: ReadonlyArray<{ readonly request: FuzzRequest; readonly ms: number }> = []
  beforeAll(async () => {
    server = await makeFuzzServer(makeStore(), endpoints, seed)
  })
  afterAll(async () => {
    await server?.dispose()
  })

  it(`answers ${requests} generated and hostile requests with no 5xx and every error in the envelope`, async () => {
    // Event-loop delay is reported, not asserted: wall-clock figures on a shared 2-core runner are not a contract.
    const loop = monitorEventLoopDelay({ resolution: 5 })
    loop.enable()
    const result = await runFuzz({
      handler: server.handler,
      endpoints,
      ctx: server.ctx,
      seed,
      count: requests,
      concurrency,
      reseed: { every: 1_000, run: server.reseed }
    })
    loop.disable()
    slowest = result.slowest
    const statuses = [...result.statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(" ")
    const report = result.failures.report(server.keyNames)
    console.log([
      `fuzz ${store}: seed ${seed}, ${result.sent} requests over ${endpoints.length} endpoints in ${ms(result.ms)} ` +
      `(${
        (result.sent / (result.ms / 1000)).toFixed(0)
      }/s, concurrency ${concurrency}; ${result.unsendable} unsendable)`,
      `  statuses: ${statuses}`,
      `  targeted checks: ${result.probes.crossOrganization} of B's ids asked for by A, ${result.probes.upperCase} upper-case ids compared with lower-case`,
      `  2xx/sent by endpoint: ${[...result.byEndpoint].map(([e, t]) => `${e} ${t.succeeded}/${t.sent}`).join(", ")}`,
      `  event-loop delay: p50 ${ms(loop.percentile(50) / 1e6)}, p99 ${ms(loop.percentile(99) / 1e6)}, max ${
        ms(loop.max / 1e6)
      }`,
      `  slowest hostile requests: ${
        result.slowest.map((s) =>
          `${s.request.method} ${s.request.endpoint.path} ${ms(s.ms)} [${s.request.labels.join("; ")}]`
        ).join(" | ")
      }`,
      result.failures.size === 0 ? "  no failures" : `  ${result.failures.size} failure groups:\n${report}`
    ].join("\n"))
    expect(result.failures.size, `${result.failures.size} failure groups (seed ${seed}):\n${report}`).toBe(0)
  }, 600_000)

  it("answers each targeted hostile input with a 4xx in the envelope, and changes nothing", async () => {
    // An organization of its own: jobs the run queued for A may still be running, and would change A's records.
    const operator = (method: string, url: string, body?: unknown) =>
      send(
        server.handler,
        toRequest({ method, url, headers: json(server.ctx.keys.operator), body: JSON.stringify(body) })
      )
    const organization = JSON.parse((await operator("POST", "/operator/organizations", { name: "Targets" })).text)
    const key = JSON.parse(
      (await operator("POST", `/operator/organizations/${organization.id}/keys`, { permissions: allPermissions })).text
    ).secretKey as string
    const call = (method: string, url: string, body: string | undefined, contentType = "application/json") =>
      send(
        server.handler,
        toRequest({ method, url, headers: { authorization: `Bearer ${key}`, "content-type": contentType }, body })
      )
    // A review whose title is many short words: a marker over each would make it longer than a title may be.
    const words = "ok ".repeat(100).trim()
    expect((await call("POST", "/products", JSON.stringify({ slug: "p", title: "P" }))).status).toBe(201)
    const imported = await call(
      "POST",
      "/reviews/import",
      JSON.stringify({ data: [{ product: "p", rating: 4, title: words, body: words, customer: "c@example.com" }] })
    )
    expect(imported.status, imported.text).toBe(200)
    const review = JSON.parse(imported.text).imported[0].id as string
    const snapshot = async () =>
      Promise.all(
        ["/reviews?limit=250", "/products?limit=250", "/customers?limit=250", `/reviews/${review}`, "/organization"]
          .map(async (url) => (await call("GET", url, undefined)).text)
      )
    const before = await snapshot()

    const jsonText = (name: string) => {
      const value = hostileJson.find((h) => h.name === name)!.value
      return isRaw(value) ? value.rawJson : JSON.stringify(value)
    }
    const file = (name: string) => hostileImportFiles.find((h) => h.name === name)!.value
    const targets: ReadonlyArray<readonly [string, string, string, string | undefined, string?]> = [
      ...[
        ["reviews", "CSV cell of JSON nested 5,000 deep"],
        ["products", "CSV cell of 5,000-level arrays"],
        ["reviews", "NDJSON line nested 5,000 deep"],
        ["reviews", "NDJSON line with a 5,000-key metadata"]
      ].map(([type, name]) =>
        [name!, "POST", `/import-jobs?type=${type}`, file(name!).body, file(name!).contentType] as const
      ),
      [
        "a redaction into many short spans",
        "PATCH",
        `/reviews/${review}`,
        JSON.stringify({ title: words.replace(/ok/g, "[redacted]") })
      ],
      [
        "NUL in a product's metadata key",
        "POST",
        "/products",
        JSON.stringify({ slug: "n", title: "N", metadata: { "k\u0000": "v" } })
      ],
      [
        "NUL in a review's metadata key",
        "PATCH",
        `/reviews/${review}`,
        JSON.stringify({ metadata: { "k\u0000": "v" } })
      ],
      [
        "a wide object as metadata",
        "POST",
        "/products",
        `{"slug":"w","title":"W","metadata":${jsonText("60,000-key object")}}`
      ],
      ["a 96,000-key object as a body", "POST", "/products", jsonText("96,000-key object")],
      [
        "a 96,000-key object as an import row",
        "POST",
        "/reviews/import",
        `{"data":[${jsonText("96,000-key object")}]}`
      ],
      ["a wide array as import rows", "POST", "/reviews/import", `{"data":${jsonText("400,000-value array")}}`],
      ["a wide array as a body", "POST", "/products", jsonText("400,000-value array")]
    ]
    const wrong: Array<string> = []
    for (const [name, method, url, body, contentType] of targets) {
      const answer = await call(method, url, body, contentType)
      const problems = problemsOf(
        {
          index: -1,
          endpoint: allEndpoints()[0]!,
          method,
          url,
          headers: {},
          body,
          labels: [name],
          pathIds: [],
          crossOrganization: false,
          lowerCaseTwin: undefined
        },
        answer
      )
      if (answer.status < 400 || answer.status >= 500 || problems.length > 0) {
        wrong.push(`${name}: ${answer.status} ${answer.text.slice(0, 300)} ${problems.join("; ")}`)
      }
      if (name.includes("-key") && answer.status === 400) {
        // Refused by the body's shape before any parse, naming the wide object (docs/DECISIONS.md §79).
        expect(answer.text, name).toMatch(/more than 1000 members/)
      }
      if (name.startsWith("NUL") && answer.status === 400) {
        // The message names the NUL, not a field the schema does not know.
        expect(answer.text, name).toMatch(/NUL/)
      }
    }
    expect(wrong).toEqual([])
    expect(await snapshot()).toEqual(before)
  }, 120_000)

  it("answers GET /health while each of the slowest hostile requests is in flight", async () => {
    const rows: Array<string> = []
    for (const { request } of slowest) {
      let done = false
      const hostile = send(server.handler, toRequest(request)).finally(() => (done = true))
      // /health arrives as a socket read would, in a later macrotask: its latency is how long the hostile request
      // keeps the event loop from anything else.
      const asked = performance.now()
      await new Promise((resolve) => setImmediate(resolve))
      const health = await send(server.handler, new Request("http://fuzz.test/health"))
      const latency = performance.now() - asked
      const inFlight = !done
      const answer = await hostile
      expect(health.status).toBe(200)
      expect(JSON.parse(health.text)).toEqual({ status: "ok" })
      rows.push(
        `  /health answered in ${ms(latency)}, ${
          inFlight ? "while" : "after"
        } ${request.method} ${request.endpoint.path} ` +
          `(${ms(answer.ms)}, ${answer.status}) [${request.labels.join("; ")}]`
      )
    }
    console.log(`fuzz ${store}: GET /health beside the slowest hostile requests\n${rows.join("\n")}`)
  }, 120_000)
})
