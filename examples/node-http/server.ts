/**
 * The Admin API inside a plain `node:http` host: `nodeMount` hands everything under `/api` to the API's Node handler
 * (which reads the request itself: bodies stream, repeated headers stay repeated) and the host serves the rest.
 *
 *   node examples/node-http/server.ts        then   curl localhost:4000/api/health
 */
import { makeNodeHandler, nodeMount } from "@feedback/adapter-http/server"
import { createServer } from "node:http"
import { openHostStore, runningHost } from "../shared/HostStore.ts"

const PREFIX = "/api"

export const startNodeHttpHost = async (port = Number(process.env["PORT"] ?? 4000)) => {
  const store = openHostStore()
  const api = await makeNodeHandler(store.services, {}, store.runtime.memoMap)
  const tenant = await store.provisionTenant("node:http shop")

  const mount = nodeMount(api, PREFIX)
  const server = createServer((req, res) => {
    if (mount(req, res)) return
    res.writeHead(200, { "content-type": "text/plain" }).end("the host's own page\n")
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return runningHost(server, tenant.secretKey, api, store.runtime)
}

if (import.meta.main) {
  const host = await startNodeHttpHost()
  console.log(`host on ${host.url}; Admin API under ${host.url}${PREFIX} — key ${host.key}`)
}
