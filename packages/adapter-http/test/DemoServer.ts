/**
 * A real Node server on a loopback port over the memory store, seeded as `npm start` seeds an empty store: the demo
 * organization with its storefront (`seedDemo`), so `/demo` is live. Its use-cases share the server's store (one memo
 * map), for what a test must set up or read without HTTP.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { CoreLayer, Kernel, type StoreServices } from "@feedback/core"
import { type Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { ApiServerOptions } from "../src/server/ApiServer.ts"
import { makeNodeHandler, type NodeHandler } from "../src/server/NodeHandler.ts"
import { type DemoSlot, seedDemo } from "../src/server/organizations/DemoSeed.ts"
import { NodeHostResolver } from "../src/server/webhooks/NodeWebhookTransport.ts"

type Services = StoreServices | Kernel.IdGenerator | Layer.Success<typeof CoreLayer>

export interface DemoServer {
  readonly origin: string
  readonly organizationId: Kernel.OrganizationId
  /** The demo organization's secret key (every permission). */
  readonly secretKey: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<A>
  /** An admin API call as the demo key: status and JSON body. */
  readonly admin: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>
  readonly close: () => Promise<void>
}

export const startDemoServer = async (
  options: Omit<ApiServerOptions, "demo" | "serverUrl"> = { workers: false },
  siteDomain = "shop.test"
): Promise<DemoServer> => {
  const Store = Layer.mergeAll(MemoryStoreLayer, Kernel.IdGenerator.uuidV7)
  const runtime = ManagedRuntime.make(CoreLayer.pipe(Layer.provideMerge(Layer.merge(Store, NodeHostResolver))))
  const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)
  const slot: DemoSlot = { current: undefined }

  let api: NodeHandler | undefined
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => api!.handler(req, res))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // The handler first, in the runtime's memo map: the store is shared, and the use-cases the runtime then reuses are
  // the ones built with the server's configuration (its URL in email links).
  api = await makeNodeHandler(Store, { ...options, demo: slot, serverUrl: origin }, runtime.memoMap)
  const seeded = await run(seedDemo(undefined, siteDomain))
  if (seeded._tag !== "Created") throw new Error(`demo not seeded: ${seeded._tag}`)
  slot.current = seeded.organizationId

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${origin}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${seeded.secretKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: await response.json().catch(() => null) }
  }
  return {
    origin,
    organizationId: seeded.organizationId,
    secretKey: seeded.secretKey,
    run,
    admin,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await api!.dispose()
      await runtime.dispose()
    }
  }
}
