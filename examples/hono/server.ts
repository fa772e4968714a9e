/**
 * The Admin API mounted in a Hono app with the shipped `honoMount`. Hono speaks `Request → Response`, so it takes the
 * API's fetch-style handler (`makeWebHandler`); the mount strips the route's `/api` prefix. A host middleware that
 * reads the JSON body first (`c.req.json()`) is fine: the mount takes the body from Hono's cache. Served here by
 * `@hono/node-server`; the same app runs on any runtime Hono supports.
 *
 *   node examples/hono/server.ts             then   curl localhost:4000/api/health
 */
import { serve } from "@hono/node-server"
import { honoMount, makeWebHandler } from "@feedback/adapter-http/server"
import { Hono } from "hono"
import { openHostStore, runningHost } from "../shared/HostStore.ts"

export const startHonoHost = async (port = Number(process.env["PORT"] ?? 4000)) => {
  const store = openHostStore()
  const api = makeWebHandler(store.services, {}, store.runtime.memoMap)
  const tenant = await store.provisionTenant("Hono shop")

  const app = new Hono()
  app.get("/", (c) => c.text("the host's own page\n"))
  // A host middleware reading every JSON body before the routes (an audit log, say).
  app.use("*", async (c, next) => {
    if (c.req.header("content-type")?.startsWith("application/json") === true) await c.req.json().catch(() => null)
    await next()
  })
  app.post("/echo", async (c) => c.json(await c.req.json()))
  app.all("/api/*", honoMount(api))

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve(s))
  })
  return runningHost(server, tenant.secretKey, api, store.runtime)
}

if (import.meta.main) {
  const host = await startHonoHost()
  console.log(`Hono on ${host.url}; Admin API under ${host.url}/api — key ${host.key}`)
}
