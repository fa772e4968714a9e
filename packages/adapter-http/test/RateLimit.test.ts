/**
 * The rate limit as a client sees it (spec: Limits; docs/DECISIONS.md §3), through the real routes, middleware and error
 * envelope of the in-process server, once over the memory store and once over PostgreSQL (a fresh database on
 * TEST_DATABASE_URL's server, else a fresh embedded PGlite). Time is a `ManualClock`: it stands still unless a test
 * moves it, so every count and every `Retry-After` below is exact.
 *
 * A test-only
 * HttpApi declares two routes from the spec's cost table, `POST /wishlists/import` (10) and
 * `PATCH /customers/bulk-update` (5), behind the same `SecretKeyAuth` middleware, and counts what they apply.
 */
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Idempotency, Organizations, type StoreServices } from "@feedback/core"
import { Effect, Layer, Schema } from "effect"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freshLayer, storeName } from "../../adapter-postgres/test/TestDatabase.ts"
import { RequestValidation, requires, SecretKeyAuth } from "@feedback/client/effect"
import { RequestValidationLive } from "../src/server/RequestValidationLive.ts"
import { SecretKeyAuthLive } from "../src/server/SecretKeyAuthLive.ts"
import { makeManualClock, type ManualClock } from "./ManualClock.ts"
import { makeTestServer, type TestResponse, type TestServer } from "./TestServer.ts"

// --- a test-only API with the expensive routes of the spec's cost table ------------------------------------------

class CostlyGroup extends HttpApiGroup.make("costly")
  .add(
    HttpApiEndpoint.post("import", "/wishlists/import", {
      payload: Schema.Struct({ data: Schema.Array(Schema.Struct({ email: Schema.String })) }),
      success: Schema.Struct({ imported: Schema.Number })
    }).pipe(requires("customers:write")),
    HttpApiEndpoint.patch("bulkUpdate", "/customers/bulk-update", {
      payload: Schema.Struct({ emailOptOut: Schema.Boolean }),
      success: Schema.Struct({ count: Schema.Number })
    }).pipe(requires("customers:write"))
  )
  .middleware(SecretKeyAuth)
{}

class CostlyApi extends HttpApi.make("costly-test-api")
  .add(CostlyGroup)
  .middleware(RequestValidation)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
{}

/** What the test routes applied: a refused request must leave these untouched. */
const applied = { imported: 0, bulkUpdates: 0 }

const CostlyRoutes = HttpApiBuilder.layer(CostlyApi).pipe(
  Layer.provide(HttpApiBuilder.group(CostlyApi, "costly", (handlers) =>
    handlers
      .handle("import", ({ payload }) =>
        Effect.sync(() => {
          applied.imported += payload.data.length
          return { imported: payload.data.length }
        }))
      .handle("bulkUpdate", () =>
        Effect.sync(() => {
          applied.bulkUpdates += 1
          return { count: 0 }
        })))),
  Layer.provide([SecretKeyAuthLive, RequestValidationLive]),
  Layer.provide([Organizations.Organizations.layer, Idempotency.Idempotency.layer])
)

// --- helpers -------------------------------------------------------------------------------------------------------

const rateHeaders = (r: TestResponse) => ({
  cost: r.headers.get("x-rate-limit-cost"),
  limit: r.headers.get("X-RateLimit-Limit"),
  remaining: r.headers.get("X-RateLimit-Remaining"),
  retryAfter: r.headers.get("Retry-After")
})

/** `n` calls, `concurrency` in flight at a time, answers in call order. */
const inParallel = async <A>(n: number, concurrency: number, f: (i: number) => Promise<A>): Promise<Array<A>> => {
  const out = new Array<A>(n)
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      out[i] = await f(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker))
  return out
}

const assertTooManyRequests = (
  r: TestResponse,
  expected: { cost: number; limit: number; remaining: number; retryAfter: number | undefined }
) => {
  assert.strictEqual(r.status, 429, r.text)
  assert.strictEqual(r.headers.get("content-type"), "application/json")
  assert.strictEqual(r.body.error.code, "TOO_MANY_REQUESTS")
  assert.typeOf(r.body.error.message, "string")
  assert.deepStrictEqual(rateHeaders(r), {
    cost: String(expected.cost),
    limit: String(expected.limit),
    remaining: String(expected.remaining),
    retryAfter: expected.retryAfter === undefined ? null : String(expected.retryAfter)
  })
}

