// A host whose database already has its own schema_migrations, products and customers: after a separate migration
// step (feedback-pg-migrate, run by pack-check with the owner's rights), it embeds the API over its own PgClient (no
// column naming) connected as a role with only read/write rights, the store started with migrate: false; an
// in-process consumer of the committed events receives the review.created of a review the API imported.
import { makeNodeHandler, nodeMount } from "@feedback/adapter-http/server"
import { PgHostStoreLayer } from "@feedback/adapter-postgres"
import { Kernel, Organizations, Webhooks } from "@feedback/core"
import { PgClient } from "@effect/sql-pg"
import { Effect, Fiber, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"

const hostClient = PgClient.layer({ url: Redacted.make(process.env.APP_URL), maxConnections: 2 })
const services = Layer.mergeAll(PgHostStoreLayer({ migrate: false, maxConnections: 4 }), Kernel.IdGenerator.uuidV7)
  .pipe(
    Layer.provideMerge(hostClient)
  )
const runtime = ManagedRuntime.make(Organizations.Organizations.layer.pipe(Layer.provideMerge(services)))
const api = await makeNodeHandler(services, {}, runtime.memoMap)
const { secretKey, hostCustomers } = await runtime.runPromise(Effect.gen(function*() {
  const organizations = yield* Organizations.Organizations
  const organization = yield* organizations.createOrganization({ name: "Shop with its own database" })
  const { secretKey } = yield* organizations.issueSecretKey(organization.id, { permissions: Kernel.permissions })
  // The host's own client is still the host's: its tables, its column names.
  const sql = yield* SqlClient.SqlClient
  const hostCustomers = yield* sql`SELECT email_address FROM customers ORDER BY id`
  return { secretKey, hostCustomers }
}))
if (JSON.stringify(hostCustomers) !== JSON.stringify([{ email_address: "host@example.com" }])) {
  throw new Error(`the host's client reads its customers as ${JSON.stringify(hostCustomers)}`)
}

const mount = nodeMount(api, "/api")
const server = createServer((req, res) => mount(req, res) || res.end("host page"))
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${server.address().port}/api`
const headers = { authorization: `Bearer ${secretKey}`, "content-type": "application/json" }
const created = await fetch(`${base}/products`, {
  method: "POST",
  headers,
  body: JSON.stringify({ title: "Mug beside the shop's products", slug: "beside-mug" })
})
if (created.status !== 201) throw new Error(`POST /products → ${created.status}: ${await created.text()}`)
const listed = await (await fetch(`${base}/products`, { headers })).json()
if (listed.data.map((p) => p.slug).join() !== "beside-mug") throw new Error(`GET /products → ${JSON.stringify(listed)}`)
// The host's consumer, in its own process: every organization's committed review.created events.
const received = []
const consumer = runtime.runFork(
  Stream.runForEach(
    Webhooks.committedEvents({ events: ["review.created"] }),
    ({ event }) => Effect.sync(() => received.push(event))
  )
)
const imported = await fetch(`${base}/reviews/import`, {
  method: "POST",
  headers,
  body: JSON.stringify({ data: [{ product: "beside-mug", rating: 4, title: "Solid", customer: "ann@example.com" }] })
})
if (imported.status !== 200) throw new Error(`POST /reviews/import → ${imported.status}: ${await imported.text()}`)
const [review] = (await imported.json()).imported
for (let i = 0; i < 600 && received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
await Effect.runPromise(Fiber.interrupt(consumer))
if (received.length !== 1 || received[0].event !== "review.created" || received[0].data.id !== review.id) {
  throw new Error(`the consumer received ${JSON.stringify(received)}, expected review.created of ${review.id}`)
}
console.log(
  "host database: the API's product stored and listed as a DML-only role over the host's PgClient (migrate: false); the host's own customers read through the same client; review.created received in process"
)
server.close()
await api.dispose()
await runtime.dispose()
