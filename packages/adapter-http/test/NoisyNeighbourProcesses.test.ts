/**
 * Noisy neighbours across processes (docs/FAIRNESS.md): two server processes (`src/main.ts`) share one PostgreSQL
 * database and run its webhook dispatchers and job workers; an aggressor organization at its limits and a victim
 * organization whose latency is compared with the same victim alone, in the same run, its requests spread over both
 * processes. Bounds as in `NoisyNeighbour.test.ts`: ratios with a generous floor.
 */
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Webhooks } from "@feedback/core"
import { Effect } from "effect"
import { Agent } from "node:http"
import { afterAll, beforeAll, expect, it } from "vitest"
import {
  describeWithServer,
  dropServerDatabase,
  freshServerDatabase
} from "../../adapter-postgres/test/TestDatabase.ts"
import { callOver, type ServerProcess, startServerProcess } from "./ServerProcess.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { eventually, type Receiver, startReceiver } from "./WebhookReceiver.ts"

/** How long a hanging receiver holds a slot: far beyond any bound below. */
const TIMEOUT_MS = 30_000
const RATIO = 10
const FLOOR_MS = 3_000

const within = (alone: number, attacked: number) => {
  expect(attacked, `alone ${alone.toFixed(0)} ms, attacked ${attacked.toFixed(0)} ms`).toBeLessThan(
    RATIO * alone + FLOOR_MS
  )
}

const maxOf = async (n: number, measure: (i: number) => Promise<number>) => {
  let worst = 0
  for (let i = 0; i < n; i++) worst = Math.max(worst, await measure(i))
  return worst
}

describeWithServer("noisy neighbours across two server processes (PostgreSQL)", (serverUrl) => {
  let databaseUrl: string | undefined
  let receiver: Receiver
  /** The API side in this process, to provision organizations: no dispatcher and no job worker of its own. */
  let api: TestServer
  const processes: Array<ServerProcess> = []
  const agents = [new Agent({ keepAlive: true, maxSockets: 8 }), new Agent({ keepAlive: true, maxSockets: 8 })]

  beforeAll(async () => {
    databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
    receiver = await startReceiver()
    api = makeTestServer(PgStoreLayer({ _tag: "Server", url: databaseUrl, maxConnections: 4 }), {
      jobs: { worker: false },
      webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: TIMEOUT_MS, dispatcher: false }
    })
    await api.provision()
    const env = {
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_INSECURE: "true",
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      LOG_REQUESTS: "false"
    }
    for (let i = 0; i < 2; i++) processes.push(await startServerProcess(env))
  }, 120_000)

  afterAll(async () => {
    // The receiver first: its hanging answers end, so the processes' shutdown does not wait for their timeout.
    await receiver?.close()
    for (const agent of agents) agent.destroy()
    await Promise.all(processes.map((p) => p.stop()))
    await api?.dispose()
    if (databaseUrl !== undefined) await dropServerDatabase(serverUrl, databaseUrl)
  }, 60_000)

  /** A request to process `i` (0 or 1), its JSON body parsed. */
  const call = async (i: number, method: string, path: string, token: string, body?: unknown) => {
    const answer = await callOver(agents[i]!, `${processes[i]!.url}${path}`, { method, token, body })
    return { status: answer.status, body: answer.body === "" ? undefined : JSON.parse(answer.body) }
  }

  /**
   * From registering a webhook on one process to its first delivery (its own `webhook.created`) recorded as
   * delivered, read on the other process.
   */
  const victimDelivery = async (key: string, i: number): Promise<number> => {
    const started = performance.now()
    const created = await call(i % 2, "POST", "/webhooks", key, {
      url: receiver.url("/ok"),
      events: ["webhook.created"]
    })
    expect(created.status).toBe(201)
    await eventually(
      async () => {
        const log = await call((i + 1) % 2, "GET", `/webhooks/${created.body.id}/events`, key)
        return log.body?.data?.[0]?.status === "delivered" ? true : undefined
      },
      4 * TIMEOUT_MS,
      "the victim's delivery",
      10
    )
    await call(i % 2, "DELETE", `/webhooks/${created.body.id}`, key)
    return performance.now() - started
  }

  it("delivery slots: an organization whose every webhook hangs never delays another's delivery", async () => {
    const victim = await api.provision()
    const alone = await maxOf(3, (i) => victimDelivery(victim.key, i))

    const aggressor = await api.provision()
    const hooks: Array<string> = []
    for (let i = 0; i < Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION; i++) {
      const res = await call(i % 2, "POST", "/webhooks", aggressor.key, {
        url: receiver.url("/hang"),
        events: ["webhook.updated"]
      })
      expect(res.status).toBe(201)
      hooks.push(res.body.id)
    }
    for (let round = 0; round < 5; round++) {
      for (const [i, id] of hooks.entries()) {
        const res = await call(i % 2, "PATCH", `/webhooks/${id}`, aggressor.key, {
          url: receiver.url(`/hang?round=${round}`)
        })
        expect(res.status).toBe(200)
      }
    }
    // Both processes' dispatchers hold the aggressor's hanging POSTs: wait until they have arrived.
    const hanging = () => receiver.received.filter((r) => r.path.startsWith("/hang")).length
    await eventually(async () => (hanging() >= 8 ? true : undefined), 20_000, "the aggressor's POSTs to hang")

    const attacked = await maxOf(3, (i) => victimDelivery(victim.key, i))
    within(alone, attacked)
    // Each process lets one organization hold at most 8 of its POST slots (docs/FAIRNESS.md).
    expect(hanging()).toBeLessThanOrEqual(2 * 8)
  }, 300_000)

  /** From a write on one process (a webhook registered) to its `webhook.created` read in the feed on the other. */
  const victimWriteAndFeed = async (key: string, i: number): Promise<number> => {
    const started = performance.now()
    const created = await call(i % 2, "POST", "/webhooks", key, {
      url: receiver.url("/ok"),
      events: ["review.updated"]
    })
    expect(created.status).toBe(201)
    await eventually(
      async () => {
        const feed = await call((i + 1) % 2, "GET", "/events?events=webhook.created&limit=100", key)
        return feed.body?.data?.some((e: any) => e.data?.id === created.body.id) ? true : undefined
      },
      120_000,
      "the victim's event in its feed",
      10
    )
    const elapsed = performance.now() - started
    await call(i % 2, "DELETE", `/webhooks/${created.body.id}`, key)
    return elapsed
  }

  it("the feed and writes: another organization's strict import, run by either process, holds up neither", async () => {
    const victim = await api.provision()
    const aggressor = await api.provision()
    const alone = await maxOf(3, (i) => victimWriteAndFeed(victim.key, i))

    const rows = Array.from({ length: 40_000 }, (_, i) => JSON.stringify({ slug: `strict-${i}`, title: `P ${i}` }))
    const queued = await api.request("POST", "/import-jobs?type=products&strict=true", {
      token: aggressor.key,
      rawBody: rows.join("\n"),
      headers: { "content-type": "application/x-ndjson" }
    })
    expect(queued.status).toBe(202)
    const status = async () => (await call(0, "GET", `/import-jobs/${queued.body.id}`, aggressor.key)).body?.status
    await eventually(async () => ((await status()) === "running" ? true : undefined), 60_000, "the strict import")
    const attacked = await maxOf(3, (i) => victimWriteAndFeed(victim.key, i))
    within(alone, attacked)
    expect(await status(), "the strict import was still running: the victim was measured against it").toBe(
      "running"
    )
    await eventually(
      async () => ((await status()) === "succeeded" ? true : undefined),
      300_000,
      "the strict import to finish"
    )
  }, 600_000)
})
