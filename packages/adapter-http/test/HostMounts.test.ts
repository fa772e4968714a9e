/**
 * The shipped host mounts in real Express, Fastify, Hono and `node:http` apps, with the options every mount takes:
 * - a body the host's own parser read first is used as parsed, or answered with a 500 naming the fix, never a 400;
 * - `authenticate` maps the host's session (set by its own middleware, on its own request object) to a dashboard
 *   caller (never rate limited), to an organization's caller (charged like a key), or to nobody (the key decides);
 * - `tracer` receives the requests' spans and `logRecord` the log records as objects.
 */
import { Kernel, Organizations } from "@feedback/core"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Effect, Layer, ManagedRuntime, Tracer } from "effect"
import express from "express"
import Fastify from "fastify"
import { Hono } from "hono"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LogRecord } from "../src/server/ApiServer.ts"
import { makeWebHandler } from "../src/server/ApiServer.ts"
import type { HostRequest } from "../src/server/HostAuthentication.ts"
import { SPENT_BODY_MESSAGE } from "../src/server/HostBody.ts"
import { expressMount, fastifyMount, honoMount, nodeMount } from "../src/server/HostMounts.ts"
import { makeNodeHandler, type NodeHandler } from "../src/server/NodeHandler.ts"

const services = Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7)
const runtime = ManagedRuntime.make(Organizations.Organizations.layer.pipe(Layer.provideMerge(services)))

let organizationId: Kernel.OrganizationId
let secretKey: string
const spans: Array<string> = []
const records: Array<LogRecord> = []
const tracer = Tracer.make({
  span(options) {
    spans.push(options.name)
    return Tracer.nativeTracer.span(options)
  }
})

/** The host's session, wherever its framework keeps it on its own request object. */
const sessionOf = (original: unknown): string | undefined => {
  const o = original as { session?: string; get?: (key: string) => unknown }
  return o.session ?? (typeof o.get === "function" ? o.get("session") as string | undefined : undefined)
}

/** The host's sessions: a dashboard user, an agent with read access to reviews (charged), anything else nobody. */
const authenticate = ({ original }: HostRequest): Effect.Effect<Kernel.Caller | undefined> =>
  Effect.sync(() => {
    const session = sessionOf(original)
    if (session === "dashboard") {
      return new Kernel.DashboardCaller({
        organizationId,
        userId: "0190a000-0000-7000-8000-000000000001" as Kernel.UserId,
        name: "Support agent"
      })
    }
    if (session === "agent") {
      return new Kernel.SecretKeyCaller({
        organizationId,
        keyId: "0190a000-0000-7000-8000-000000000002" as Kernel.SecretKeyId,
        permissions: new Set(["reviews:read" as const])
      })
    }
    return undefined
  })

const options = { authenticate, tracer, logRequests: true, logRecord: (r: LogRecord) => records.push(r) }
let api: NodeHandler
const web = makeWebHandler(services, { ...options, workers: false }, runtime.memoMap)

beforeAll(async () => {
  const provisioned = await runtime.runPromise(Effect.gen(function*() {
    const organizations = yield* Organizations.Organizations
    // A small plan, so that charged callers run out within a test and dashboard callers visibly do not.
    const organization = yield* organizations.createOrganization({ name: "Host shop", apiRequestsPerMinute: 3 })
    // Keys are checked on an organization of their own, whose bucket the charged tests here do not empty.
    const keyed = yield* organizations.createOrganization({ name: "Keyed shop" })
    const { secretKey } = yield* organizations.issueSecretKey(keyed.id, { permissions: Kernel.permissions })
    return { organizationId: organization.id, secretKey }
  }))
  organizationId = provisioned.organizationId
  secretKey = provisioned.secretKey
  api = await makeNodeHandler(services, { ...options, workers: false }, runtime.memoMap)
})
afterAll(async () => {
  await api.dispose()
  await web.dispose()
  await runtime.dispose()
})

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(`http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`)
    })
  )

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

