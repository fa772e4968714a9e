/**
 * A Fastify 5 host with the Admin API registered as a plugin under `/api`.
 *
 *   node examples/fastify/server.ts          then   curl localhost:4000/api/health
 */
import Fastify from "fastify"
import { openHostStore } from "../shared/HostStore.ts"
import { adminApiPlugin } from "./plugin.ts"

export const startFastifyHost = async (port = Number(process.env["PORT"] ?? 4000)) => {
  const store = openHostStore()
  const app = Fastify()
  app.get("/", async () => "the host's own page\n")
  await app.register(adminApiPlugin, { prefix: "/api", services: store.services, memoMap: store.runtime.memoMap })
  const tenant = await store.provisionTenant("Fastify shop")
  const url = await app.listen({ port, host: "127.0.0.1" })
  return {
    url,
    key: tenant.secretKey,
    /** Fastify's close runs the plugin's onClose (the API's workers stop) before the store goes. */
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
