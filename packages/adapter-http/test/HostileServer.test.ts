/**
 * Hostile input at the server's edge (docs/SECURITY.md), in process, on memory and on PostgreSQL: every framework
 * error in the envelope, an access log that never writes query values or secrets, the demo seed that never brings a
 * revoked key back, unique key hashes, and a webhook transport that reads at most 1 KiB of any answer.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { migrations, PgDatabase, PgStoreLayer, runMigrations } from "@feedback/adapter-postgres"
import { CoreLayer, Kernel, Organizations, Storefront, type StoreServices, Webhooks } from "@feedback/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpRouter } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, freshTarget, storeName } from "../../adapter-postgres/test/TestDatabase.ts"
import { demoProducts } from "../src/server/organizations/DemoCatalog.ts"
import { demoSeeding, seedDemo } from "../src/server/organizations/DemoSeed.ts"
import { NodeHostResolver } from "../src/server/webhooks/NodeWebhookTransport.ts"
import { loggedUrl } from "../src/server/ErrorEnvelope.ts"
import { NodeWebhookTransport } from "../src/server/webhooks/NodeWebhookTransport.ts"
import { expectError } from "./Http.ts"
import { makeTestServer, type TestResponse, type TestServer } from "./TestServer.ts"
import { eventually } from "./WebhookReceiver.ts"

type Store = Layer.Layer<StoreServices, unknown>
const stores: ReadonlyArray<readonly [string, () => Store]> = [
  ["memory", () => MemoryStoreLayer],
  [storeName, () => freshLayer((target) => PgStoreLayer(target))]
]

// A defect, to see what the error log line says of a 500.
const BoomRoute = HttpRouter.add("GET", "/test-boom", Effect.die(new Error("boom")))

describe.each(stores)("framework errors and the access log on %s", (_name, makeStore) => {
  const lines: Array<string> = []
  let server: TestServer
  let key: string
  beforeAll(async () => {
    server = makeTestServer(makeStore(), { logRequests: true, log: (line) => lines.push(line), routes: BoomRoute })
    key = (await server.provision()).key
  })
  afterAll(() => server.dispose())

  it("a body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE naming the accepted type", async () => {
    for (
      const contentType of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml"
      ]
    ) {
      const res = await server.request("POST", "/webhooks", {
        token: key,
        rawBody: "url=x",
        headers: { "content-type": contentType }
      })
      expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE")
      expect(res.body.error.message).toContain("application/json")
      expect(res.body.error.details).toEqual({ accepted: ["application/json"] })
    }
    // Parameters of the accepted type are fine: the body is read, and fails its schema.
    const withCharset = await server.request("POST", "/webhooks", {
      token: key,
      rawBody: "{}",
      headers: { "content-type": "application/json; charset=utf-8" }
    })
    expectError(withCharset, 400, "INVALID_REQUEST")
    // The operator API answers the same.
    const operator = await server.request("POST", "/operator/organizations", {
      token: "test-operator-token",
      rawBody: "name=x",
      headers: { "content-type": "text/plain" }
    })
    expectError(operator, 415, "UNSUPPORTED_MEDIA_TYPE")
  })

  it("malformed JSON, undecodable paths, odd methods, long paths and defects are enveloped", async () => {
    expectError(
      await server.request("POST", "/webhooks", { token: key, rawBody: "{\"url\": " }),
      400,
      "INVALID_REQUEST"
    )
    expectError(
      await server.request("POST", "/webhooks", { token: key, rawBody: "[".repeat(100_000) }),
      400,
      "INVALID_REQUEST"
    )
    const undecodable = await server.request("GET", "/reviews/%zz", { token: key })
    expectError(undecodable, 400, "INVALID_REQUEST")
    expect(undecodable.body.error.details.issues[0].path).toBe("path")
    const propfind = await server.request("PROPFIND", "/organization", { token: key })
    expectError(propfind, 405, "METHOD_NOT_ALLOWED")
    expect(propfind.headers.get("allow")).toBe("GET")
    expectError(await server.request("GET", "/" + "a".repeat(100_000), { token: key }), 404, "NOT_FOUND")
    const boom = await server.request("GET", "/test-boom?token=hunter2")
    expectError(boom, 500, "INTERNAL")
    expect(boom.body.error.details.requestId).toBe(boom.headers.get("x-request-id"))
  })

  it("takes a caller's well-formed X-Request-Id as the request's id, in the response, the 500 body and the log; replaces any other", async () => {
    lines.length = 0
    const traced = await server.request("GET", "/test-boom", { headers: { "x-request-id": "client-7f3a:retry.2" } })
    expect(traced.headers.get("x-request-id")).toBe("client-7f3a:retry.2")
    expect(traced.body.error.details.requestId).toBe("client-7f3a:retry.2")
    expect(lines.join("\n")).toContain(`"requestId":"client-7f3a:retry.2"`)
    for (const hostile of ["", "x".repeat(129), "a b", "id\"},{\"level\":\"fake", "ünïcode"]) {
      const res = await server.request("GET", "/health", { headers: { "x-request-id": hostile } })
      expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{8}[0-9a-z]+$/)
    }
  })

  it("the access log has time, level, path and parameter names; never values or the Authorization header", async () => {
    lines.length = 0
    await server.request("GET", "/reviews?search=top-secret-term&filter=rating%20eq%205&limit=5", { token: key })
    await server.request("GET", `/reviews?${key}`, { token: key })
    await server.request("GET", "/test-boom?token=hunter2&search=private")
    const text = lines.join("\n")
    for (const secret of ["top-secret-term", "rating", "hunter2", "private", key, key.slice(3), "Bearer"]) {
      expect(text).not.toContain(secret)
    }
    const access = lines.map((l) => JSON.parse(l)).filter((l) => l.level === "info")
    expect(access[0]).toMatchObject({ level: "info", method: "GET", path: "/reviews?search&filter&limit" })
    expect(access[0].status).toBeTypeOf("number")
    expect(new Date(access[0].time).toISOString()).toBe(access[0].time)
    expect(access[0].requestId).toMatch(/^req_/)
    expect(access[1].path).toBe("/reviews?…")
    const error = lines.map((l) => JSON.parse(l)).find((l) => l.level === "error")
    expect(error).toMatchObject({ level: "error", path: "/test-boom?token&search" })
    expect(new Date(error.time).toISOString()).toBe(error.time)
  })
})

describe("loggedUrl", () => {
  it("keeps the path and plausible parameter names only", () => {
    expect(loggedUrl("/reviews")).toBe("/reviews")
    expect(loggedUrl("/reviews?")).toBe("/reviews")
    expect(loggedUrl("/reviews?filter=a&search=b&filter=c&flag")).toBe("/reviews?filter&search&flag")
    expect(loggedUrl("/reviews?a%20b=1&" + "n".repeat(40) + "=2&include=x")).toBe("/reviews?…&include")
    expect(loggedUrl("/" + "x".repeat(1000))).toHaveLength(1 + 255 + 1)
  })
})

describe.each(stores)("demo seeding and key hashes on %s", (_name, makeStore) => {
  type Services = StoreServices | Kernel.IdGenerator | Layer.Success<typeof CoreLayer>
  let runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
  const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)
  beforeAll(() => {
    runtime = ManagedRuntime.make(
      CoreLayer.pipe(Layer.provideMerge(Layer.mergeAll(makeStore(), Kernel.IdGenerator.uuidV7, NodeHostResolver)))
    )
  })
  afterAll(() => runtime.dispose())

  it("seeds once; a revoked DEMO_SECRET_KEY stays revoked on every later start", async () => {
    const fixed = "sk_" + "r".repeat(40)
    const first = await run(seedDemo(fixed))
    expect(first).toMatchObject({ _tag: "Created", secretKey: fixed })
    if (first._tag !== "Created") throw new Error("not seeded")
    const organizationId = first.organizationId as Kernel.OrganizationId
    // The next start finds the same demo organization, whose storefront was seeded with it.
    expect(await run(seedDemo(fixed))).toEqual({ _tag: "Existing", secretKey: fixed, organizationId })
    const [demoKey] = await run(
      Organizations.StorefrontRecordRepository.use((r) => r.listPublishableKeys(organizationId))
    )
    const caller = await run(Organizations.Organizations.use((o) => o.authenticatePublishableKey(demoKey!.key)))
    const ratings = await run(
      Storefront.StorefrontReads.use((reads) => reads.ratings(demoProducts.map((p) => p.slug).join(","))).pipe(
        Effect.provideService(Storefront.CurrentStorefrontCaller, { ...caller, clientAddress: "test" })
      )
    )
    expect(ratings.data.map((r) => r.slug)).toEqual(demoProducts.map((p) => p.slug))
    expect(ratings.data.every((r) => r.reviewCount > 0)).toBe(true)
    const [key] = await run(Organizations.Organizations.use((o) => o.listSecretKeys(organizationId)))
    await run(Organizations.Organizations.use((o) => o.revokeSecretKey(organizationId, key!.id)))

    expect(await run(seedDemo(fixed))).toEqual({ _tag: "Revoked" })
    expect(await run(seedDemo(fixed))).toEqual({ _tag: "Revoked" })
    const denied = await run(Effect.flip(Organizations.Organizations.use((o) => o.authenticateSecretKey(fixed))))
    expect(denied._tag).toBe("Unauthorized")
    const stored = await run(
      Organizations.SecretKeyRepository.use((r) => r.findByHash(Organizations.hashSecretKey(fixed)))
    )
    expect(stored._tag === "Some" && stored.value.id).toBe(key!.id)
    // Without a fixed key, a store that has organizations is left alone.
    expect(await run(seedDemo(undefined))).toEqual({ _tag: "Existing", secretKey: undefined, organizationId })
  })

  it("a key hash is stored once: a second key with the same secret is refused", async () => {
    const org = await run(Organizations.Organizations.use((o) => o.createOrganization({ name: "Duplicates" })))
    const secret = Organizations.generateSecretKey()
    const issued = await run(
      Organizations.Organizations.use((o) => o.issueChosenSecretKey(org.id, { permissions: ["reviews:read"] }, secret))
    )
    const again = await run(
      Effect.flip(
        Organizations.Organizations.use((o) =>
          o.issueChosenSecretKey(org.id, { permissions: ["settings:write"] }, secret)
        )
      )
    )
    expect(again._tag).toBe("SecretKeyHashTaken")
    const other = await run(Organizations.Organizations.use((o) => o.createOrganization({ name: "Elsewhere" })))
    const elsewhere = await run(
      Effect.flip(Organizations.Organizations.use((o) => o.issueChosenSecretKey(other.id, { permissions: [] }, secret)))
    )
    expect(elsewhere._tag).toBe("SecretKeyHashTaken")
    // The refused attempts left nothing behind, and the key still names its one record.
    expect((await run(Organizations.Organizations.use((o) => o.listSecretKeys(org.id)))).map((k) => k.id)).toEqual([
      issued.id
    ])
    expect(await run(Organizations.Organizations.use((o) => o.listSecretKeys(other.id)))).toEqual([])
    const auth = await run(Organizations.Organizations.use((o) => o.authenticateSecretKey(secret)))
    expect(auth.caller.keyId).toBe(issued.id)
    expect([...auth.caller.permissions]).toEqual(["reviews:read"])
  })
})

describe("whether to seed", () => {
  const embedded = { _tag: "Embedded", dataDir: ".data" } as const
  const memory = { _tag: "Memory" } as const
  const server = { _tag: "Server", url: "postgres://db.example/prod" } as const
  it("DEMO decides; unset, only the zero-setup stores seed", () => {
    expect(demoSeeding(undefined, embedded)._tag).toBe("Seed")
    expect(demoSeeding(undefined, memory)._tag).toBe("Seed")
    expect(demoSeeding(undefined, server)).toMatchObject({ _tag: "Off", reason: expect.stringContaining("DEMO=true") })
    expect(demoSeeding(true, server)._tag).toBe("Seed")
    for (const store of [embedded, memory, server]) {
      expect(demoSeeding(false, store)).toEqual({ _tag: "Off", reason: "DEMO=false" })
    }
  })
})

describe(`migration 0071 on ${storeName}`, () => {
  it("settles hashes stored twice before making them unique: the oldest keeps it, revoked if any copy was", async () => {
    const rows = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const target = yield* freshTarget()
      return yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* runMigrations(migrations.filter((m) => m.id < 71))
        const org = "00000000-0000-4000-8000-0000000000a1"
        yield* sql`INSERT INTO organizations (organization_id, name, api_requests_per_minute, created_at)
          VALUES (${org}, 'Old demo', 600, now())`
        const insert = (id: string, hash: string, createdAt: string, revokedAt: string | null) =>
          sql`INSERT INTO secret_keys (organization_id, id, name, permissions, key_hash, created_at, revoked_at)
            VALUES (${org}, ${id}, 'k', '{}', ${hash}, ${createdAt}, ${revokedAt})`
        yield* insert("00000000-0000-4000-8000-000000000001", "h1", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
        yield* insert("00000000-0000-4000-8000-000000000002", "h1", "2026-01-03T00:00:00Z", null)
        yield* insert("00000000-0000-4000-8000-000000000003", "h2", "2026-01-01T00:00:00Z", null)
        yield* runMigrations(migrations)
        const after = yield* sql<{ id: string; keyHash: string; revokedAt: Date | null }>`
          SELECT id, key_hash, revoked_at FROM secret_keys ORDER BY id`
        const duplicate = yield* Effect.flip(
          insert("00000000-0000-4000-8000-000000000004", "h2", "2026-01-04T00:00:00Z", null)
        )
        return { after, duplicate: duplicate._tag }
      }).pipe(Effect.provide(PgDatabase(target)))
    })))
    const [oldest, later, single] = rows.after
    expect(oldest).toMatchObject({ keyHash: "h1" })
    expect(oldest!.revokedAt?.toISOString()).toBe("2026-01-02T00:00:00.000Z")
    expect(later!.keyHash).toBe(`superseded:${later!.id}`)
    expect(later!.revokedAt).not.toBeNull()
    expect(single).toMatchObject({ keyHash: "h2", revokedAt: null })
    expect(rows.duplicate).toBe("SqlError")
  })
})

describe("webhook transport against a receiver that answers with an endless body", () => {
  let port = 0
  const open = new Set<ServerResponse>()
  const closed: Array<string> = []
  const receiver = createServer((req, res) => {
    req.resume()
    const status = req.url === "/endless-500" || req.url === "/stalled-500" ? 500 : 200
    res.writeHead(status, { "content-type": "text/plain" })
    open.add(res)
    res.on("close", () => {
      open.delete(res)
      closed.push(req.url ?? "")
    })
    // A few bytes, then nothing more: only the exchange's own deadline ends it (undici's timers are off).
    if (req.url === "/stalled-500") {
      res.write("partial")
      return
    }
    // Writes for as long as the client reads, and never ends.
    const pump = () => {
      while (res.write("x".repeat(16 * 1024))) { /* fill the buffer */ }
    }
    res.on("drain", pump)
    pump()
  })
  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    port = (receiver.address() as AddressInfo).port
  })
  afterAll(async () => {
    for (const res of open) res.destroy()
    await new Promise<void>((resolve) => receiver.close(() => resolve()))
  })

  const post = (path: string, timeoutMs = 60_000) =>
    Effect.runPromise(
      Webhooks.WebhookTransport.use((t) =>
        t.post({
          url: new URL(`http://127.0.0.1:${port}${path}`),
          address: undefined,
          headers: { "content-type": "application/json" },
          body: "{}",
          timeoutMs
        })
      ).pipe(Effect.provide(NodeWebhookTransport))
    )

  it("a 2xx is delivered and its endless body is cut at 1 KiB, the connection dropped", async () => {
    const result = await post("/endless-200")
    expect(result).toEqual({ _tag: "Response", status: 200, bodyExcerpt: "" })
    await eventually(
      async () => (closed.includes("/endless-200") ? true : undefined),
      10_000,
      "the receiver's response to close"
    )
  })

  it("a body that stalls ends at the exchange's deadline with what was read, the connection dropped", async () => {
    // The body never ends: only the deadline can end the exchange (a generous bound turns a hang into a failure).
    const result = await Promise.race([
      post("/stalled-500", 300),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("the exchange outlived its deadline")), 60_000).unref()
      )
    ])
    expect(result).toEqual({ _tag: "Response", status: 500, bodyExcerpt: "partial" })
    await eventually(
      async () => (closed.includes("/stalled-500") ? true : undefined),
      10_000,
      "the receiver's response to close"
    )
  })

  it("a non-2xx keeps the first 1 KiB and drops the rest", async () => {
    const result = await post("/endless-500")
    expect(result).toEqual({ _tag: "Response", status: 500, bodyExcerpt: "x".repeat(1024) })
    await eventually(
      async () => (closed.includes("/endless-500") ? true : undefined),
      10_000,
      "the receiver's response to close"
    )
  })
})
