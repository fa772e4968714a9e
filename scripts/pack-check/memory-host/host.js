// A memory-only host in CommonJS: `require()` of every entry point it installed (ESM packages, loaded by Node's
// require(esm)), then the API over the memory store through the fetch-style handler, called in process.
const { makeWebHandler } = require("@feedback/adapter-http/server")
const { MemoryStoreLayer } = require("@feedback/adapter-memory")
const { Kernel, Organizations } = require("@feedback/core")
const { Effect, Layer, ManagedRuntime } = require("effect")

for (const entry of ["@feedback/adapter-http", "@feedback/client", "@feedback/client/effect", "@feedback/client/api"]) {
  if (Object.keys(require(entry)).length === 0) throw new Error(`require(${JSON.stringify(entry)}) exports nothing`)
}

const main = async () => {
  const services = Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7)
  const runtime = ManagedRuntime.make(Organizations.Organizations.layer.pipe(Layer.provideMerge(services)))
  const api = makeWebHandler(services, {}, runtime.memoMap)
  const { secretKey } = await runtime.runPromise(Effect.gen(function*() {
    const organizations = yield* Organizations.Organizations
    const organization = yield* organizations.createOrganization({ name: "CommonJS shop" })
    return yield* organizations.issueSecretKey(organization.id, { permissions: Kernel.permissions })
  }))
  const call = (method, path, body) =>
    api.handler(
      new Request(`http://shop.example${path}`, {
        method,
        headers: { authorization: `Bearer ${secretKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
  const organization = await call("GET", "/organization")
  const created = await call("POST", "/products", { title: "Required mug", slug: "required-mug" })
  if (organization.status !== 200 || created.status !== 201) {
    throw new Error(`answers ${organization.status}, ${created.status}: ${await created.text()}`)
  }
  console.log(
    `memory-only CommonJS host (Node ${process.versions.node}): GET /organization → ${
      (await organization.json()).name
    }; POST /products → ${created.status}`
  )
  await api.dispose()
  await runtime.dispose()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
