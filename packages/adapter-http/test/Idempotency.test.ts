/**
 * `Idempotency-Key` as a client sees it (docs/DECISIONS.md §18, shared §13), through the real routes and middleware
 * of the in-process server, once over the memory store and once over PostgreSQL (a fresh database on
 * TEST_DATABASE_URL's server, else a fresh embedded PGlite). Time is a `ManualClock` so expiry is exact.
 */
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { type StoreServices } from "@feedback/core"
import { fixedDns } from "@feedback/testing"
import { Layer } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freshLayer, storeName } from "../../adapter-postgres/test/TestDatabase.ts"
import { expectError } from "./Http.ts"
import { makeManualClock, type ManualClock } from "./ManualClock.ts"
import { makeTestServer, type TestResponse, type TestServer } from "./TestServer.ts"

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory store", () => MemoryStoreLayer],
  [storeName, () => freshLayer(PgStoreLayer)]
]

// Webhook destinations resolve without the network; no dispatcher runs, so a ping answers its queued delivery.
const FakeDns = fixedDns({ "hooks.example.com": ["93.184.216.34"] })

let counter = 0
const freshKey = () => `key-${Date.now()}-${++counter}`

describe.each(stores)("Idempotency-Key over HTTP, %s", (_, makeStore) => {
  let server: TestServer
  let clock: ManualClock
  beforeAll(() => {
    clock = makeManualClock(Date.now())
    server = makeTestServer(makeStore(), { clock, workers: false, webhooks: { dispatcher: false, resolver: FakeDns } })
  })
  afterAll(async () => {
    await server.dispose()
  })

  const createSite = (token: string, key: string | undefined, body: unknown = { name: "Shop", domain: null }) =>
    server.request("POST", "/sites", { token, body, headers: key === undefined ? {} : { "idempotency-key": key } })
  const siteCount = async (token: string) =>
    (await server.request("GET", "/sites", { token })).body.data.length as number

  it("a repeat answers the recorded status and body with Idempotent-Replayed, and creates nothing", async () => {
    const { key: token } = await server.provision()
    const key = freshKey()
    const first = await createSite(token, key)
    assert.strictEqual(first.status, 201, first.text)
    assert.isNull(first.headers.get("idempotent-replayed"))
    const again = await createSite(token, key)
    assert.strictEqual(again.status, 201)
    assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
    assert.deepStrictEqual(again.body, first.body)
    assert.strictEqual(again.headers.get("content-type"), "application/json")
    assert.strictEqual(await siteCount(token), 1)
    // Without a key, the same request runs again.
    assert.strictEqual((await createSite(token, undefined)).status, 201)
    assert.strictEqual(await siteCount(token), 2)
  })

  it("a replay is charged like any request", async () => {
    const { key: token } = await server.provision()
    const key = freshKey()
    const first = await createSite(token, key)
    const again = await createSite(token, key)
    assert.strictEqual(
      Number(again.headers.get("x-ratelimit-remaining")),
      Number(first.headers.get("x-ratelimit-remaining")) - Number(again.headers.get("x-rate-limit-cost"))
    )
    assert.isNotNull(again.headers.get("ratelimit"))
  })

  it("the same key with another body, path or method is 422 IDEMPOTENCY_KEY_REUSED and changes nothing", async () => {
    const { key: token } = await server.provision()
    const key = freshKey()
    assert.strictEqual((await createSite(token, key)).status, 201)
    expectError(await createSite(token, key, { name: "Other", domain: null }), 422, "IDEMPOTENCY_KEY_REUSED")
    const webhook = await server.request("POST", "/webhooks", {
      token,
      body: { url: "https://example.com/hook", events: ["review.created"] },
      headers: { "idempotency-key": key }
    })
    expectError(webhook, 422, "IDEMPOTENCY_KEY_REUSED")
    expectError(
      await server.request("PATCH", "/sites", {
        token,
        body: { name: "Shop", domain: null },
        headers: { "idempotency-key": key }
      }),
      // PATCH /sites is no route: the router answers before any key is looked at.
      405,
      "METHOD_NOT_ALLOWED"
    )
    assert.strictEqual(await siteCount(token), 1)
  })

  it("keys are per organization", async () => {
    const a = await server.provision()
    const b = await server.provision()
    const key = freshKey()
    const first = await createSite(a.key, key)
    const other = await createSite(b.key, key)
    assert.strictEqual(other.status, 201)
    assert.isNull(other.headers.get("idempotent-replayed"))
    assert.notStrictEqual(other.body.id, first.body.id)
  })

  it("a malformed key is 400 naming the header, and changes nothing", async () => {
    const { key: token } = await server.provision()
    for (const bad of ["x".repeat(256), "clé", "tab\there"]) {
      const r = await createSite(token, bad)
      expectError(r, 400, "INVALID_REQUEST")
      assert.strictEqual(r.body.error.details.issues[0].path, "headers.idempotency-key")
    }
    assert.strictEqual((await createSite(token, "x".repeat(255))).status, 201)
    assert.strictEqual((await createSite(token, " ~!")).status, 201)
    assert.strictEqual(await siteCount(token), 2)
    // Reads ignore the header.
    assert.strictEqual(
      (await server.request("GET", "/sites", { token, headers: { "idempotency-key": "clé" } })).status,
      200
    )
  })

  it("a 404 decided by the operation is recorded and replayed", async () => {
    const { key: token } = await server.provision()
    const key = freshKey()
    const path = "/webhooks/00000000-0000-4000-8000-000000000009"
    const first = await server.request("DELETE", path, { token, headers: { "idempotency-key": key } })
    expectError(first, 404, "NOT_FOUND")
    const again = await server.request("DELETE", path, { token, headers: { "idempotency-key": key } })
    assert.strictEqual(again.status, 404)
    assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
    assert.deepStrictEqual(again.body, first.body)
  })

  it("400 and 403 are not recorded: the client may fix the request and retry with the same key", async () => {
    const { key: token, organizationId } = await server.provision()
    const key = freshKey()
    expectError(await createSite(token, key, { name: "", domain: null }), 400, "INVALID_REQUEST")
    const reader = await server.operator("POST", `/organizations/${organizationId}/keys`, {
      permissions: ["reviews:read"]
    })
    assert.strictEqual(reader.status, 201, reader.text)
    expectError(await createSite(reader.body.secretKey, key), 403, "FORBIDDEN")
    const ok = await createSite(token, key)
    assert.strictEqual(ok.status, 201, ok.text)
    assert.isNull(ok.headers.get("idempotent-replayed"))
    assert.strictEqual(await siteCount(token), 1)
  })

  it("concurrent identical requests run the operation once", async () => {
    const { key: token } = await server.provision()
    const key = freshKey()
    const answers = await Promise.all(Array.from({ length: 6 }, () => createSite(token, key)))
    assert.strictEqual(await siteCount(token), 1)
    const ran = answers.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null)
    assert.strictEqual(ran.length, 1, answers.map((r) => `${r.status} ${r.text}`).join("\n"))
    for (const r of answers) {
      if (r.status === 201) assert.deepStrictEqual(r.body, ran[0]!.body)
      else expectError(r, 409, "CONFLICT")
    }
  })

  it("an operation that commits before it answers (ping) is recorded after it, and still runs once", async () => {
    const { key: token } = await server.provision()
    const hook = await server.request("POST", "/webhooks", {
      token,
      body: { url: "https://hooks.example.com/in", events: ["review.created"] },
      headers: { "idempotency-key": freshKey() }
    })
    assert.strictEqual(hook.status, 201, hook.text)
    const key = freshKey()
    const ping = () =>
      server.request("POST", `/webhooks/${hook.body.id}/ping`, { token, headers: { "idempotency-key": key } })
    const first = await ping()
    assert.isTrue(first.status >= 200 && first.status < 300, first.text)
    const again = await ping()
    assert.strictEqual(again.status, first.status)
    assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
    assert.deepStrictEqual(again.body, first.body)
    const deliveries = await server.request("GET", `/webhooks/${hook.body.id}/events`, { token })
    assert.strictEqual(deliveries.status, 200, deliveries.text)
    assert.strictEqual(deliveries.body.data.length, 1)
  })

  it("after 24 hours the key is free again", async () => {
    const { key: token } = await server.provision()
    const key = freshKey()
    assert.strictEqual((await createSite(token, key)).status, 201)
    clock.advance("23 hours")
    expectError(await createSite(token, key, { name: "Later", domain: null }), 422, "IDEMPOTENCY_KEY_REUSED")
    clock.advance("1 hour")
    const fresh = await createSite(token, key, { name: "Later", domain: null })
    assert.strictEqual(fresh.status, 201, fresh.text)
    assert.isNull(fresh.headers.get("idempotent-replayed"))
    assert.strictEqual(await siteCount(token), 2)
  })
})

