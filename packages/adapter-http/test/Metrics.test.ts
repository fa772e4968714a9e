/**
 * `GET /metrics` (docs/DECISIONS.md §13, §19) in process, on memory and on PostgreSQL: request counts and latency
 * histograms by method, route pattern and status; rate-limit decisions; webhook deliveries by outcome; pool usage;
 * the bearer token when one is configured. Metrics live in the process, so every check compares before and after.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import type { StoreServices } from "@feedback/core"
import { type Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, storeName } from "../../adapter-postgres/test/TestDatabase.ts"
import { routeTableOf } from "../src/server/RouteTable.ts"
import { AdminApi } from "@feedback/client/effect"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { sampleOf } from "./PrometheusText.ts"
import { eventually, type Receiver, startReceiver } from "./WebhookReceiver.ts"

type Store = Layer.Layer<StoreServices, unknown>
const stores: ReadonlyArray<readonly [string, () => Store]> = [
  ["memory", () => MemoryStoreLayer],
  [storeName, () => freshLayer((target) => PgStoreLayer(target))]
]

const METRICS_TOKEN = "metrics-token-0123456789abcdef0123"

describe.each(stores)("GET /metrics on %s", (name, makeStore) => {
  let server: TestServer
  let receiver: Receiver
  beforeAll(async () => {
    receiver = await startReceiver()
    server = makeTestServer(makeStore(), {
      metricsToken: Redacted.make(METRICS_TOKEN),
      webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: 2_000, dispatcher: { pollIntervalMs: 20 } }
    })
  })
  afterAll(async () => {
    await server.dispose()
    await receiver.close()
  })
  const scrape = async () => {
    const res = await server.request("GET", "/metrics", { token: METRICS_TOKEN })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    return res.text
  }

  it("requires the metrics token as a bearer token when one is configured", async () => {
    for (const token of [undefined, "wrong", METRICS_TOKEN + "x", METRICS_TOKEN.slice(1)]) {
      const res = await server.request("GET", "/metrics", { token })
      expect(res.status).toBe(401)
      expect(res.body.error.code).toBe("UNAUTHORIZED")
      expect(res.headers.get("www-authenticate")).toContain("Bearer")
      expect(res.text).not.toContain("http_server_requests_total")
    }
    // An admin API key is not a metrics token.
    const { key } = await server.provision()
    expect((await server.request("GET", "/metrics", { token: key })).status).toBe(401)
    expect(await scrape()).toContain("# TYPE http_server_requests_total counter")
  })

  it("counts requests and their latency by method, route pattern and status", async () => {
    const { key } = await server.provision()
    const labels = (route: string, status: string, method = "GET") => ({ method, route, status })
    const before = await scrape()
    const missing = "/reviews/00000000-0000-4000-8000-000000000000"
    for (let i = 0; i < 3; i++) expect((await server.request("GET", missing, { token: key })).status).toBe(404)
    expect((await server.request("GET", "/reviews", { token: key })).status).toBe(200)
    expect((await server.request("GET", "/no/such/route")).status).toBe(404)
    expect((await server.request("DELETE", "/health")).status).toBe(405)
    expect((await server.request("BREW", "/health")).status).toBe(405)
    const after = await scrape()
    const delta = (metric: string, l: Record<string, string>) =>
      (sampleOf(after, metric, l) ?? 0) - (sampleOf(before, metric, l) ?? 0)
    expect(delta("http_server_requests_total", labels("/reviews/:id", "404"))).toBe(3)
    expect(delta("http_server_requests_total", labels("/reviews", "200"))).toBe(1)
    expect(delta("http_server_requests_total", labels("unmatched", "404"))).toBe(1)
    expect(delta("http_server_requests_total", labels("/health", "405", "DELETE"))).toBe(1)
    expect(delta("http_server_requests_total", labels("/health", "405", "other"))).toBe(1)
    // The concrete path never becomes a label.
    expect(after).not.toContain("00000000-0000-4000-8000-000000000000")
    expect(delta("http_server_request_duration_seconds_count", labels("/reviews/:id", "404"))).toBe(3)
    expect(
      sampleOf(after, "http_server_request_duration_seconds_bucket", { ...labels("/reviews/:id", "404"), le: "+Inf" })
    ).toBeGreaterThanOrEqual(3)
    expect(sampleOf(after, "http_server_request_duration_seconds_sum", labels("/reviews/:id", "404"))).toBeGreaterThan(
      0
    )
  })

  it("counts rate-limit decisions, admitted and refused", async () => {
    const { key } = await server.provision({ apiRequestsPerMinute: 2 })
    const before = await scrape()
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await server.request("GET", "/organization", { token: key })).status)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0)
    const after = await scrape()
    const delta = (decision: string) =>
      (sampleOf(after, "feedback_rate_limit_decisions_total", { decision }) ?? 0) -
      (sampleOf(before, "feedback_rate_limit_decisions_total", { decision }) ?? 0)
    expect(delta("admitted")).toBe(statuses.filter((s) => s === 200).length)
    expect(delta("refused")).toBe(statuses.filter((s) => s === 429).length)
  })

  it("counts webhook deliveries by outcome", async () => {
    const before = await scrape()
    const outcomes = [["/ok", "delivered"], ["/fail", "http_error"]] as const
    for (const [path] of outcomes) {
      // One organization each: a webhook subscribed to webhook.created also hears of the next one's creation.
      const { key } = await server.provision()
      const created = await server.request("POST", "/webhooks", {
        token: key,
        body: { url: receiver.url(path), events: ["webhook.created"] }
      })
      expect(created.status).toBe(201)
      await eventually(
        async () => {
          const log = await server.request("GET", `/webhooks/${created.body.id}/events`, { token: key })
          return log.body.data[0] !== undefined && log.body.data[0].status !== "pending" ? true : undefined
        },
        5_000,
        `the delivery to ${path}`
      )
    }
    const after = await scrape()
    for (const [, outcome] of outcomes) {
      const delta = (sampleOf(after, "feedback_webhook_deliveries_total", { outcome }) ?? 0) -
        (sampleOf(before, "feedback_webhook_deliveries_total", { outcome }) ?? 0)
      expect(delta, outcome).toBe(1)
    }
    expect(sampleOf(after, "feedback_webhook_deliveries_total", { outcome: "timeout" })).toBeTypeOf("number")
  })

  it("reports the connection pool of a database store", async () => {
    const text = await scrape()
    if (name === "memory") {
      expect(text).not.toContain("feedback_db_pool_connections")
      return
    }
    const max = sampleOf(text, "feedback_db_pool_connections", { state: "max" })
    expect(max).toBeGreaterThanOrEqual(1)
    if (max! > 1) {
      // A PostgreSQL server: this pool's own connections, the scrape's among them.
      const open = sampleOf(text, "feedback_db_pool_connections", { state: "open" })!
      expect(open).toBeGreaterThanOrEqual(1)
      expect(open).toBeLessThanOrEqual(max!)
      expect(sampleOf(text, "feedback_db_pool_connections", { state: "busy" })).toBeGreaterThanOrEqual(0)
    }
  })
})

describe("GET /metrics without a token, and switched off", () => {
  it("is open without METRICS_TOKEN, and absent with metrics: false", async () => {
    const open = makeTestServer()
    const off = makeTestServer(undefined, { metrics: false })
    try {
      expect((await open.request("GET", "/metrics")).status).toBe(200)
      expect((await off.request("GET", "/metrics")).status).toBe(404)
    } finally {
      await open.dispose()
      await off.dispose()
    }
  })
})

describe("route patterns", () => {
  const routes = routeTableOf([AdminApi], [["GET", "/docs"]])
  it("names the pattern that serves a request, static before parameterized", () => {
    expect(routes.routeOf("GET", "/reviews")).toBe("/reviews")
    expect(routes.routeOf("GET", "/reviews/")).toBe("/reviews")
    expect(routes.routeOf("GET", "/reviews/0190a0b0-0000-7000-8000-000000000000")).toBe("/reviews/:id")
    expect(routes.routeOf("POST", "/reviews/import")).toBe("/reviews/import")
    expect(routes.routeOf("GET", "/docs")).toBe("/docs")
    expect(routes.routeOf("PUT", "/organization")).toBe("/organization")
    expect(routes.routeOf("GET", "/nowhere")).toBeUndefined()
    expect(routes.routeOf("GET", "/reviews/a/b/c")).toBeUndefined()
  })
})
