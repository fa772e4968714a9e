/**
 * The refusal gate's revalidations (`storefront/RevalidationGate.ts`, docs/DECISIONS.md §71) through a real
 * `node:http` server on memory, embedded PGlite and (with TEST_DATABASE_URL) a PostgreSQL server, and through an
 * embedded web handler: a storefront read whose `If-None-Match` names its current tag is answered 304 before the
 * framework with the full path's headers, log line and metrics; any other tag goes the full path with the gate's
 * spend handed on, so every request is charged exactly once; a request the gate cannot decode is left alone.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Kernel, type StoreServices } from "@feedback/core"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshEmbeddedTarget, freshLayer, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { makeWebHandler, untracedRequests } from "../src/server/ApiServer.ts"
import { sampleOf } from "./PrometheusText.ts"
import { type GatedServer, type RawAnswer, startGatedServer } from "./GatedServer.ts"
import { plainCallVia } from "./Http.ts"
import { allPermissions, OPERATOR_TOKEN } from "./TestServer.ts"

type Store = Layer.Layer<StoreServices, unknown>
const stores: ReadonlyArray<readonly [string, () => Store]> = [
  ["memory", () => MemoryStoreLayer],
  ["embedded PGlite", () => Layer.unwrap(Effect.map(freshEmbeddedTarget, (target) => PgStoreLayer(target)))],
  ...(serverUrl === undefined ? [] : [["postgres server", () => freshLayer((target) => PgStoreLayer(target))] as const])
]

/** Headers that move with the bucket's level: compared on their own (`remaining`). */
const levelled = (headers: Record<string, unknown>) => {
  const { date, "x-request-id": requestId, "x-ratelimit-remaining": _, ratelimit, ...rest } = headers
  expect(requestId).toMatch(/^req_/)
  return { ...rest, ratelimit: String(ratelimit).replace(/;r=\d+(;t=\d+)?$/, ""), date: date !== undefined }
}

