/**
 * Delivery end to end: the server's own background dispatcher POSTs to a real receiver on loopback. Each scenario
 * registers a webhook subscribed to `webhook.created`, so creating it is the event it receives.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { type StoreServices, Webhooks } from "@feedback/core"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { Effect, Exit, Layer, Scope } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { closedPort, eventually, type Receiver, sleep, startReceiver } from "./WebhookReceiver.ts"

const TIMEOUT_MS = 400
const fast = { pollIntervalMs: 20, heartbeatIntervalMs: 200, leaseMs: 1_000 }

let receiver: Receiver
let server: TestServer
beforeAll(async () => {
  receiver = await startReceiver()
  server = makeTestServer(undefined, {
    webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: TIMEOUT_MS, dispatcher: fast }
  })
})
afterAll(async () => {
  await server.dispose()
  await receiver.close()
})

/** Registers a webhook to `url` (subscribed to its own creation) and waits for that delivery to finish. */
const deliverTo = async (url: string, extra: Record<string, unknown> = {}) => {
  const { key } = await server.provision()
  const created = await server.request("POST", "/webhooks", {
    token: key,
    body: { url, events: ["webhook.created"], ...extra }
  })
  expect(created.status).toBe(201)
  const row = await eventually(
    async () => {
      const log = await server.request("GET", `/webhooks/${created.body.id}/events`, { token: key })
      const first = log.body.data[0]
      return first !== undefined && first.status !== "pending" ? first : undefined
    },
    5_000,
    `the delivery to ${url}`
  )
  return { key, webhook: created.body, row }
}

const requestsTo = (path: string) => receiver.received.filter((r) => r.path === path)