describe("Idempotency-Key in the OpenAPI document", () => {
  it("every keyed operation documents what the key can answer: 409 while it runs, 422 IDEMPOTENCY_KEY_REUSED", async () => {
    const server = makeTestServer(MemoryStoreLayer, { workers: false })
    try {
      const spec = (await server.request("GET", "/openapi.json")).body
      const resolve = (r: any): any =>
        r?.$ref === undefined ? r : resolve(r.$ref.split("/").slice(1).reduce((o: any, k: string) => o[k], spec))
      const schemaNames = (response: any): Array<string> => {
        const schema = resolve(response).content["application/json"].schema
        return (schema.oneOf ?? [schema]).map((s: any) => s.$ref.split("/").pop())
      }
      let keyed = 0
      for (const [path, item] of Object.entries<any>(spec.paths)) {
        for (const method of ["post", "patch", "delete"]) {
          const operation = item[method]
          if (operation === undefined || (operation.security ?? []).length === 0) continue
          keyed++
          assert.include(schemaNames(operation.responses["409"]), "ConflictError", `${method} ${path}`)
          assert.include(schemaNames(operation.responses["422"]), "IdempotencyKeyReusedError", `${method} ${path}`)
        }
      }
      assert.isAbove(keyed, 20)
      assert.deepStrictEqual(spec.components.schemas.IdempotencyKeyReusedError.properties.error.properties.code.enum, [
        "IDEMPOTENCY_KEY_REUSED"
      ])
    } finally {
      await server.dispose()
    }
  })
})
