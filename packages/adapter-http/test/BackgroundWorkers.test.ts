/**
 * Routes and background workers are separate layers: a web handler built with `workers: false` (a host serving
 * requests from a short-lived process) answers every request but never delivers a webhook; the same store served
 * with workers (the default) delivers what was waiting in the outbox.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Kernel } from "@feedback/core"
import { Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiServerOptions, makeWebHandler } from "../src/server/ApiServer.ts"
import { allPermissions, OPERATOR_TOKEN, requestVia, type TestRequest } from "./Http.ts"
import { eventually, type Receiver, startReceiver } from "./WebhookReceiver.ts"

const fast = { pollIntervalMs: 20, heartbeatIntervalMs: 200, leaseMs: 1_000 }
const options: ApiServerOptions = {
  operatorToken: Redacted.make(OPERATOR_TOKEN),
  webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: 1_000, dispatcher: fast }
}

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

/** An organization, its key and a webhook of `webhook.created` to a path of its own, through `request`. */
const webhookOf = async (request: TestRequest, name: string) => {
  const org = await request("POST", "/operator/organizations", { token: OPERATOR_TOKEN, body: { name } })
  expect(org.status).toBe(201)
  const key = await request("POST", `/operator/organizations/${org.body.id}/keys`, {
    token: OPERATOR_TOKEN,
    body: { permissions: allPermissions }
  })
  expect(key.status).toBe(201)
  const secret: string = key.body.secretKey
  expect((await request("GET", "/organization", { token: secret })).status).toBe(200)
  const path = `/${name.toLowerCase().replaceAll(" ", "-")}-${Date.now()}`
  const created = await request("POST", "/webhooks", {
    token: secret,
    body: { url: receiver.url(path), events: ["webhook.created"] }
  })
  expect(created.status).toBe(201)
  return { secret, webhookId: created.body.id as string, path }
}

describe("background workers are opt-in", () => {
  it("without workers the handler answers but never delivers; with workers the waiting delivery goes out", async () => {
    // One store shared by both handlers, as two processes on one database would share it.
    const storeRuntime = ManagedRuntime.make(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7))
    const store = Layer.succeedContext(await storeRuntime.context())
    const requestsOnly = makeWebHandler(store, { ...options, workers: false })
    const request = requestVia(requestsOnly.handler)
    // The yardstick: a handler with workers, over a store of its own.
    const control = makeWebHandler(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7), options)
    let withWorkers: ReturnType<typeof makeWebHandler> | undefined
    try {
      const { secret, webhookId, path } = await webhookOf(request, "Serverless")
      const yardstick = await webhookOf(requestVia(control.handler), "With workers")

      // The handler with workers delivers its event, made later; by then the one without has sent nothing and
      // fanned nothing out (a comparison, not a fixed pause).
      await eventually(
        async () => receiver.received.some((r) => r.path === yardstick.path) || undefined,
        5_000,
        "the delivery by the handler with workers"
      )
      expect(receiver.received.filter((r) => r.path === path)).toHaveLength(0)
      const log = await request("GET", `/webhooks/${webhookId}/events`, { token: secret })
      expect(log.status).toBe(200)
      expect(log.body.data).toEqual([])

      // A process with workers over the same store delivers the event that waited in the outbox.
      withWorkers = makeWebHandler(store, options)
      await withWorkers.handler(new Request("http://test/health"))
      const delivered = await eventually(
        async () => {
          const page = await request("GET", `/webhooks/${webhookId}/events`, { token: secret })
          const first = page.body.data[0]
          return first !== undefined && first.status !== "pending" ? first : undefined
        },
        5_000,
        "the delivery by the process with workers"
      )
      expect(delivered).toMatchObject({ status: "delivered", event: "webhook.created" })
      expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1)
    } finally {
      await withWorkers?.dispose()
      await requestsOnly.dispose()
      await control.dispose()
      await storeRuntime.dispose()
    }
  })
})