describe.each(stores)("storefront revalidations at the gate on %s", (_name, makeStore) => {
  let gated: GatedServer
  /** Revalidations the gate took, and of those the ones it handed on to the full path. */
  let taken = 0
  let handedOn = 0
  let publishable = ""
  let secret = ""

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    gated.send(method, path, headers, body)
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const answer = await send(method, path, {
      authorization: `Bearer ${token}`,
      "content-type": "application/json"
    }, body === undefined ? undefined : JSON.stringify(body))
    expect(answer.status, answer.body).toBeLessThan(300)
    return JSON.parse(answer.body)
  }
  const read = (path: string, extra: Record<string, string> = {}) =>
    send("GET", path, { "x-publishable-key": publishable, ...extra })
  // `Content-Length: 0` on a GET is allowed, and the gate leaves every request that declares a body to the full path.
  const readPastTheGate = (path: string, extra: Record<string, string> = {}) =>
    read(path, { ...extra, "content-length": "0" })
  const remaining = (answer: RawAnswer) => Number(answer.headers["x-ratelimit-remaining"])
  let organizationId = ""
  /** A publishable key of its own: its own bucket, of the plan's size (set once). */
  const freshKey = async () =>
    (await call("POST", `/operator/organizations/${organizationId}/publishable-keys`, OPERATOR_TOKEN, {})).key as string
  const lineOf = (answer: RawAnswer) => {
    const found = gated.lines.map((l) => JSON.parse(l)).find((l) =>
      l.requestId === answer.headers["x-request-id"] && typeof l.status === "number"
    )
    expect(found).toBeDefined()
    const { ms: _, requestId: __, time: ___, ...rest } = found
    return rest
  }

  beforeAll(async () => {
    gated = await startGatedServer(makeStore(), (gate) => ({
      ...gate,
      revalidate: (req, res, next) => {
        const took = gate.revalidate(req, res, () => {
          handedOn++
          next()
        })
        if (took) taken++
        return took
      }
    }))
    const organization = await call("POST", "/operator/organizations", OPERATOR_TOKEN, { name: "Revalidations" })
    organizationId = organization.id
    await call("PATCH", `/operator/organizations/${organizationId}`, OPERATOR_TOKEN, { storefrontReadsPerMinute: 5 })
    secret = (await call("POST", `/operator/organizations/${organizationId}/keys`, OPERATOR_TOKEN, {
      permissions: allPermissions
    })).secretKey
    await call("POST", "/products", secret, { slug: "mug", title: "Mug" })
    await call("POST", "/reviews/import", secret, { data: [{ product: "mug", rating: 5, title: "Great" }] })
  }, 60_000)
  afterAll(async () => {
    await gated?.close()
  })

  it("answers a matching tag itself with the full path's headers, log line and metrics, charged once", async () => {
    const paths = [
      "/storefront/ratings?products=mug",
      "/storefront/products/mug/reviews?limit=5&sort=-rating",
      "/storefront/products/mug/questions"
    ]
    const metricOf = async (route: string) =>
      sampleOf((await send("GET", "/metrics")).body, "http_server_requests_total", {
        method: "GET",
        route,
        status: "304"
      }) ?? 0
    for (const path of paths) {
      publishable = await freshKey()
      const first = await read(path)
      expect(first.status, first.body).toBe(200)
      const etag = String(first.headers["etag"])
      const route = String(lineOf(first).route)
      const answeredBefore = await metricOf(route)
      const before = { taken, handedOn }
      // The full path's 304, then the gate's: the same headers, log line and metrics, one token each.
      const full = await readPastTheGate(path, { "if-none-match": etag })
      const early = await read(path, { "if-none-match": etag })
      expect([full.status, early.status]).toEqual([304, 304])
      expect({ taken, handedOn }).toEqual({ taken: before.taken + 1, handedOn: before.handedOn })
      expect(levelled(early.headers)).toEqual(levelled(full.headers))
      expect(early.headers["etag"]).toBe(etag)
      expect(early.body).toBe("")
      expect([remaining(first), remaining(full), remaining(early)]).toEqual([4, 3, 2])
      expect(lineOf(early)).toEqual(lineOf(full))
      expect(await metricOf(route)).toBe(answeredBefore + 2)
    }
  })

  it("hands another tag on to the full path spent: one token, the full answer, and a refusal when spent", async () => {
    publishable = await freshKey()
    const path = "/storefront/products/mug/reviews?limit=5"
    const first = await read(path)
    const before = { taken, handedOn }
    const stale = await read(path, { "if-none-match": "\"stale\", W/\"older\"" })
    expect({ taken, handedOn }).toEqual({ taken: before.taken + 1, handedOn: before.handedOn + 1 })
    expect([stale.status, stale.headers["etag"], stale.body]).toEqual([200, first.headers["etag"], first.body])
    expect([remaining(first), remaining(stale)]).toEqual([4, 3])
    // A write moves the tag: the old one is handed on too, and the answer is new.
    await call("POST", "/reviews/import", secret, { data: [{ product: "mug", rating: 1, title: "Cracked" }] })
    const moved = await read(path, { "if-none-match": String(first.headers["etag"]) })
    expect([moved.status, remaining(moved)]).toEqual([200, 2])
    expect(moved.headers["etag"]).not.toBe(first.headers["etag"])
    expect(JSON.parse(moved.body).data).toHaveLength(2)
    const current = String(moved.headers["etag"])
    expect([(await read(path, { "if-none-match": current })).status, handedOn]).toEqual([304, before.handedOn + 2])
    expect(remaining(await read(path))).toBe(0)
    // Spent: the gate's refusal is handed on and answered by the full path, exactly as its own refusal.
    const refused = await read(path, { "if-none-match": current })
    const reference = await readPastTheGate(path, { "if-none-match": current })
    expect([refused.status, reference.status]).toEqual([429, 429])
    expect(levelled(refused.headers)).toEqual(levelled(reference.headers))
    expect(refused.body).toBe(reference.body)
  })

  it("leaves what it cannot decode or answer to the full path, untouched and charged once", async () => {
    publishable = await freshKey()
    const first = await read("/storefront/ratings?products=mug")
    const etag = String(first.headers["etag"])
    const before = { taken, handedOn }
    const answers = [
      await read("/storefront/ratings?products=mug&products=mug", { "if-none-match": etag }),
      await read("/storefront/ratings?products=mug&extra=1", { "if-none-match": etag }),
      await read("/storefront/products/mug/reviews?limit=0", { "if-none-match": etag }),
      await read("/storefront/ratings?products=mug", { "if-none-match": etag, origin: "https://elsewhere.example" })
    ]
    expect(answers.map((a) => [a.status, remaining(a)])).toEqual([[400, 3], [400, 2], [400, 1], [304, 0]])
    // The key in the query as well as in the header: the full path chooses.
    publishable = await freshKey()
    const both = await read(`/storefront/ratings?products=mug&apiPublishableKey=${publishable}`, {
      "if-none-match": etag
    })
    expect([both.status, remaining(both)]).toEqual([304, 4])
    // `*` names no tag to compare before the read: the full path reads first.
    const any = await read("/storefront/ratings?products=mug", { "if-none-match": "*" })
    expect([any.status, any.headers["etag"], remaining(any)]).toEqual([304, etag, 3])
    expect({ taken, handedOn }).toEqual(before)
  })
})

describe("storefront revalidations at an embedded web handler's gate", () => {
  it("answers a matching tag with the full path's 304, and another tag with the full answer, each charged once", async () => {
    const web = makeWebHandler(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7), {
      workers: false,
      operatorToken: Redacted.make(OPERATOR_TOKEN)
    })
    try {
      const call = plainCallVia(web.handler, "http://embedded")
      const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` }
      const org = JSON.parse((await call("POST", "/operator/organizations", operator, { name: "Embedded" })).text)
      await call("PATCH", `/operator/organizations/${org.id}`, operator, { storefrontReadsPerMinute: 5 })
      const publishable = JSON.parse(
        (await call("POST", `/operator/organizations/${org.id}/publishable-keys`, operator, {})).text
      ).key
      const path = "/storefront/ratings?products=mug"
      const headers = { "x-publishable-key": publishable }
      // A request passed with its own context always takes the full path: the reference answer.
      const fullPath = plainCallVia(web.handler, "http://embedded", untracedRequests)
      const full = (extra: Record<string, string>) => fullPath("GET", path, { ...headers, ...extra })
      const first = await call("GET", path, headers)
      const etag = first.headers["etag"]!
      const reference = await full({ "if-none-match": etag })
      const early = await call("GET", path, { ...headers, "if-none-match": etag })
      expect([reference.status, early.status, early.text]).toEqual([304, 304, ""])
      expect(levelled(early.headers)).toEqual(levelled(reference.headers))
      const stale = await call("GET", path, { ...headers, "if-none-match": "\"stale\"" })
      expect([stale.status, stale.text, stale.headers["etag"]]).toEqual([200, first.text, etag])
      expect([first, reference, early, stale].map((a) => Number(a.headers["x-ratelimit-remaining"]))).toEqual([
        4,
        3,
        2,
        1
      ])
    } finally {
      await web.dispose()
    }
  })
})
