/**
 * What every example host does before mounting the API: open the store it chose (`DATABASE_URL`: `memory` by
 * default here, `postgres://…` a server, empty the embedded PGlite in `DATA_DIR`) and keep a runtime over it for the
 * host's own code. Passing `runtime.memoMap` to the API's handler makes both share that one store.
 */
import { chooseStore, storeLayer } from "@feedback/adapter-http/server"
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Layer, ManagedRuntime } from "effect"

export const openHostStore = (databaseUrl = process.env["DATABASE_URL"] ?? "memory") => {
  const services = storeLayer(chooseStore(databaseUrl, process.env["DATA_DIR"] ?? "./.data"))
  const runtime = ManagedRuntime.make(Organizations.Organizations.layer.pipe(Layer.provideMerge(services)))
  /** The host provisions its tenants through the core directly (no HTTP): an organization and a full key. */
  const provisionTenant = (name: string) =>
    runtime.runPromise(Effect.gen(function*() {
      const organizations = yield* Organizations.Organizations
      const organization = yield* organizations.createOrganization({ name })
      const { secretKey } = yield* organizations.issueSecretKey(organization.id, { permissions: Kernel.permissions })
      return { organizationId: organization.id, secretKey }
    }))
  return { services, runtime, provisionTenant }
}

export const urlOf = (address: ReturnType<import("node:net").Server["address"]>) =>
  `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`

/**
 * What an example host hands its caller: where it listens, the tenant's key, and a `close` that stops the server
 * first (no new requests), then the API (its workers finish in-flight work), then the store.
 */
export const runningHost = (
  server: import("node:net").Server,
  key: string,
  ...resources: ReadonlyArray<{ readonly dispose: () => Promise<void> }>
) => ({
  url: urlOf(server.address()),
  key,
  close: async () => {
    await new Promise((resolve) => server.close(resolve))
    for (const resource of resources) await resource.dispose()
  }
})
