/**
 * Hostile cursors on every list endpoint (docs/SECURITY.md): cursors are sealed with the store's key, so a forged
 * one (an impossible date, the retired public checksum, another key), an edited or cut one, and one issued for
 * another list or organization are all a 400 naming `cursor`, never a 500; a genuine cursor still pages. Runs on
 * memory, and on a PostgreSQL server with TEST_DATABASE_URL (where two store layers over one database, as two
 * processes would be, accept each other's cursors).
 */
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Kernel, Webhooks } from "@feedback/core"
import { legacyCursor, legacyWebhookCursor, seedReviews } from "@feedback/testing"
import { Cause, Effect, Layer, ManagedRuntime, Redacted, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshServerDatabase } from "../../adapter-postgres/test/TestDatabase.ts"
import { storeLayer } from "../src/server/StoreSelection.ts"
import { testStores } from "./SeededServer.ts"
import { expectInvalid } from "./Http.ts"
import { makeTestServer, type TestResponse, type TestServer } from "./TestServer.ts"

const FakeDns = Layer.succeed(
  Webhooks.HostResolver,
  Webhooks.HostResolver.of({ resolve: () => Effect.succeed(["93.184.216.34"]) })
)
const serverOptions = { webhooks: { dispatcher: false, resolver: FakeDns } } as const

const expectBadCursor = (res: TestResponse, what: string) => expectInvalid(res, "cursor", what)

const withQuery = (path: string, query: Record<string, string>) =>
  `${path}${path.includes("?") ? "&" : "?"}${new URLSearchParams(query).toString()}`

/** Changes the character at `at` to another character of the base64url alphabet. */
const changeOne = (token: string, at: number) =>
  token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1)

