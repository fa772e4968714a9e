// The shipped mounts in real Express, Fastify and Hono apps, as a host writes them: Express with an app-wide
// express.json() before the mount, Fastify's plugin under a prefix, Hono's route over the fetch handler. Each app
// keeps its own session on its own request object; `authenticate` maps the session "dashboard" to a dashboard user,
// who is never rate limited, while the organization's secret key spends a bucket of two requests a minute.
import { expressMount, fastifyMount, honoMount, makeNodeHandler, makeWebHandler } from "@feedback/adapter-http/server"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import express from "express"
import Fastify from "fastify"
import { Hono } from "hono"

const services = Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7)
const runtime = ManagedRuntime.make(Organizations.Organizations.layer.pipe(Layer.provideMerge(services)))
const { organizationId, secretKey } = await runtime.runPromise(Effect.gen(function*() {
  const organizations = yield* Organizations.Organizations
  const organization = yield* organizations.createOrganization({ name: "Framework shop", apiRequestsPerMinute: 2 })
  const { secretKey } = yield* organizations.issueSecretKey(organization.id, { permissions: Kernel.permissions })
  return { organizationId: organization.id, secretKey }
}))

/** The host's session, wherever its framework keeps it: Express's and Fastify's request, Hono's context. */
const sessionOf = (original) =>
  original.session ?? (typeof original.get === "function" ? original.get("session") : undefined)
const authenticate = ({ original }) =>
  sessionOf(original) === "dashboard"
    ? new Kernel.DashboardCaller({ organizationId, userId: "0190a000-0000-7000-8000-000000000001", name: "Dana" })
    : undefined
const api = await makeNodeHandler(services, { authenticate }, runtime.memoMap)
const web = makeWebHandler(services, { authenticate, workers: false }, runtime.memoMap)
const dashboard = { "x-session": "dashboard" }
const json = (body, headers = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})
const expect = (what, actual, expected) => {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
  }
}
// Express: express.json() for every route, the API mounted after it.
const app = express()
app.use(express.json())
app.use((req, _res, next) => {
  req.session = req.headers["x-session"]
  next()
})
app.post("/echo", (req, res) => res.json(req.body))
app.use("/api", expressMount(api))
const expressServer = app.listen(0, "127.0.0.1")
await new Promise((resolve) => expressServer.once("listening", resolve))
const expressUrl = `http://127.0.0.1:${expressServer.address().port}`
expect("Express's own route", await (await fetch(`${expressUrl}/echo`, json({ a: 1 }))).json(), { a: 1 })
const created = await fetch(
  `${expressUrl}/api/products`,
  json({ title: "Express mug", slug: "express-mug" }, dashboard)
)
expect("POST /api/products after express.json()", created.status, 201)
const dashboardStatuses = []
for (let i = 0; i < 6; i++) {
  const res = await fetch(`${expressUrl}/api/organization`, { headers: dashboard })
  dashboardStatuses.push([res.status, res.headers.get("x-ratelimit-remaining")])
}
expect("six dashboard requests", dashboardStatuses, Array(6).fill([200, null]))
const keyStatuses = []
for (let i = 0; i < 3; i++) {
  keyStatuses.push(
    (await fetch(`${expressUrl}/api/organization`, { headers: { authorization: `Bearer ${secretKey}` } }))
      .status
  )
}
expect("three secret-key requests on a bucket of two", keyStatuses, [200, 200, 429])
expect(
  "the dashboard user once the key's bucket is empty",
  (await fetch(`${expressUrl}/api/organization`, { headers: dashboard })).status,
  200
)
console.log(
  "Express: express.json() before the mount, POST /api/products → 201; dashboard 6 × 200 without rate-limit headers; key 200, 200, 429"
)

// Fastify: the plugin under a prefix, the session from an onRequest hook.
const fastify = Fastify()
fastify.decorateRequest("session", undefined)
fastify.addHook("onRequest", async (request) => {
  request.session = request.headers["x-session"]
})
await fastify.register(fastifyMount(api, { dispose: false }), { prefix: "/api" })
const fastifyUrl = await fastify.listen({ port: 0, host: "127.0.0.1" })
const fastifyCreated = await fetch(
  `${fastifyUrl}/api/products`,
  json({ title: "Fastify mug", slug: "fastify-mug" }, dashboard)
)
expect("Fastify POST /api/products", fastifyCreated.status, 201)
const fastifyList = await (await fetch(`${fastifyUrl}/api/products`, { headers: dashboard })).json()
expect("Fastify GET /api/products", fastifyList.data.map((p) => p.slug).sort(), ["express-mug", "fastify-mug"])
console.log("Fastify: plugin under /api, POST → 201, GET lists both products")

// Hono: the route over the fetch handler, the session in the context.
const hono = new Hono()
hono.use("*", async (c, next) => {
  c.set("session", c.req.header("x-session"))
  await next()
})
hono.all("/api/*", honoMount(web))
const honoCreated = await hono.fetch(
  new Request("http://host/api/products", json({ title: "Hono mug", slug: "hono-mug" }, dashboard))
)
expect("Hono POST /api/products", honoCreated.status, 201)
expect("Hono without a session or key", (await hono.fetch(new Request("http://host/api/organization"))).status, 401)
console.log("Hono: route /api/*, POST → 201, no session and no key → 401")

await new Promise((resolve) => expressServer.close(resolve))
await fastify.close()
await api.dispose()
await web.dispose()
await runtime.dispose()
