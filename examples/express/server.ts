/**
 * The Admin API mounted in an Express 5 app under `/api` with the shipped `expressMount`. The app parses JSON for
 * its own routes with an app-wide `express.json()`, ahead of the mount: the API then uses the parsed body (it
 * otherwise reads and limits bodies itself, so a host may as well leave `/api` out of its parsers).
 *
 *   node examples/express/server.ts          then   curl localhost:4000/api/health
 */
import { expressMount, makeNodeHandler } from "@feedback/adapter-http/server"
import express from "express"
import type { Server } from "node:http"
import { openHostStore, runningHost } from "../shared/HostStore.ts"

export const startExpressHost = async (port = Number(process.env["PORT"] ?? 4000)) => {
  const store = openHostStore()
  const api = await makeNodeHandler(store.services, {}, store.runtime.memoMap)
  const tenant = await store.provisionTenant("Express shop")

  const app = express()
  app.use(express.json())
  app.get("/", (_req, res) => {
    res.type("text/plain").send("the host's own page\n")
  })
  app.post("/echo", (req, res) => {
    res.json(req.body)
  })
  app.use("/api", expressMount(api))

  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, "127.0.0.1", () => resolve(s))
  })
  return runningHost(server, tenant.secretKey, api, store.runtime)
}

if (import.meta.main) {
  const host = await startExpressHost()
  console.log(`Express on ${host.url}; Admin API under ${host.url}/api — key ${host.key}`)
}
