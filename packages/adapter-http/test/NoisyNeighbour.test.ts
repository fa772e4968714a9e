/**
 * Noisy neighbours (docs/FAIRNESS.md): for each resource organizations share, an aggressor organization at its
 * limits and a victim organization whose latency is compared with the same victim alone, in the same run (the cases
 * are in `NoisyNeighbours.ts`). Memory, and a PostgreSQL server when TEST_DATABASE_URL is set.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import type { StoreServices } from "@feedback/core"
import { type Layer, Redacted } from "effect"
import { connect, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshLayer, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { DEFAULT_SERVER_LIMITS, hardenedServer } from "../src/server/NodeServer.ts"
import * as Noisy from "./NoisyNeighbours.ts"
import { type SmtpReceiver, startSmtpReceiver } from "./SmtpReceiver.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { eventually, type Receiver, startReceiver } from "./WebhookReceiver.ts"

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory", () => MemoryStoreLayer],
  ...(serverUrl === undefined ? [] : [["postgres server", () => freshLayer((t) => PgStoreLayer(t))] as const])
]

const FLOOR_MS = 2_000
const within = (alone: number, attacked: number) => Noisy.within(alone, attacked, FLOOR_MS)
const { maxOf } = Noisy

describe.each(stores)("noisy neighbours (%s)", (_name, makeStore) => {
  let receiver: Receiver
  let server: TestServer
  /** One server: where a request goes does not matter. */
  const hood = (): Noisy.Neighbourhood => ({
    request: (_at, method, path, options) => server.request(method, path, options),
    receiver,
    provision: () => server.provision(),
    processes: 1,
    floorMs: FLOOR_MS
  })
  beforeAll(async () => {
    receiver = await startReceiver()
    server = makeTestServer(makeStore(), {
      jobs: { pollIntervalMs: 20 },
      webhooks: {
        allowInsecure: true,
        allowPrivate: true,
        timeoutMs: Noisy.TIMEOUT_MS,
        dispatcher: { pollIntervalMs: 20, heartbeatIntervalMs: 200, leaseMs: 60_000 }
      }
    })
  })
  afterAll(async () => {
    // The receiver first: its held answers end, so the dispatcher's shutdown does not wait for their timeout.
    await receiver.close()
    await server.dispose()
  })

  for (const [name, run, timeoutMs] of Noisy.cases) it(name, () => run(hood()), timeoutMs)
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
  let smtp: SmtpReceiver
  let server: TestServer
  beforeAll(async () => {
    smtp = await startSmtpReceiver()
    server = makeTestServer(makeStore(), {
      email: { smtp: { url: Redacted.make(smtp.url), from: "Shop <reviews@shop.example>" } },
      surveys: { pollIntervalMs: 20 }
    })
  })
  afterAll(async () => {
    await server.dispose()
    await smtp.close()
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
    await eventually(async () => (smtp.received.includes(email) ? true : undefined), 120_000, "the victim's email", 10)
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
    const accepted = smtp.received // the live list, in acceptance order
    const sentBefore = accepted.filter((to) => to.startsWith("noisy-")).length
    const attacked = await victimEmail(victim.key, mine)
    const aggressorBefore = accepted.slice(0, accepted.indexOf(mine)).filter((to) => to.startsWith("noisy-")).length
    within(alone, attacked)
    // Whatever the timings: first come first served would send the rest of the backlog first; in turn, at most the
    // claim in hand (a batch of 48) and the next claim's turns go out between the victim's order and its email.
    expect(aggressorBefore - sentBefore, `${sentBefore} sent before the victim's order`).toBeLessThanOrEqual(100)
    await eventually(
      async () => (accepted.filter((to) => to.startsWith("noisy-")).length === backlog ? true : undefined),
      120_000,
      "the backlog"
    )
  }, 300_000)
})
