/**
 * A Fastify 5 host with the Admin API registered under `/api` through the shipped `fastifyMount`: a plugin whose
 * content-type parsers leave bodies to the API, and whose `onClose` stops the API's workers.
 *
 *   node examples/fastify/server.ts          then   curl localhost:4000/api/health
 */
import { fastifyMount, makeNodeHandler } from "@feedback/adapter-http/server"
import Fastify from "fastify"
import { openHostStore } from "../shared/HostStore.ts"

export const startFastifyHost = async (port = Number(process.env["PORT"] ?? 4000)) => {
  const store = openHostStore()
  const api = await makeNodeHandler(store.services, {}, store.runtime.memoMap)
  const app = Fastify()
  app.get("/", async () => "the host's own page\n")
  // The host's own JSON routes keep Fastify's parser: the mount's parsers are its own.
  app.post("/echo", async (request) => request.body)
  await app.register(fastifyMount(api), { prefix: "/api" })
  const tenant = await store.provisionTenant("Fastify shop")
  const url = await app.listen({ port, host: "127.0.0.1" })
  return {
    url,
    key: tenant.secretKey,
    /** Fastify's close runs the mount's onClose (the API's workers stop) before the store goes. */
    close: async () => {
      await app.close()
      await store.runtime.dispose()
    }
  }
}

if (import.meta.main) {
  const host = await startFastifyHost()
  console.log(`Fastify on ${host.url}; Admin API under ${host.url}/api — key ${host.key}`)
}