// --- the suite, over each store --------------------------------------------------------------------------------------

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory store", () => MemoryStoreLayer],
  [storeName, () => freshLayer(PgStoreLayer)]
]

describe.each(stores)("rate limiting over HTTP, %s", (_, makeStore) => {
  // One server per store (an embedded PGlite takes seconds to start); every test works on fresh organizations,
  // whose buckets are independent, and only ever moves the shared clock forward.
  let server: TestServer
  let clock: ManualClock
  beforeAll(() => {
    clock = makeManualClock()
    server = makeTestServer(makeStore(), { clock, routes: CostlyRoutes })
  })
  afterAll(async () => {
    await server.dispose()
  })
  const start = () => server

  it("a burst of 600 cost-1 requests succeeds; the 601st is 429 with Retry-After: 1; refill is 10 per second", async () => {
    const s = start()
    const { key } = await s.provision()
    const burst = await inParallel(600, 25, () => s.request("GET", "/organization", { token: key }))
    for (const r of burst) {
      assert.strictEqual(r.status, 200, r.text)
      assert.strictEqual(r.headers.get("x-rate-limit-cost"), "1")
      assert.strictEqual(r.headers.get("x-ratelimit-limit"), "600")
    }
    // Each admission saw its own level: the remaining counts are 599..0, once each.
    assert.deepStrictEqual(
      burst.map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b),
      Array.from({ length: 600 }, (_, i) => i)
    )
    const refused = await s.request("GET", "/organization", { token: key })
    assertTooManyRequests(refused, { cost: 1, limit: 600, remaining: 0, retryAfter: 1 })
    assert.match(refused.body.error.message, /retry after 1 second\./)
    // One token takes 100 ms at 10 per second: not a millisecond earlier.
    clock.advance("99 millis")
    assertTooManyRequests(await s.request("GET", "/organization", { token: key }), {
      cost: 1,
      limit: 600,
      remaining: 0,
      retryAfter: 1
    })
    clock.advance("1 millis")
    const admitted = await s.request("GET", "/organization", { token: key })
    assert.strictEqual(admitted.status, 200)
    assert.strictEqual(admitted.headers.get("x-ratelimit-remaining"), "0")
    // The IETF fields (draft-11): a minute's policy of 600, and 0 left with 60 s until the bucket is full again.
    assert.strictEqual(admitted.headers.get("ratelimit-policy"), `"org";q=600;w=60`)
    assert.strictEqual(admitted.headers.get("ratelimit"), `"org";r=0;t=60`)
    // A second refills 10, no more.
    clock.advance("1 second")
    const afterSecond = await inParallel(15, 5, () => s.request("GET", "/organization", { token: key }))
    assert.strictEqual(afterSecond.filter((r) => r.status === 200).length, 10)
    assert.strictEqual(afterSecond.filter((r) => r.status === 429).length, 5)
  })

  it("every charged response carries the rate-limit headers: 200, 403 and a 400 after authentication", async () => {
    const s = start()
    const { key, organizationId } = await s.provision()
    const readOnly = await s.operator("POST", `/organizations/${organizationId}/keys`, {
      permissions: ["reviews:read"]
    })
    const ok = await s.request("GET", "/organization", { token: key })
    assert.strictEqual(ok.status, 200)
    assert.deepStrictEqual(rateHeaders(ok), { cost: "1", limit: "600", remaining: "599", retryAfter: null })
    const forbidden = await s.request("GET", "/organization", { token: readOnly.body.secretKey })
    assert.strictEqual(forbidden.status, 403)
    assert.strictEqual(forbidden.body.error.code, "FORBIDDEN")
    assert.deepStrictEqual(rateHeaders(forbidden), { cost: "1", limit: "600", remaining: "598", retryAfter: null })
    // Charged before validation: a malformed import still costs its 10 tokens.
    const invalid = await s.request("POST", "/wishlists/import", { token: key, body: { data: [{ emial: "a@b.c" }] } })
    assert.strictEqual(invalid.status, 400)
    assert.strictEqual(invalid.body.error.code, "INVALID_REQUEST")
    assert.deepStrictEqual(rateHeaders(invalid), { cost: "10", limit: "600", remaining: "588", retryAfter: null })
    const bulk = await s.request("PATCH", "/customers/bulk-update", { token: key, body: { emailOptOut: true } })
    assert.strictEqual(bulk.status, 200)
    assert.deepStrictEqual(rateHeaders(bulk), { cost: "5", limit: "600", remaining: "583", retryAfter: null })
  })

  it("unauthenticated and operator requests are not charged and carry no rate-limit headers", async () => {
    const s = start()
    const { key, keyId, organizationId } = await s.provision()
    const spare = await s.operator("POST", `/organizations/${organizationId}/keys`, { permissions: ["settings:read"] })
    await s.operator("DELETE", `/organizations/${organizationId}/keys/${spare.body.id}`)
    const unauthenticated = await Promise.all([
      s.request("GET", "/organization"),
      s.request("GET", "/organization", { token: "sk_not_a_key" }),
      s.request("GET", "/organization", { token: `sk_${"x".repeat(40)}` }),
      s.request("GET", "/organization", { token: spare.body.secretKey }), // revoked key of this organization
      s.request("GET", "/organization", { headers: { authorization: "Basic abc" } })
    ])
    for (const r of unauthenticated) {
      assert.strictEqual(r.status, 401)
      assert.deepStrictEqual(rateHeaders(r), { cost: null, limit: null, remaining: null, retryAfter: null })
    }
    const operatorCalls = await Promise.all([
      s.operator("GET", `/organizations/${organizationId}/keys`),
      s.operator("PATCH", `/organizations/${organizationId}`, { apiRequestsPerMinute: 600 }),
      s.operator("POST", `/organizations/${organizationId}/publishable-keys`)
    ])
    for (const r of operatorCalls) {
      assert.isBelow(r.status, 300, r.text)
      assert.deepStrictEqual(rateHeaders(r), { cost: null, limit: null, remaining: null, retryAfter: null })
    }
    // The bucket is still full: the first charged request leaves 599.
    const first = await s.request("GET", "/organization", { token: key })
    assert.strictEqual(first.headers.get("x-ratelimit-remaining"), "599")
    // One token spent at 10 a second: full again within a second.
    assert.strictEqual(first.headers.get("ratelimit"), `"org";r=599;t=1`)
    assert.isString(keyId)
  })

  it("a request that costs more than the ceiling is 429 for good: no Retry-After, nothing applied, nothing charged", async () => {
    const s = start()
    const { key } = await s.provision({ apiRequestsPerMinute: 5 })
    const before = applied.imported
    const refused = await s.request("POST", "/wishlists/import", { token: key, body: { data: [{ email: "a@b.c" }] } })
    assertTooManyRequests(refused, { cost: 10, limit: 5, remaining: 5, retryAfter: undefined })
    assert.match(refused.body.error.message, /costs 10 tokens .* holds at most 5, so it can never be accepted/)
    assert.strictEqual(applied.imported, before)
    // However long the wait.
    clock.advance("1 hour")
    assertTooManyRequests(
      await s.request("POST", "/wishlists/import", { token: key, body: { data: [{ email: "a@b.c" }] } }),
      { cost: 10, limit: 5, remaining: 5, retryAfter: undefined }
    )
    const cheap = await s.request("GET", "/organization", { token: key })
    assert.deepStrictEqual(rateHeaders(cheap), { cost: "1", limit: "5", remaining: "4", retryAfter: null })
  })

  it("an import with 9 tokens left is 429 with nothing imported; after Retry-After seconds it succeeds", async () => {
    const s = start()
    // 12 per minute: 0.2 tokens per second, so the missing token takes 5 s.
    const { key } = await s.provision({ apiRequestsPerMinute: 12 })
    for (let i = 0; i < 3; i++) {
      assert.strictEqual((await s.request("GET", "/organization", { token: key })).status, 200)
    }
    const before = applied.imported
    const body = { data: [{ email: "a@b.c" }, { email: "d@e.f" }] }
    const refused = await s.request("POST", "/wishlists/import", { token: key, body })
    assertTooManyRequests(refused, { cost: 10, limit: 12, remaining: 9, retryAfter: 5 })
    assert.match(refused.body.error.message, /retry after 5 seconds\./)
    assert.strictEqual(applied.imported, before)
    // The cost-5 bulk update is affordable with 9 and is not blocked by the refused import (it charged nothing).
    const bulk = await s.request("PATCH", "/customers/bulk-update", { token: key, body: { emailOptOut: true } })
    assert.deepStrictEqual(rateHeaders(bulk), { cost: "5", limit: "12", remaining: "4", retryAfter: null })
    // Now 4 left: the import needs 6 more tokens, 30 s.
    const again = await s.request("POST", "/wishlists/import", { token: key, body })
    assertTooManyRequests(again, { cost: 10, limit: 12, remaining: 4, retryAfter: 30 })
    clock.advance("29999 millis")
    assertTooManyRequests(await s.request("POST", "/wishlists/import", { token: key, body }), {
      cost: 10,
      limit: 12,
      remaining: 9,
      retryAfter: 1
    })
    clock.advance("1 millis")
    const ok = await s.request("POST", "/wishlists/import", { token: key, body })
    assert.strictEqual(ok.status, 200, ok.text)
    assert.deepStrictEqual(ok.body, { imported: 2 })
    assert.deepStrictEqual(rateHeaders(ok), { cost: "10", limit: "12", remaining: "0", retryAfter: null })
    assert.strictEqual(applied.imported, before + 2)
  })

  it("changing apiRequestsPerMinute through the operator API changes the ceiling on the next request", async () => {
    const s = start()
    const { key, organizationId } = await s.provision()
    const first = await s.request("GET", "/organization", { token: key })
    assert.deepStrictEqual(rateHeaders(first), { cost: "1", limit: "600", remaining: "599", retryAfter: null })
    const patched = await s.operator("PATCH", `/organizations/${organizationId}`, { apiRequestsPerMinute: 100 })
    assert.strictEqual(patched.status, 200, patched.text)
    const lowered = await s.request("GET", "/organization", { token: key })
    assert.deepStrictEqual(rateHeaders(lowered), { cost: "1", limit: "100", remaining: "99", retryAfter: null })
    assert.strictEqual(lowered.body.plan.apiRequestsPerMinute, 100)
    const rest = await inParallel(100, 10, () => s.request("GET", "/organization", { token: key }))
    assert.strictEqual(rest.filter((r) => r.status === 200).length, 99)
    // 100 per minute refills one token in 0.6 s.
    assertTooManyRequests(rest.find((r) => r.status === 429)!, { cost: 1, limit: 100, remaining: 0, retryAfter: 1 })
    // Raising it does not mint tokens: the level is kept and refills at the new rate (1000/min: 1 token per 60 ms).
    await s.operator("PATCH", `/organizations/${organizationId}`, { apiRequestsPerMinute: 1000 })
    assertTooManyRequests(await s.request("GET", "/organization", { token: key }), {
      cost: 1,
      limit: 1000,
      remaining: 0,
      retryAfter: 1
    })
    clock.advance("60 millis")
    const raised = await s.request("GET", "/organization", { token: key })
    assert.deepStrictEqual(rateHeaders(raised), { cost: "1", limit: "1000", remaining: "0", retryAfter: null })
  })

  it("all keys of an organization share one bucket; another organization is unaffected", async () => {
    const s = start()
    const a = await s.provision()
    const secondKey = await s.operator("POST", `/organizations/${a.organizationId}/keys`, {
      permissions: ["settings:read"]
    })
    const keys = [a.key, secondKey.body.secretKey as string]
    const b = await s.provision()
    const burst = await inParallel(600, 25, (i) => s.request("GET", "/organization", { token: keys[i % 2] }))
    assert.isTrue(burst.every((r) => r.status === 200))
    for (const token of keys) {
      assertTooManyRequests(await s.request("GET", "/organization", { token }), {
        cost: 1,
        limit: 600,
        remaining: 0,
        retryAfter: 1
      })
    }
    const other = await s.request("GET", "/organization", { token: b.key })
    assert.strictEqual(other.status, 200)
    assert.deepStrictEqual(rateHeaders(other), { cost: "1", limit: "600", remaining: "599", retryAfter: null })
  })
})

describe("rate-limit costs in the OpenAPI document", () => {
  it("every secured operation states its x-rate-limit-cost; unsecured ones do not", async () => {
    const s = makeTestServer()
    try {
      const doc = (await s.request("GET", "/openapi.json")).body
      assert.strictEqual(doc.paths["/organization"].get["x-rate-limit-cost"], 1)
      assert.isUndefined(doc.paths["/health"].get["x-rate-limit-cost"])
    } finally {
      await s.dispose()
    }
  })
})
