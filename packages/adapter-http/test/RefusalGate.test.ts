/**
 * The refusal gate (`RefusalGate.ts`, docs/DECISIONS.md §31) through a real `node:http` server: a refusal the process
 * already knows is answered before the framework, with the full path's status, headers, body, access-log line and
 * metrics; anything it cannot know (a revoked key, a raised plan, a request with a body, an odd path) goes the full
 * path. On memory the levels are the process's own; on a PostgreSQL server the bound comes from the store's first
 * refusal (`LocalRefusals`) and keys are kept while `LISTEN/NOTIFY` hears every change.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Kernel, type StoreServices } from "@feedback/core"
import { Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, serverUrl, storeName } from "../../adapter-postgres/test/TestDatabase.ts"
import { makeWebHandler, untracedRequests } from "../src/server/ApiServer.ts"
import { sampleOf } from "./PrometheusText.ts"
import { type GatedServer, type RawAnswer, startGatedServer } from "./GatedServer.ts"
import { plainCallVia } from "./Http.ts"
import { OPERATOR_TOKEN } from "./TestServer.ts"

type Store = Layer.Layer<StoreServices, unknown>
const stores: ReadonlyArray<readonly [string, () => Store, boolean]> = [
  ["memory", () => MemoryStoreLayer, true],
  [
    serverUrl === undefined ? `${storeName} (skipped: set TEST_DATABASE_URL to run on a PostgreSQL server)` : storeName,
    () => freshLayer((target) => PgStoreLayer(target)),
    serverUrl !== undefined
  ]
]

describe.each(stores)("the refusal gate on %s", (_name, makeStore, runs) => {
  let server: GatedServer
  let gated = 0

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    server.send(method, path, headers, body)
  const operator = async (method: string, path: string, body: unknown) => {
    const answer = await send(method, path, {
      authorization: `Bearer ${OPERATOR_TOKEN}`,
      "content-type": "application/json"
    }, JSON.stringify(body))
    expect(answer.status, answer.body).toBeLessThan(300)
    return JSON.parse(answer.body)
  }
  const provision = async (apiRequestsPerMinute: number) => {
    const organization = await operator("POST", "/operator/organizations", { name: "Gate", apiRequestsPerMinute })
    const key = await operator("POST", `/operator/organizations/${organization.id}/keys`, {
      permissions: ["settings:read", "reviews:read"]
    })
    return { organizationId: organization.id as string, key: key.secretKey as string, keyId: key.id as string }
  }
  const get = (path: string, key: string, extra: Record<string, string> = {}) =>
    send("GET", path, { authorization: `Bearer ${key}`, ...extra })
  // `Content-Length: 0` on a GET is allowed, and the gate leaves every request that declares a body to the full path.
  const getPastTheGate = (path: string, key: string) => get(path, key, { "content-length": "0" })
  const metric = async (name: string, labels: Record<string, string>) =>
    sampleOf((await send("GET", "/metrics")).body, name, labels) ?? 0
  const accessLine = (requestId: string | string[] | undefined) => {
    const line = server.lines.map((l) => JSON.parse(l)).find((l) =>
      l.requestId === requestId && typeof l.status === "number"
    )
    expect(line).toBeDefined()
    const { ms, requestId: _, time, ...rest } = line
    expect(typeof ms).toBe("number")
    expect(typeof time).toBe("string")
    return rest
  }
  const comparable = (answer: RawAnswer) => {
    const { date, "x-request-id": requestId, ...headers } = answer.headers
    expect(date).toBeDefined()
    expect(requestId).toMatch(/^req_/)
    return { status: answer.status, headers, body: JSON.parse(answer.body) }
  }

  beforeAll(async () => {
    if (!runs) return
    // Counts the requests the gate answered, around the gate the handler installed.
    server = await startGatedServer(makeStore(), (gate) => ({
      ...gate,
      refuse: (req, res) => {
        const answered = gate.refuse(req, res)
        if (answered) gated++
        return answered
      }
    }))
  }, 60_000)
  afterAll(async () => {
    if (!runs) return
    await server.close()
  })

  it.skipIf(!runs)("answers a known refusal itself, exactly as the full path does", async () => {
    const { key } = await provision(1)
    expect((await get("/organization", key)).status).toBe(200)
    // The full path refuses first (on PostgreSQL that is where the bound is learned)…
    const full = await getPastTheGate("/organization", key)
    expect(full.status).toBe(429)
    const refusedBefore = await metric("feedback_rate_limit_decisions_total", { decision: "refused" })
    const answeredBefore = await metric("http_server_requests_total", {
      method: "GET",
      route: "/organization",
      status: "429"
    })
    const before = gated
    // …then the gate answers, with the same status, headers and body.
    const early = await get("/organization", key)
    expect(gated).toBe(before + 1)
    expect(comparable(early)).toEqual(comparable(full))
    expect(early.headers["retry-after"]).toBeDefined()
    // The same access-log line (but for the request id, time and duration) and the same metrics.
    expect(accessLine(early.headers["x-request-id"])).toEqual(accessLine(full.headers["x-request-id"]))
    expect(await metric("feedback_rate_limit_decisions_total", { decision: "refused" })).toBe(refusedBefore + 1)
    expect(await metric("http_server_requests_total", { method: "GET", route: "/organization", status: "429" })).toBe(
      answeredBefore + 1
    )
    // A caller's own request id is kept, as on the full path.
    expect((await get("/organization", key, { "x-request-id": "client-id.1" })).headers["x-request-id"]).toBe(
      "client-id.1"
    )
  })

  it.skipIf(!runs)(
    "charges parameterized routes by their own cost and leaves unknown paths and methods alone",
    async () => {
      const { key } = await provision(1)
      expect((await get("/organization", key)).status).toBe(200)
      await getPastTheGate("/organization", key)
      const before = gated
      const review = await get("/reviews/00000000-0000-7000-8000-000000000000", key)
      expect(review.status).toBe(429)
      expect(gated).toBe(before + 1)
      expect(comparable(review)).toEqual(
        comparable(await getPastTheGate("/reviews/00000000-0000-7000-8000-000000000000", key))
      )
      // Not the gate's to answer: an unknown path (404), a trailing slash or an encoded character, a HEAD, another
      // scheme spelling, and the operator API; each still gets what the full path gives.
      const left = [
        await get("/no-such-route", key),
        await get("/organization/", key),
        await get("/reviews/%30", key),
        await send("HEAD", "/organization", { authorization: `Bearer ${key}` }),
        await send("GET", "/organization", { authorization: `bearer ${key}` })
      ]
      expect(left.map((a) => a.status)).toEqual([404, 429, 429, 429, 429])
      expect(gated).toBe(before + 1)
    }
  )

  it.skipIf(!runs)(
    "answers a storefront read's known refusal as its full path does, and no request with an Origin",
    async () => {
      const { organizationId } = await provision(1_000)
      await operator("PATCH", `/operator/organizations/${organizationId}`, { storefrontReadsPerMinute: 1 })
      const publishable = (await operator("POST", `/operator/organizations/${organizationId}/publishable-keys`, {})).key
      const path = "/storefront/ratings?products=mug"
      const read = (extra: Record<string, string> = {}) =>
        send("GET", path, { "x-publishable-key": publishable, ...extra })
      expect((await read()).status).toBe(200)
      const full = await read({ "content-length": "0" })
      expect(full.status).toBe(429)
      const before = gated
      const early = await read()
      expect(gated).toBe(before + 1)
      expect(comparable(early)).toEqual(comparable(full))
      expect(early.headers["vary"]).toBe("Origin")
      expect(accessLine(early.headers["x-request-id"])).toEqual(accessLine(full.headers["x-request-id"]))
      // The key in the query is the same caller; an Origin needs the organization's sites, so the full path answers.
      const byQuery = await send("GET", `${path}&apiPublishableKey=${publishable}`)
      expect(byQuery.status).toBe(429)
      expect(gated).toBe(before + 2)
      const withOrigin = await read({ origin: "https://elsewhere.example" })
      expect([withOrigin.status, gated]).toEqual([429, before + 2])
      expect(comparable(withOrigin)).toEqual(comparable(full))
    }
  )

  it.skipIf(!runs)("never answers for a revoked key or a raised plan: the change is heard at once", async () => {
    const { key, keyId, organizationId } = await provision(1)
    expect((await get("/organization", key)).status).toBe(200)
    await getPastTheGate("/organization", key)
    expect((await get("/organization", key)).status).toBe(429)
    const before = gated
    await operator("PATCH", `/operator/organizations/${organizationId}`, { apiRequestsPerMinute: 6_000 })
    // The emptied bucket refills at the new rate: 100 tokens a second.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await get("/organization", key)).status).toBe(200)
    await operator("DELETE", `/operator/organizations/${organizationId}/keys/${keyId}`, undefined)
    expect((await get("/organization", key)).status).toBe(401)
    expect(gated).toBe(before)
  })
})

describe("the refusal gate of an embedded web handler", () => {
  it("answers a known refusal with the full path's status, headers and body", async () => {
    const web = makeWebHandler(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7), {
      workers: false,
      operatorToken: Redacted.make(OPERATOR_TOKEN)
    })
    try {
      const call = plainCallVia(web.handler, "http://embedded")
      const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` }
      const org = JSON.parse((await call("POST", "/operator/organizations", operator, { name: "Embedded" })).text)
      await call("PATCH", `/operator/organizations/${org.id}`, operator, {
        apiRequestsPerMinute: 1,
        storefrontReadsPerMinute: 1
      })
      const key = JSON.parse(
        (await call("POST", `/operator/organizations/${org.id}/keys`, operator, { permissions: ["settings:read"] }))
          .text
      ).secretKey
      const publishable = JSON.parse(
        (await call("POST", `/operator/organizations/${org.id}/publishable-keys`, operator, {})).text
      ).key
      // A request passed with its own context always takes the full path: the reference answer.
      const fullPath = plainCallVia(web.handler, "http://embedded", untracedRequests)
      const full = (path: string, headers: Record<string, string>) => fullPath("GET", path, headers)
      const comparable = (
        { headers: { "x-request-id": id, ...headers }, status, text }: Awaited<ReturnType<typeof full>>
      ) => {
        expect(id).toMatch(/^req_/)
        return { status, headers, body: JSON.parse(text) }
      }
      for (
        const [path, headers] of [
          ["/organization", { authorization: `Bearer ${key}` }],
          ["/storefront/ratings?products=mug", { "x-publishable-key": publishable }]
        ] as const
      ) {
        expect((await call("GET", path, headers)).status).toBe(200)
        const reference = await full(path, headers)
        expect(reference.status).toBe(429)
        expect(comparable(await call("GET", path, headers))).toEqual(comparable(reference))
      }
    } finally {
      await web.dispose()
    }
  })
})