describe("webhook delivery to a real receiver", () => {
  it("POSTs the envelope as JSON and records 2xx as delivered", async () => {
    const before = requestsTo("/ok").length
    const { row, webhook } = await deliverTo(receiver.url("/ok"))
    expect(row).toMatchObject({ status: "delivered", responseStatus: 200, error: null, event: "webhook.created" })
    expect(row.durationMs).toBeGreaterThanOrEqual(0)
    expect(row.attemptedAt).not.toBeNull()
    const got = requestsTo("/ok").slice(before)
    expect(got).toHaveLength(1)
    const request = got[0]!
    expect(request.headers["content-type"]).toBe("application/json")
    expect(request.headers["x-webhook-signature"]).toBeUndefined()
    const envelope = JSON.parse(request.raw.toString("utf8"))
    expect(Object.keys(envelope)).toEqual(["event", "timestamp", "idempotencyKey", "eventId", "data"])
    expect(envelope.eventId).toMatch(/^[0-9a-f-]{36}$/)
    expect(envelope).toEqual(row.payload)
    expect(envelope.idempotencyKey).toBe(row.idempotencyKey)
    expect(envelope.data).toEqual(webhook)
  })

  it("signs with the secret; a receiver using only node:crypto verifies the raw bytes", async () => {
    const secret = "whsec_" + "k".repeat(24)
    const before = requestsTo("/ok").length
    const { row } = await deliverTo(receiver.url("/ok"), { hmacSecret: secret })
    expect(row.status).toBe("delivered")
    const request = requestsTo("/ok").slice(before)[0]!
    const header = String(request.headers["x-webhook-signature"])
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/)
    const expected = createHmac("sha256", secret).update(request.raw).digest()
    const given = Buffer.from(header.slice("sha256=".length), "hex")
    expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true)
    const forged = createHmac("sha256", "wrong").update(request.raw).digest()
    expect(timingSafeEqual(given, forged)).toBe(false)
    expect(JSON.stringify(row)).not.toContain(secret)
  })

  it("sends the Standard Webhooks headers: the standardwebhooks package verifies every signed delivery, and refuses tampering", async () => {
    const secret = "a-webhook-secret-of-32-characters!"
    const before = requestsTo("/ok").length
    const { row } = await deliverTo(receiver.url("/ok"), { hmacSecret: secret })
    const request = requestsTo("/ok").slice(before)[0]!
    const headers = {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"])
    }
    expect(headers["webhook-id"]).toBe(row.idempotencyKey)
    expect(Math.abs(Number(headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60)
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    // The reference implementation, configured as its users do: whsec_ + base64 of the secret.
    const verifier = new StandardWebhook(Webhooks.standardWebhookSecret(secret))
    const body = request.raw.toString("utf8")
    expect(verifier.verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => verifier.verify(body.replace("webhook.created", "webhook.deleted"), headers)).toThrow()
    expect(() => verifier.verify(body, { ...headers, "webhook-id": "replayed-under-another-id" })).toThrow()
    expect(() =>
      new StandardWebhook(Webhooks.standardWebhookSecret("another-secret-of-32-characters!!")).verify(body, headers)
    )
      .toThrow()
    // And by hand: HMAC over "id.timestamp.body".
    const expected = createHmac("sha256", secret).update(
      `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`
    ).digest("base64")
    expect(headers["webhook-signature"]).toBe(`v1,${expected}`)
  })

  it("rotates the secret with an overlap: both secrets verify while it lasts; without overlap only the new one", async () => {
    const [oldSecret, newSecret, lastSecret] = [
      "old-secret-0123456789abcdef",
      "new-secret-0123456789abcdef",
      "last-secret-0123456789abcdef"
    ]
    const { key, webhook } = await deliverTo(receiver.url("/rotating"), {
      hmacSecret: oldSecret,
      events: ["webhook.created", "webhook.updated"]
    })
    const deliveryOf = async (n: number) => {
      const got = await eventually(
        async () => requestsTo("/rotating").length >= n ? requestsTo("/rotating")[n - 1] : undefined,
        5_000,
        `delivery ${n}`
      )
      const headers = {
        "webhook-id": String(got.headers["webhook-id"]),
        "webhook-timestamp": String(got.headers["webhook-timestamp"]),
        "webhook-signature": String(got.headers["webhook-signature"])
      }
      return { body: got.raw.toString("utf8"), headers, legacy: String(got.headers["x-webhook-signature"]) }
    }
    const verifies = (secret: string, d: Awaited<ReturnType<typeof deliveryOf>>) => {
      try {
        new StandardWebhook(Webhooks.standardWebhookSecret(secret)).verify(d.body, d.headers)
        return true
      } catch {
        return false
      }
    }
    // Rotating fires webhook.updated, delivered during the overlap (a day by default).
    const rotated = await server.request("POST", `/webhooks/${webhook.id}/rotate-secret`, {
      token: key,
      body: { hmacSecret: newSecret }
    })
    expect(rotated.status).toBe(200)
    expect(rotated.body.hasSecret).toBe(true)
    const during = await deliveryOf(2)
    expect(during.headers["webhook-signature"].split(" ")).toHaveLength(2)
    expect([verifies(newSecret, during), verifies(oldSecret, during), verifies(lastSecret, during)]).toEqual([
      true,
      true,
      false
    ])
    expect(during.legacy).toBe(`sha256=${createHmac("sha256", newSecret).update(during.body).digest("hex")}`)
    // No overlap: the replaced secret stops signing at once.
    await server.request("POST", `/webhooks/${webhook.id}/rotate-secret`, {
      token: key,
      body: { hmacSecret: lastSecret, overlapSeconds: 0 }
    })
    const after = await deliveryOf(3)
    expect([verifies(lastSecret, after), verifies(newSecret, after), verifies(oldSecret, after)]).toEqual([
      true,
      false,
      false
    ])
    // Bad input changes nothing.
    for (
      const body of [{ hmacSecret: "short" }, { hmacSecret: lastSecret, overlapSeconds: 604_801 }, {
        overlapSeconds: 10
      }]
    ) {
      const res = await server.request("POST", `/webhooks/${webhook.id}/rotate-secret`, { token: key, body })
      expect(res.status).toBe(400)
    }
  })

  it("redelivers on request: a new row and key, the same event and data, sent again; never on its own", async () => {
    const before = requestsTo("/ok").length
    const { key, webhook, row } = await deliverTo(receiver.url("/ok"))
    const again = await server.request("POST", `/webhooks/${webhook.id}/events/${row.id}/redeliver`, { token: key })
    expect(again.status).toBe(202)
    expect(again.body).toMatchObject({
      status: "pending",
      eventId: row.eventId,
      redeliveryOf: row.id,
      event: row.event
    })
    expect(again.body.idempotencyKey).not.toBe(row.idempotencyKey)
    const finished = await eventually(
      async () => {
        const log = await server.request("GET", `/webhooks/${webhook.id}/events`, { token: key })
        const r = log.body.data.find((d: { id: string }) => d.id === again.body.id)
        return r !== undefined && r.status !== "pending" ? r : undefined
      },
      5_000,
      "the redelivery"
    )
    expect(finished.status).toBe("delivered")
    const got = requestsTo("/ok").slice(before)
    expect(got).toHaveLength(2)
    const [first, second] = got.map((r) => JSON.parse(r.raw.toString("utf8")))
    expect(second).toEqual({ ...first, idempotencyKey: again.body.idempotencyKey })
    expect(got[1]!.headers["webhook-id"]).toBe(again.body.idempotencyKey)
    // Unknown or foreign deliveries are 404.
    const other = await server.provision()
    expect(
      (await server.request("POST", `/webhooks/${webhook.id}/events/${row.id}/redeliver`, { token: other.key })).status
    ).toBe(404)
    expect(
      (await server.request("POST", `/webhooks/${webhook.id}/events/00000000-0000-4000-8000-000000000000/redeliver`, {
        token: key
      })).status
    ).toBe(404)
  })

  it("pings: answers the finished test delivery, signed, logged with the webhook's deliveries", async () => {
    const secret = "ping-secret-0123456789abcdef"
    const { key, webhook } = await deliverTo(receiver.url("/ok"), { hmacSecret: secret })
    const before = requestsTo("/ok").length
    const pinged = await server.request("POST", `/webhooks/${webhook.id}/ping`, { token: key })
    expect(pinged.status).toBe(200)
    expect(pinged.body).toMatchObject({
      event: "webhook.ping",
      status: "delivered",
      responseStatus: 200,
      redeliveryOf: null
    })
    const got = requestsTo("/ok").slice(before)[0]!
    const body = got.raw.toString("utf8")
    expect(JSON.parse(body)).toMatchObject({ event: "webhook.ping", data: { id: webhook.id, hasSecret: true } })
    expect(body).not.toContain(secret)
    new StandardWebhook(Webhooks.standardWebhookSecret(secret)).verify(body, {
      "webhook-id": String(got.headers["webhook-id"]),
      "webhook-timestamp": String(got.headers["webhook-timestamp"]),
      "webhook-signature": String(got.headers["webhook-signature"])
    })
    const log = await server.request("GET", `/webhooks/${webhook.id}/events`, { token: key })
    expect(log.body.data[0]).toMatchObject({ id: pinged.body.id, event: "webhook.ping" })
    // A receiver that fails is reported, not hidden.
    const failing = await deliverTo(receiver.url("/fail"))
    const bad = await server.request("POST", `/webhooks/${failing.webhook.id}/ping`, { token: failing.key })
    expect(bad.body).toMatchObject({ status: "failed", responseStatus: 500 })
  })

  it("an unsigned webhook still gets webhook-id and webhook-timestamp, and no signature", async () => {
    const before = requestsTo("/ok").length
    const { row } = await deliverTo(receiver.url("/ok"))
    const request = requestsTo("/ok").slice(before)[0]!
    expect(request.headers["webhook-id"]).toBe(row.idempotencyKey)
    expect(request.headers["webhook-timestamp"]).toMatch(/^\d+$/)
    expect(request.headers["webhook-signature"]).toBeUndefined()
  })

  it("records a non-2xx answer as failed with its status and the first 1 KiB of the body", async () => {
    const { row } = await deliverTo(receiver.url("/fail"))
    expect(row.status).toBe("failed")
    expect(row.responseStatus).toBe(500)
    const excerpt = row.error.slice("HTTP 500: ".length)
    expect(row.error.startsWith("HTTP 500: EEE")).toBe(true)
    expect(Buffer.byteLength(excerpt, "utf8")).toBeLessThanOrEqual(1026) // 1024 bytes; a cut character may widen
    expect(excerpt).toContain("é")
  })

  it("fails a receiver that does not answer within the timeout, without holding the API", async () => {
    const { key } = await server.provision()
    const created = await server.request("POST", "/webhooks", {
      token: key,
      body: { url: receiver.url("/hang"), events: ["webhook.created"] }
    })
    expect(created.status).toBe(201)
    // The API answered before the delivery could finish: it is not failed yet.
    const early = await server.request("GET", `/webhooks/${created.body.id}/events`, { token: key })
    expect(early.body.data[0]?.status).not.toBe("failed")
    const row = await eventually(async () => {
      const log = await server.request("GET", `/webhooks/${created.body.id}/events`, { token: key })
      const first = log.body.data[0]
      return first?.status === "failed" ? first : undefined
    })
    expect(row).toMatchObject({ responseStatus: null, error: `timed out after ${TIMEOUT_MS} ms` })
    expect(row.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5)
    expect(row.durationMs).toBeLessThan(TIMEOUT_MS * 20) // cut at the deadline, not left to the receiver
  })

  it("records a refused connection as failed with the network error", async () => {
    const port = await closedPort()
    const { row } = await deliverTo(`http://127.0.0.1:${port}/x`)
    expect(row).toMatchObject({ status: "failed", responseStatus: null })
    expect(row.error).toMatch(/ECONNREFUSED/)
  })

  it("does not follow redirects", async () => {
    const okBefore = requestsTo("/ok").length
    const { row } = await deliverTo(receiver.url("/redirect"))
    expect(row).toMatchObject({ status: "failed", responseStatus: 302 })
    expect(row.error).toMatch(/^HTTP 302 \(redirects are not followed\)/)
    await sleep(100)
    expect(requestsTo("/ok").length).toBe(okBefore)
  })

  it("delivers each event once per subscribed webhook, with distinct idempotency keys, and never resends", async () => {
    const { key } = await server.provision()
    const hooks = []
    for (let i = 0; i < 3; i++) {
      const created = await server.request("POST", "/webhooks", {
        token: key,
        body: { url: receiver.url(`/ok?n=${i}`), events: ["webhook.updated"] }
      })
      hooks.push(created.body.id as string)
    }
    const before = receiver.received.length
    await server.request("PATCH", `/webhooks/${hooks[0]}`, {
      token: key,
      body: { events: ["webhook.updated", "webhook.deleted"] }
    })
    await server.request("PATCH", `/webhooks/${hooks[1]}`, { token: key, body: { hmacSecret: "x-secret-0123456789" } })
    await eventually(async () => (receiver.received.length - before >= 6 ? true : undefined))
    await sleep(200)
    const keys = receiver.received.slice(before).map((r) => JSON.parse(r.raw.toString("utf8")).idempotencyKey as string)
    expect(keys).toHaveLength(6)
    expect(new Set(keys).size).toBe(6)
  })
})