const IMPOSSIBLE = ["2026-02-30T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "2026-01-01T24:00:00.000Z"]
const SOME_ID = "5f0c3a1e-8b9d-4c2a-9e8f-1a2b3c4d5e6f"

type Store = Layer.Layer<any, unknown>

/** A test server plus a runtime over the same built store, to seed what the API cannot create. */
const makeServer = (store: Store) => {
  const memoMap = Layer.makeMemoMapUnsafe()
  const runtime = ManagedRuntime.make(Layer.merge(store, Kernel.IdGenerator.uuidV7), { memoMap })
  const server = makeTestServer(store, serverOptions, memoMap)
  return {
    server,
    runtime,
    dispose: async () => {
      await server.dispose()
      await runtime.dispose()
    }
  }
}

interface Org {
  readonly organizationId: string
  readonly key: string
  readonly hookId: string
}

/** Three records in every list of a fresh organization. */
const populate = async (server: TestServer, runtime: ManagedRuntime.ManagedRuntime<any, any>): Promise<Org> => {
  const { organizationId, key } = await server.provision()
  const post = async (path: string, body: unknown) => {
    const res = await server.request("POST", path, { token: key, body })
    expect(res.status, `${path}: ${res.text}`).toBe(201)
    return res.body
  }
  const products: Array<any> = []
  for (let i = 0; i < 3; i++) {
    products.push(await post("/products", { slug: `p${i}`, title: `Product ${i}` }))
    await post("/customers", { email: `c${i}@example.com`, firstName: `C${i}` })
    await post("/sites", { name: `Site ${i}`, domain: `s${i}.example.com` })
    await post("/product-questions", { productId: products[0].id, body: `Question ${i}?` })
  }
  const hooks: Array<any> = []
  for (let i = 0; i < 3; i++) {
    hooks.push(await post("/webhooks", { url: `https://hooks.example.com/${i}`, events: ["review.created"] }))
  }
  const hookId = hooks[0].id as Kernel.WebhookId
  await runtime.runPromise(Effect.gen(function*() {
    yield* seedReviews(organizationId as Kernel.OrganizationId, products.map((p) => ({ productId: p.id })))
    const deliveries: Array<Webhooks.WebhookDeliveryRecord> = []
    for (let i = 0; i < 3; i++) {
      const idempotencyKey: string = yield* Kernel.nextId()
      const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() as Kernel.Timestamp.Timestamp
      deliveries.push({
        id: yield* Kernel.nextId<Kernel.WebhookDeliveryId>(),
        organizationId: organizationId as Kernel.OrganizationId,
        webhookId: hookId,
        eventId: yield* Kernel.nextId<Webhooks.WebhookDeliveryRecord["eventId"]>(),
        event: "review.created",
        idempotencyKey,
        status: "pending",
        // A body as deliveries made before envelopes carried `eventId` have it: the log must still read them.
        body: JSON.stringify({ event: "review.created", timestamp: createdAt, idempotencyKey, data: { n: i } }),
        responseStatus: null,
        error: null,
        durationMs: null,
        createdAt,
        attemptedAt: null,
        claimedBy: null,
        redeliveryOf: null,
        recordKey: null
      })
    }
    yield* Webhooks.WebhookRepository.use((r) => r.insertDeliveries(deliveries))
  }))
  return { organizationId, key, hookId }
}

/** Every list endpoint, with how a forger would have bound a cursor to it before cursors were sealed. */
const lists = (hookId: string) => {
  const newestFirst = (endpoint: string): Kernel.CursorBinding => ({
    endpoint,
    sort: { field: "createdAt", direction: "desc", type: "timestamp" },
    filter: Kernel.matchAll,
    search: undefined
  })
  return [
    { path: "/reviews", legacy: (t: string) => legacyCursor({ value: t, id: SOME_ID }, newestFirst("reviews")) },
    { path: "/products", legacy: (t: string) => legacyCursor({ value: t, id: SOME_ID }, newestFirst("products")) },
    { path: "/customers", legacy: (t: string) => legacyCursor({ value: t, id: SOME_ID }, newestFirst("customers")) },
    { path: "/sites", legacy: (t: string) => legacyCursor({ value: t, id: SOME_ID }, newestFirst("sites")) },
    {
      path: "/product-questions",
      legacy: (t: string) => legacyCursor({ value: t, id: SOME_ID }, newestFirst("product-questions"))
    },
    { path: "/webhooks", legacy: (t: string) => legacyWebhookCursor("webhooks", t, SOME_ID) },
    {
      path: `/webhooks/${hookId}/events`,
      legacy: (t: string) => legacyWebhookCursor(`webhooks/${hookId}/events`, t, SOME_ID)
    }
  ] as const
}

const hostileStores: ReadonlyArray<readonly [string, () => Store]> = testStores

describe.each(hostileStores)("hostile cursors on every list (%s)", (_name, makeStore) => {
  const { server, runtime, dispose } = makeServer(makeStore())
  afterAll(dispose)

  let a: Org
  let b: Org
  beforeAll(async () => {
    a = await populate(server, runtime)
    b = await populate(server, runtime)
  }, 60_000)

  const get = (path: string, token: string, query: Record<string, string> = {}) =>
    server.request("GET", withQuery(path, query), { token })

  /** Walks a list one record per page and returns the ids in order. */
  const walk = async (path: string, token: string) => {
    const seen: Array<string> = []
    let cursor: string | null = null
    for (let pages = 0; pages < 10; pages++) {
      const res = await get(path, token, cursor === null ? { limit: "1" } : { limit: "1", cursor })
      expect(res.status, res.text).toBe(200)
      seen.push(...res.body.data.map((r: { id: string }) => r.id))
      cursor = res.body.nextCursor
      if (cursor === null) break
    }
    return seen
  }

  it("a genuine cursor still pages through every list, each record once, in the order of the whole list", async () => {
    for (const { path } of lists(a.hookId)) {
      const whole = await get(path, a.key)
      expect(whole.status, `${path}: ${whole.text}`).toBe(200)
      expect(whole.body.data.length, path).toBe(3)
      expect(await walk(path, a.key), path).toEqual(whole.body.data.map((r: { id: string }) => r.id))
    }
  })

  it("a forged cursor carrying an impossible date (old public checksum, old unchecked webhook format) is a 400", async () => {
    for (const { path, legacy } of lists(a.hookId)) {
      for (const instant of IMPOSSIBLE) {
        expectBadCursor(await get(path, a.key, { cursor: legacy(instant) }), `${path} ${instant}`)
      }
      // The same forgery with a real instant: no longer accepted either, so nothing forged reaches a query.
      expectBadCursor(await get(path, a.key, { cursor: legacy("2026-01-01T00:00:00.000Z") }), `${path} legacy`)
    }
  })

  it("a cursor sealed with another key, edited in one character, or cut, is a 400", async () => {
    const forger = Kernel.CursorKey.fromSecret("not the server's key, but long enough to be one")
    for (const { path } of lists(a.hookId)) {
      const first = await get(path, a.key, { limit: "1" })
      const cursor: string = first.body.nextCursor
      expect(cursor, path).toMatch(/^[A-Za-z0-9_-]+$/)
      const bytes = Buffer.from(cursor, "base64url")
      const payload = bytes.subarray(16)
      const resealed = Buffer.concat([forger.tag(payload), payload]).toString("base64url")
      expectBadCursor(await get(path, a.key, { cursor: resealed }), `${path} other key`)
      for (const at of [0, 5, 15, 21, Math.floor(cursor.length / 2), cursor.length - 2, cursor.length - 1]) {
        expectBadCursor(await get(path, a.key, { cursor: changeOne(cursor, at) }), `${path} edited at ${at}`)
      }
      expectBadCursor(await get(path, a.key, { cursor: cursor.slice(0, -4) }), `${path} cut`)
      expectBadCursor(await get(path, a.key, { cursor: cursor + "AA" }), `${path} extended`)
    }
  })

  it("a cursor of another list or another organization is a 400", async () => {
    const all = lists(a.hookId)
    const cursors = new Map<string, string>()
    for (const { path } of all) cursors.set(path, (await get(path, a.key, { limit: "1" })).body.nextCursor)
    for (const { path } of all) {
      for (const { path: other } of all) {
        if (other !== path) {
          expectBadCursor(await get(path, a.key, { cursor: cursors.get(other)! }), `${other} cursor on ${path}`)
        }
      }
    }
    // Organization b presents a's cursors on the same lists (b's own webhook's log for the delivery list).
    for (const { path } of lists(b.hookId)) {
      const own = path.replace(b.hookId, a.hookId)
      expectBadCursor(await get(path, b.key, { cursor: cursors.get(own)! }), `a's ${own} cursor used by b`)
    }
    // The same list of the same organization still accepts it.
    expect((await get("/reviews", a.key, { limit: "1", cursor: cursors.get("/reviews")! })).status).toBe(200)
  })
})

describe("the cursor key", () => {
  it("CURSOR_SECRET seals the cursors instead of the store's generated key", async () => {
    const secret = "a configured cursor secret of 32+ characters"
    const { server, runtime, dispose } = makeServer(
      storeLayer({ _tag: "Memory" }, { cursorSecret: Redacted.make(secret) })
    )
    try {
      const { organizationId, key } = await server.provision()
      for (let i = 0; i < 2; i++) await server.request("POST", "/sites", { token: key, body: { name: `S${i}` } })
      const cursor: string = (await server.request("GET", "/sites?limit=1", { token: key })).body.nextCursor
      const binding: Kernel.CursorBinding = {
        endpoint: "sites",
        sort: { field: "createdAt", direction: "desc", type: "timestamp" },
        filter: Kernel.matchAll,
        search: undefined
      }
      expect(
        Result.isSuccess(
          Kernel.decodeCursor(cursor, binding, { key: Kernel.CursorKey.fromSecret(secret), organizationId })
        )
      )
        .toBe(true)
      // The store still keeps a generated secret; it does not open the configured key's cursors.
      const stored = await runtime.runPromise(
        Kernel.InstanceSecretRepository.use((r) => r.getOrCreate(Kernel.cursorSecretName, "unused"))
      )
      expect(stored).not.toBe(secret)
      expect(
        Result.isSuccess(
          Kernel.decodeCursor(cursor, binding, { key: Kernel.CursorKey.fromSecret(stored), organizationId })
        )
      )
        .toBe(false)
    } finally {
      await dispose()
    }
  })

  it("a CURSOR_SECRET shorter than 32 characters refuses to start", async () => {
    const exit = await Effect.runPromiseExit(Layer.build(Kernel.CursorKey.layer("too short")).pipe(Effect.scoped))
    expect(exit._tag).toBe("Failure")
    if (exit._tag === "Failure") expect(Cause.pretty(exit.cause)).toContain("at least 32 characters")
  })

  it("memory stores each generate their own key", async () => {
    const keyOf = () =>
      Effect.runPromise(
        Effect.gen(function*() {
          return yield* Kernel.CursorKey
        }).pipe(Effect.provide(MemoryStoreLayer))
      )
    const payload = new TextEncoder().encode("x")
    const [k1, k2] = [await keyOf(), await keyOf()]
    expect(Buffer.from(k1.tag(payload)).equals(Buffer.from(k2.tag(payload)))).toBe(false)
  })
})

const serverUrl = process.env["TEST_DATABASE_URL"] || undefined

describe.skipIf(serverUrl === undefined)("two processes on one PostgreSQL database (needs TEST_DATABASE_URL)", () => {
  it("generate one key on concurrent first use and accept each other's cursors", async () => {
    const url = await Effect.runPromise(freshServerDatabase(serverUrl!))
    const one = makeServer(PgStoreLayer({ _tag: "Server", url, maxConnections: 2 }))
    const two = makeServer(PgStoreLayer({ _tag: "Server", url, maxConnections: 2 }))
    try {
      // Both build their store (migrations, then the cursor key) at the same time on an empty database.
      const [org] = await Promise.all([one.server.provision(), two.server.provision()])
      for (let i = 0; i < 3; i++) {
        await one.server.request("POST", "/sites", { token: org.key, body: { name: `S${i}` } })
      }
      const whole = (await one.server.request("GET", "/sites", { token: org.key })).body.data.map((s: any) => s.id)
      const first = await one.server.request("GET", "/sites?limit=1", { token: org.key })
      const second = await two.server.request("GET", `/sites?limit=1&cursor=${first.body.nextCursor}`, {
        token: org.key
      })
      expect(second.status, second.text).toBe(200)
      const third = await one.server.request("GET", `/sites?limit=1&cursor=${second.body.nextCursor}`, {
        token: org.key
      })
      expect([...first.body.data, ...second.body.data, ...third.body.data].map((s: any) => s.id)).toEqual(whole)
      expect(third.body.nextCursor).toBeNull()
      // A restart (a third store layer, built later) accepts them too.
      const three = makeServer(PgStoreLayer({ _tag: "Server", url, maxConnections: 1 }))
      try {
        const again = await three.server.request("GET", `/sites?limit=1&cursor=${first.body.nextCursor}`, {
          token: org.key
        })
        expect(again.body.data).toEqual(second.body.data)
      } finally {
        await three.dispose()
      }
    } finally {
      await one.dispose()
      await two.dispose()
    }
  }, 60_000)
})
