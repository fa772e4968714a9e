/**
 * Noisy neighbours (docs/FAIRNESS.md): for each resource organizations share, an aggressor organization at its
 * limits and a victim organization whose latency is compared with the same victim alone, in the same run (the cases
 * are in `NoisyNeighbours.ts`). Memory, and a PostgreSQL server when TEST_DATABASE_URL is set.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { type StoreServices, Webhooks } from "@feedback/core"
import { type Layer, Redacted } from "effect"
import { connect, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { DEFAULT_SERVER_LIMITS, hardenedServer } from "../src/server/NodeServer.ts"
import {
  deliveriesOf,
  endAggressor,
  heldPosts,
  heldWebhooks,
  jobLatency,
  jobSucceeded,
  maxOf,
  productsFile,
  queueProductImport,
  queueReviewExport,
  RATIO,
  reviewsOf,
  slotAggressor,
  type TenantRequest,
  TIMEOUT_MS,
  victimDelivery,
  victimWriteAndFeed,
  within as withinFloor
} from "./NoisyNeighbours.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { eventually, type Receiver, startReceiver } from "./WebhookReceiver.ts"

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory", () => MemoryStoreLayer],
  ...(serverUrl === undefined ? [] : [["postgres server", () => freshLayer((t) => PgStoreLayer(t))] as const])
]

const FLOOR_MS = 2_000
const within = (alone: number, attacked: number) => withinFloor(alone, attacked, FLOOR_MS)

describe.each(stores)("noisy neighbours (%s)", (_name, makeStore) => {
  let receiver: Receiver
  let server: TestServer
  /** One server: where a request goes does not matter. */
  const request: TenantRequest = (_at, method, path, options) => server.request(method, path, options)
  beforeAll(async () => {
    receiver = await startReceiver()
    server = makeTestServer(makeStore(), {
      jobs: { pollIntervalMs: 20 },
      webhooks: {
        allowInsecure: true,
        allowPrivate: true,
        timeoutMs: TIMEOUT_MS,
        dispatcher: { pollIntervalMs: 20, heartbeatIntervalMs: 200, leaseMs: 60_000 }
      }
    })
  })
  afterAll(async () => {
    // The receiver first: its hanging answers end, so the dispatcher's shutdown does not wait for their timeout.
    await receiver.close()
    await server.dispose()
  })

  it("delivery slots: an organization whose every webhook hangs never delays another's delivery", async () => {
    const victim = await server.provision()
    const alone = await maxOf(3, () => victimDelivery(request, receiver, victim.key))

    const aggressor = await server.provision()
    const hooks = await slotAggressor(request, receiver, aggressor.key, "slots")
    // Its deliveries now hold every slot it may take: wait until its hanging POSTs have arrived.
    const hanging = () => heldPosts(receiver, "slots")
    await eventually(async () => (hanging() >= 8 ? true : undefined), 10_000, "the aggressor's POSTs to hang")

    const attacked = await maxOf(3, () => victimDelivery(request, receiver, victim.key))
    within(alone, attacked)
    // The aggressor holds no more than its share of the process's POST slots (docs/FAIRNESS.md).
    expect(hanging()).toBeLessThanOrEqual(8)
    await endAggressor(request, receiver, aggressor.key, "slots", hooks)
  })

  it("fan-out: another organization's import fanned out to 100,000 deliveries never holds up an event", async () => {
    const victim = await server.provision()
    const alone = await maxOf(3, () => victimDelivery(request, receiver, victim.key))

    // The aggressor: every webhook it may have, held by the receiver until the case ends, each subscribed to the event
    // every imported product records; 5,000 products make 100,000 deliveries, which its share cannot drain meanwhile.
    const aggressor = await server.provision()
    const hooks = await heldWebhooks(request, receiver, aggressor.key, "fan-out", ["product.updated"])
    const products = 5_000
    const imported = await queueProductImport(request, aggressor.key, productsFile("fan", products))
    expect(imported.status).toBe(202)
    await jobSucceeded(request, aggressor.key, "import", imported.body.id)

    const attacked = await maxOf(3, () => victimDelivery(request, receiver, victim.key))
    within(alone, attacked)
    // Whatever the timings: its fan-out waits at its queue cap, so at most the cap and one fan-out unit of work
    // (200 events × 20 webhooks) of its deliveries exist; the rest of its events wait in the outbox.
    const bound = Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION + 200 * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION
    const created = await deliveriesOf(request, aggressor.key, hooks, bound)
    expect(created).toBeLessThanOrEqual(bound)
    expect(created).toBeGreaterThanOrEqual(Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION)
    await endAggressor(request, receiver, aggressor.key, "fan-out", hooks)
  }, 300_000)

  it("job queue: another organization's backlog delays a small export by at most the job in hand", async () => {
    const victim = await server.provision()
    const aggressor = await server.provision()
    await reviewsOf(request, victim.key, "mine", 3)
    const smallExport = () => jobLatency(request, victim.key, "export", () => queueReviewExport(request, victim.key))
    const alone = await maxOf(3, smallExport)
    const oneJob = await jobLatency(
      request,
      aggressor.key,
      "import",
      () => queueProductImport(request, aggressor.key, productsFile("solo", 2_000))
    )

    // The aggressor's backlog: eight such jobs queued before the victim's export.
    const backlog = 8
    const queued: Array<string> = []
    for (let i = 0; i < backlog; i++) {
      const res = await queueProductImport(request, aggressor.key, productsFile(`b${i}`, 2_000))
      expect(res.status).toBe(202)
      queued.push(res.body.id)
    }
    const exportStarted = performance.now()
    const exported = await queueReviewExport(request, victim.key)
    expect(exported.status).toBe(202)
    const done = await jobSucceeded(request, victim.key, "export", exported.body.id)
    const attacked = performance.now() - exportStarted
    expect(done.progress.processedRows, "the victim's export is its three rows").toBe(3)
    // First come first served would make the export wait for the whole backlog (about `backlog` jobs).
    expect(
      attacked,
      `alone ${alone.toFixed(0)} ms, one aggressor job ${oneJob.toFixed(0)} ms, attacked ${attacked.toFixed(0)} ms`
    )
      .toBeLessThan(RATIO * alone + 3 * oneJob + FLOOR_MS)
    // Whatever the timings: at most the job in hand (and one claimed with it) finished before the export.
    const finished = await Promise.all(queued.map((id) => jobSucceeded(request, aggressor.key, "import", id)))
    expect(finished.filter((j) => j.finishedAt <= done.finishedAt).length).toBeLessThanOrEqual(2)
    // Nine 2,000-row imports and four exports: about 40 s on a loaded 2-core machine, more under a full test run.
  }, 300_000)

  it(
    "store locks and the feed: another organization's strict import holds up neither a write nor the feed",
    async () => {
      const victim = await server.provision()
      const aggressor = await server.provision()
      const alone = await maxOf(3, () => victimWriteAndFeed(request, receiver, victim.key))

      // One transaction of 40,000 rows: the victim is measured while it is open.
      const queued = await queueProductImport(request, aggressor.key, productsFile("strict", 40_000), { strict: true })
      expect(queued.status).toBe(202)
      const status = async () =>
        (await server.request("GET", `/import-jobs/${queued.body.id}`, { token: aggressor.key })).body.status
      await eventually(async () => ((await status()) === "running" ? true : undefined), 60_000, "the strict import")
      const attacked = await maxOf(3, () => victimWriteAndFeed(request, receiver, victim.key))
      within(alone, attacked)
      expect(await status(), "the strict import was still running: the victim was measured against it").toBe(
        "running"
      )
      await jobSucceeded(request, aggressor.key, "import", queued.body.id, 0, 300_000)
    },
    600_000
  )
})

