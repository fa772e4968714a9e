/**
 * The example receiver: verifies signatures on the raw bytes, de-duplicates by idempotency key, and works against
 * the real server's dispatcher end to end.
 */
import { makeWebHandler } from "@feedback/adapter-http/server"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { IdGenerator, signWebhookBody } from "@feedback/core"
import { Layer, Redacted } from "effect"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { createReceiver, type WebhookEnvelope } from "./receiver.ts"

const SECRET = "whsec_example_secret_0123456789"
const servers: Array<Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve))
})

const listen = async (server: Server) => {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`
}

const envelope = (key: string) =>
  JSON.stringify({ event: "review.created", timestamp: "2026-01-31T12:00:00.000Z", idempotencyKey: key, data: { id: "r1", title: "Grüße" } })

const post = (url: string, body: string, signature?: string) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(signature === undefined ? {} : { "x-webhook-signature": signature }) },
    body
  })

describe("example webhook receiver", () => {
  it("accepts a correctly signed delivery once and ignores a repeat of its key", async () => {
    const events: Array<WebhookEnvelope> = []
    const url = await listen(createReceiver({ secret: SECRET, onEvent: (e) => void events.push(e), log: () => {} }))
    const body = envelope("7f2c3a9e-1d2b-4c5d-8e9f-0a1b2c3d4e5f")
    const first = await post(url, body, signWebhookBody(body, SECRET))
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ received: true })
    const again = await post(url, body, signWebhookBody(body, SECRET))
    expect(await again.json()).toEqual({ duplicate: true })
    expect(events.map((e) => e.idempotencyKey)).toEqual(["7f2c3a9e-1d2b-4c5d-8e9f-0a1b2c3d4e5f"])
    expect(events[0]?.data).toEqual({ id: "r1", title: "Grüße" })
  })

  it("refuses a missing, forged or stale signature and a tampered body", async () => {
    const events: Array<WebhookEnvelope> = []
    const url = await listen(createReceiver({ secret: SECRET, onEvent: (e) => void events.push(e), log: () => {} }))
    const body = envelope("8f2c3a9e-1d2b-4c5d-8e9f-0a1b2c3d4e5f")
    expect((await post(url, body)).status).toBe(401)
    expect((await post(url, body, signWebhookBody(body, "another secret"))).status).toBe(401)
    expect((await post(url, body.replace("r1", "r2"), signWebhookBody(body, SECRET))).status).toBe(401)
    // Same JSON, different bytes: verification is on the raw body, not on re-serialised JSON.
    const reformatted = JSON.stringify(JSON.parse(body), null, 2)
    expect((await post(url, reformatted, signWebhookBody(body, SECRET))).status).toBe(401)
    expect(events).toEqual([])
    expect((await post(url, "not json", signWebhookBody("not json", SECRET))).status).toBe(400)
  })

  it("receives and verifies real deliveries from the server's dispatcher", async () => {
    const events: Array<WebhookEnvelope> = []
    const url = await listen(createReceiver({ secret: SECRET, onEvent: (e) => void events.push(e), log: () => {} }))
    const { handler, dispose } = makeWebHandler(Layer.merge(MemoryStoreLayer, IdGenerator.uuidV7), {
      operatorToken: Redacted.make("op"),
      webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: 2_000, dispatcher: { pollIntervalMs: 20 } }
    })
    try {
      const call = async (method: string, path: string, token: string, body?: unknown) => {
        const res = await handler(new Request(`http://api${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }))
        return (await res.json()) as any
      }
      const org = await call("POST", "/operator/organizations", "op", { name: "Example" })
      const { secretKey } = await call("POST", `/operator/organizations/${org.id}/keys`, "op", { permissions: ["settings:write"] })
      const webhook = await call("POST", "/webhooks", secretKey, { url, events: ["webhook.created", "webhook.updated"], hmacSecret: SECRET })
      await call("PATCH", `/webhooks/${webhook.id}`, secretKey, { events: ["webhook.updated", "webhook.created"] })
      const deadline = Date.now() + 5_000
      while (events.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      // Deliveries run concurrently: arrival order is not event order.
      expect(events.map((e) => e.event).sort()).toEqual(["webhook.created", "webhook.updated"])
      for (const e of events) expect(e.data).toMatchObject({ id: webhook.id, hasSecret: true })
    } finally {
      await dispose()
    }
  })
})
