// A TypeScript host type-checked against the published declarations (strict, noUnusedLocals, skipLibCheck: false).
import { makeNodeHandler, makeWebHandler, type ApiServerOptions } from "@feedback/adapter-http/server"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { createAdminApiClient } from "@feedback/client"
import { AdminClient, AdminClientLayer } from "@feedback/client/effect"
import { Catalog, Kernel } from "@feedback/core"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"

const options: ApiServerOptions = { workers: false }
const services = Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7)
export const web = makeWebHandler(services, options)
export const pg = PgStoreLayer({ _tag: "Embedded", dataDir: "./.data" })

export const serve = async (): Promise<void> => {
  const api = await makeNodeHandler(services, options)
  createServer(api.handler).listen(0)
}

export const listProducts = (organizationId: Kernel.OrganizationId, userId: Kernel.UserId) =>
  Catalog.Catalogs.use((catalogs) => catalogs.listProducts({ limit: 10 })).pipe(
    Effect.provideService(Kernel.CurrentCaller, new Kernel.DashboardCaller({ organizationId, userId, name: "Dana" }))
  )

export const fetchOrganizationName = async (secretKey: string): Promise<string | undefined> => {
  const client = createAdminApiClient({ baseUrl: "http://127.0.0.1:3000", secretKey })
  const { data } = await client.GET("/organization")
  return data?.name
}

export const effectClient = Effect.gen(function*() {
  const client = yield* AdminClient
  return (yield* client.organization.get()).name
}).pipe(Effect.provide(AdminClientLayer({ baseUrl: "http://127.0.0.1:3000", secretKey: "sk_x" })))