describe("noisy neighbours: connections (the standalone server)", () => {
  /** Opens a connection from `localAddress` and sends half a request line: it holds a slot until the header timeout. */
  const holdSlot = (port: number, localAddress: string) =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect({ port, host: "127.0.0.1", localAddress }, () => {
        socket.write("GET /health HTTP/1.1\r\nHost: x\r\n")
        resolve(socket)
      })
      socket.once("error", reject)
    })
  /** One whole request from `localAddress`: its latency, or `closed` when the server hung up without an answer. */
  const request = (port: number, localAddress: string) =>
    new Promise<number | "closed">((resolve) => {
      const started = performance.now()
      let answer = ""
      const socket = connect({ port, host: "127.0.0.1", localAddress }, () => {
        socket.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      })
      socket.on("data", (chunk) => {
        answer += chunk.toString("latin1")
      })
      socket.on("error", () => undefined)
      socket.on("close", () => resolve(answer.startsWith("HTTP/1.1 200") ? performance.now() - started : "closed"))
    })

  it("clients of one address holding slots with slow headers leave the other addresses their connections", async () => {
    const perAddress = 4
    const server = hardenedServer(
      { ...DEFAULT_SERVER_LIMITS, maxConnections: 8, maxConnectionsPerAddress: perAddress },
      () => {}
    )()
    server.on("request", (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("ok"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as AddressInfo).port
    const held: Array<Socket> = []
    try {
      let alone = 0
      for (let i = 0; i < 3; i++) {
        const latency = await request(port, "127.0.0.2")
        expect(latency).not.toBe("closed")
        alone = Math.max(alone, latency as number)
      }
      // The aggressor (127.0.0.3) opens twice the whole cap's worth of slow connections.
      for (let i = 0; i < 16; i++) {
        const socket = await holdSlot(port, "127.0.0.3").catch(() => undefined)
        if (socket !== undefined) {
          socket.on("error", () => undefined)
          held.push(socket)
        }
      }
      // Only its share stays open: the rest were closed as they arrived.
      await eventually(
        async () => held.filter((s) => !s.destroyed && !s.closed).length <= perAddress ? true : undefined,
        5_000,
        "the aggressor's extra connections to close"
      )
      expect(await request(port, "127.0.0.3")).toBe("closed")
      let attacked = 0
      for (let i = 0; i < 3; i++) {
        const latency = await request(port, "127.0.0.2")
        expect(latency, "the victim's address still gets in").not.toBe("closed")
        attacked = Math.max(attacked, latency as number)
      }
      within(alone, attacked)
    } finally {
      for (const socket of held) socket.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe.each(stores)("noisy neighbours: survey emails (%s)", (_name, makeStore) => {
  /** Recipients in the order the SMTP server accepted their messages. */
  const accepted: Array<string> = []
  let smtp: SMTPServer
  let server: TestServer
  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData: (stream, session, callback) => {
        stream.on("data", () => undefined)
        stream.on("end", () => {
          for (const r of session.envelope.rcptTo) accepted.push(r.address)
          callback()
        })
      }
    })
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()))
    const port = (smtp.server.address() as AddressInfo).port
    server = makeTestServer(makeStore(), {
      email: { smtp: { url: Redacted.make(`smtp://127.0.0.1:${port}`), from: "Shop <reviews@shop.example>" } },
      surveys: { pollIntervalMs: 20 }
    })
  })
  afterAll(async () => {
    await server.dispose()
    await new Promise<void>((resolve) => smtp.close(() => resolve()))
  })

  /** An organization whose guided setup asks at once after `order.fulfilled`, and its one product. */
  const shop = async () => {
    const tenant = await server.provision()
    expect(
      (await server.request("POST", "/products", { token: tenant.key, body: { slug: "mug", title: "Mug" } })).status
    )
      .toBe(201)
    const setup = await server.request("POST", "/organization/setup/reviews", {
      token: tenant.key,
      body: { data: { delayDays: 0, reminder: false } }
    })
    expect(setup.status, JSON.stringify(setup.body)).toBe(201)
    return tenant
  }
  /** From creating a fulfilled order to its review request accepted by the SMTP server. */
  const victimEmail = async (key: string, email: string) => {
    const started = performance.now()
    const order = await server.request("POST", "/orders", {
      token: key,
      body: { customer: { email }, lines: [{ productSlug: "mug" }], status: "fulfilled" }
    })
    expect(order.status).toBe(201)
    await eventually(async () => (accepted.includes(email) ? true : undefined), 120_000, "the victim's email", 10)
    return performance.now() - started
  }

  it("another organization's backlog delays a due email by at most the claim in hand", async () => {
    const victim = await shop()
    const alone = await maxOf(3, () => victimEmail(victim.key, `alone-${Math.random()}@example.com`))

    // The aggressor's backlog: its orders imported open (an import starts no survey), then all fulfilled at once.
    const aggressor = await shop()
    const backlog = 600
    const imported = await server.request("POST", "/orders/import", {
      token: aggressor.key,
      body: {
        data: Array.from({ length: backlog }, (_, i) => ({
          externalId: `noisy-${i}`,
          customer: `noisy-${i}@example.com`,
          lines: [{ productSlug: "mug" }],
          status: "open"
        })),
        strict: true
      }
    })
    expect(imported.status, JSON.stringify(imported.body)).toBe(200)
    const moved = await server.request("PATCH", "/orders/bulk-update", {
      token: aggressor.key,
      body: { status: "fulfilled" }
    })
    expect(moved.body.count).toBe(backlog)
    const mine = `victim-${Math.random()}@example.com`
    const sentBefore = accepted.filter((to) => to.startsWith("noisy-")).length
    const attacked = await victimEmail(victim.key, mine)
    const aggressorBefore = accepted.slice(0, accepted.indexOf(mine)).filter((to) => to.startsWith("noisy-")).length
    within(alone, attacked)
    // Whatever the timings: first come first served would send the rest of the backlog first; in turn, at most the
    // claim in hand (a batch of 50) and the next claim's turns go out between the victim's order and its email.
    expect(aggressorBefore - sentBefore, `${sentBefore} sent before the victim's order`).toBeLessThanOrEqual(100)
    await eventually(
      async () => (accepted.filter((to) => to.startsWith("noisy-")).length === backlog ? true : undefined),
      120_000,
      "the backlog"
    )
  }, 300_000)
})