describe("graceful shutdown", () => {
  it("finishes in-flight deliveries before the server stops, and a restarted server does not resend them", async () => {
    const slow = await startReceiver({ slowMs: 400 })
    // One store shared by two server lifetimes, like a database across a restart.
    const scope = await Effect.runPromise(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(MemoryStoreLayer, scope))
    const store: Layer.Layer<StoreServices> = Layer.succeedContext(context)
    const options = { webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: 2_000, dispatcher: fast } }
    try {
      const first = makeTestServer(store, options)
      const { key } = await first.provision()
      const created = await first.request("POST", "/webhooks", {
        token: key,
        body: { url: slow.url("/slow"), events: ["webhook.created"] }
      })
      await eventually(async () => (slow.received.length > 0 ? true : undefined), 3_000, "the POST to start")
      expect(slow.answered).toHaveLength(0)
      await first.dispose()
      expect(slow.answered).toEqual(["/slow"]) // shutdown waited for the answer

      const second = makeTestServer(store, options)
      const log = await second.request("GET", `/webhooks/${created.body.id}/events`, { token: key })
      expect(log.body.data).toHaveLength(1)
      expect(log.body.data[0]).toMatchObject({ status: "delivered", responseStatus: 200 })
      await sleep(300)
      expect(slow.received).toHaveLength(1)
      await second.dispose()
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await slow.close()
    }
  })
})