describe("expressMount behind an app-wide express.json()", () => {
  let server: Server
  let url: string
  beforeAll(async () => {
    const app = express()
    app.use(express.json())
    app.use(express.urlencoded({ extended: false }))
    app.use((req, _res, next) => {
      ;(req as { session?: string | undefined }).session = req.headers["x-session"] as string | undefined
      next()
    })
    app.use("/api", expressMount(api))
    server = createServer(app)
    url = await listen(server)
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("uses the body express.json() already parsed", async () => {
    const res = await fetch(
      `${url}/api/products`,
      json({ title: "Parsed mug", slug: "parsed-mug" }, { "x-session": "dashboard" })
    )
    expect(res.status, await res.clone().text()).toBe(201)
    expect(((await res.json()) as { slug: string }).slug).toBe("parsed-mug")
  })

  it("answers a body parsed into a form with a 500 that names the fix, not a 400", async () => {
    const res = await fetch(`${url}/api/products`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-session": "dashboard" },
      body: "title=Form"
    })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: { code: "INTERNAL", message: SPENT_BODY_MESSAGE } })
  })

  it("never rate limits a host-authenticated dashboard user", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${url}/api/organization`, { headers: { "x-session": "dashboard" } })
      statuses.push(res.status)
      expect(res.headers.get("x-ratelimit-remaining")).toBeNull()
    }
    expect(statuses).toEqual(Array(8).fill(200))
  })

  it("charges an organization's caller the host made, with only the permissions it was given", async () => {
    const forbidden = await fetch(`${url}/api/organization`, { headers: { "x-session": "agent" } })
    expect(forbidden.status).toBe(403)
    const statuses: Array<number> = []
    for (let i = 0; i < 6; i++) {
      statuses.push((await fetch(`${url}/api/reviews?limit=1`, { headers: { "x-session": "agent" } })).status)
    }
    expect(statuses.slice(0, 1)).toEqual([200])
    expect(statuses).toContain(429)
  })

  it("leaves a request the host does not recognise to the bearer key", async () => {
    expect((await fetch(`${url}/api/organization`)).status).toBe(401)
    expect((await fetch(`${url}/api/organization`, { headers: { "x-session": "stranger" } })).status).toBe(401)
  })

  it("records the requests' spans with the host's tracer and its log records as objects", async () => {
    await fetch(`${url}/api/organization`, { headers: { "x-session": "dashboard" } })
    expect(spans).toContain("GET /organization")
    expect(spans).toContain("Organizations.current")
    const line = records.find((r) => r["route"] === "/organization")
    expect(line).toMatchObject({ level: "info", method: "GET", status: 200 })
    expect(typeof line?.time).toBe("string")
  })
})

describe("fastifyMount", () => {
  const app = Fastify()
  let url: string
  beforeAll(async () => {
    app.decorateRequest("session", undefined)
    app.addHook("onRequest", async (request) => {
      ;(request as unknown as { session?: string | undefined }).session = request.headers["x-session"] as
        | string
        | undefined
    })
    app.post("/echo", async (request) => request.body)
    await app.register(fastifyMount(api, { dispose: false }), { prefix: "/api" })
    url = await app.listen({ port: 0, host: "127.0.0.1" })
  })
  afterAll(() => app.close())

  it("serves the API below its prefix with bodies intact, and the host's own JSON routes keep their parser", async () => {
    const created = await fetch(
      `${url}/api/products`,
      json({ title: "Fastify mug", slug: "fastify-mug" }, { "x-session": "dashboard" })
    )
    expect(created.status, await created.clone().text()).toBe(201)
    expect(await (await fetch(`${url}/echo`, json({ a: 1 }))).json()).toEqual({ a: 1 })
    expect((await fetch(`${url}/api/health`)).status).toBe(200)
    expect((await fetch(`${url}/api/organization`, { headers: { authorization: `Bearer ${secretKey}` } })).status)
      .toBe(200)
  })

  it("gives authenticate the Fastify request its hooks decorated", async () => {
    const res = await fetch(`${url}/api/organization`, { headers: { "x-session": "dashboard" } })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-ratelimit-remaining")).toBeNull()
  })
})

describe("honoMount", () => {
  const app = new Hono<{ Variables: { session: string | undefined } }>()
  app.use("*", async (c, next) => {
    c.set("session", c.req.header("x-session"))
    // A host middleware that reads every JSON body first.
    if (c.req.header("content-type")?.startsWith("application/json") === true) await c.req.json().catch(() => null)
    await next()
  })
  app.all("/api/*", honoMount(web))

  it("serves the API below the route with a body Hono's middleware already read", async () => {
    const res = await app.fetch(
      new Request(
        "http://host/api/products",
        json({ title: "Hono mug", slug: "hono-mug" }, { "x-session": "dashboard" })
      )
    )
    expect(res.status, await res.clone().text()).toBe(201)
    const malformed = await app.fetch(
      new Request("http://host/api/products", { ...json(null, { "x-session": "dashboard" }), body: "{\"title\":" })
    )
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe("INVALID_REQUEST")
  })

  it("gives authenticate Hono's context", async () => {
    const res = await app.fetch(new Request("http://host/api/organization", { headers: { "x-session": "dashboard" } }))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-ratelimit-remaining")).toBeNull()
    expect((await app.fetch(new Request("http://host/api/organization"))).status).toBe(401)
  })
})

describe("nodeMount", () => {
  let server: Server
  let url: string
  beforeAll(async () => {
    const mount = nodeMount(api, "/api/")
    server = createServer((req, res) => {
      ;(req as { session?: string | undefined }).session = req.headers["x-session"] as string | undefined
      if (!mount(req, res)) res.writeHead(200, { "content-type": "text/plain" }).end("host page")
    })
    url = await listen(server)
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("serves the prefix and leaves every other path to the host", async () => {
    expect(await (await fetch(`${url}/apiary`)).text()).toBe("host page")
    expect((await fetch(`${url}/api/health`)).status).toBe(200)
    expect((await fetch(`${url}/api?x=1`)).status).toBe(404)
    const res = await fetch(`${url}/api/organization`, { headers: { "x-session": "dashboard" } })
    expect(((await res.json()) as { name: string }).name).toBe("Host shop")
  })
})
