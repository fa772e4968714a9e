// An embedding host: node:http serving its own page and the Admin API under /api, over the memory store.
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { makeNodeHandler } from "@feedback/adapter-http/server"
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"

const services = Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7)
const runtime = ManagedRuntime.make(Organizations.Organizations.layer.pipe(Layer.provideMerge(services)))
const api = await makeNodeHandler(services, {}, runtime.memoMap)
const { secretKey } = await runtime.runPromise(Effect.gen(function*() {
  const organizations = yield* Organizations.Organizations
  const organization = yield* organizations.createOrganization({ name: "Packed shop" })
  return yield* organizations.issueSecretKey(organization.id, { permissions: Kernel.permissions })
}))
const server = createServer((req, res) => {
  if (!req.url.startsWith("/api/")) return res.end("host page")
  req.url = req.url.slice(4)
  api.handler(req, res)
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${server.address().port}/api`
const organization = await fetch(`${base}/organization`, { headers: { authorization: `Bearer ${secretKey}` } })
const created = await fetch(`${base}/products`, {
  method: "POST",
  headers: { authorization: `Bearer ${secretKey}`, "content-type": "application/json" },
  body: JSON.stringify({ title: "Packed mug", slug: "packed-mug" })
})
if (organization.status !== 200 || created.status !== 201) {
  throw new Error(`answers ${organization.status}, ${created.status}`)
}
console.log(
  `embedded host: GET /organization → ${(await organization.json()).name}; POST /products → ${created.status}`
)
server.close()
await api.dispose()
await runtime.dispose()
