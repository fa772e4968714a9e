/**
 * Noisy neighbours across processes (docs/FAIRNESS.md): two server processes (`src/main.ts`) share one PostgreSQL
 * database and run its webhook dispatchers and job workers; an aggressor organization at its limits and a victim
 * organization whose latency is compared with the same victim alone, in the same run, its requests spread over both
 * processes. The cases are in `NoisyNeighbours.ts`; bounds as in `NoisyNeighbour.test.ts`.
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
import { callOver, type ServerProcess, startServerProcess } from "./ServerProcess.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { eventually, type Receiver, startReceiver } from "./WebhookReceiver.ts"

const FLOOR_MS = 3_000
const within = (alone: number, attacked: number) => withinFloor(alone, attacked, FLOOR_MS)

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

  /**
   * A request to process `at % 2`, its JSON body parsed. A file (`rawBody`) goes through the API side in this process,
   * into the same database: the processes' workers run the job.
   */
  const request: TenantRequest = async (at, method, path, options) => {
    if (options.rawBody !== undefined) return api.request(method, path, options)
    const answer = await callOver(agents[at % 2]!, `${processes[at % 2]!.url}${path}`, {
      method,
      token: options.token,
      body: options.body,
      ...(options.headers === undefined ? {} : { headers: options.headers })
    })
    return { status: answer.status, body: answer.body === "" ? undefined : JSON.parse(answer.body) }
  }

  it("delivery slots: an organization whose every webhook hangs never delays another's delivery", async () => {
    const victim = await api.provision()
    const alone = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))

    const aggressor = await api.provision()
    const hooks = await slotAggressor(request, receiver, aggressor.key, "slots")
    // Both processes' dispatchers hold the aggressor's hanging POSTs: wait until they have arrived.
    const hanging = () => heldPosts(receiver, "slots")
    await eventually(async () => (hanging() >= 8 ? true : undefined), 20_000, "the aggressor's POSTs to hang")

    const attacked = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))
    within(alone, attacked)
    // Each process lets one organization hold at most 8 of its POST slots (docs/FAIRNESS.md).
    expect(hanging()).toBeLessThanOrEqual(2 * 8)
    await endAggressor(request, receiver, aggressor.key, "slots", hooks)
  }, 300_000)

  it(
    "fan-out: another organization's import fanned out to 100,000 deliveries, by either process, holds up no event",
    async () => {
      const victim = await api.provision()
      const alone = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))

      const aggressor = await api.provision()
      const hooks = await heldWebhooks(request, receiver, aggressor.key, "fan-out", ["product.updated"])
      const imported = await queueProductImport(request, aggressor.key, productsFile("fan", 5_000))
      expect(imported.status).toBe(202)
      await jobSucceeded(request, aggressor.key, "import", imported.body.id)

      const attacked = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))
      within(alone, attacked)
      // Whatever the timings: the cap and, as two fan-outs may read the count at once (docs/DECISIONS.md §68), one
      // unit of work per process of its deliveries exist; the rest of its events wait in the outbox.
      const bound = Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION + 2 * 200 * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION
      const created = await deliveriesOf(request, aggressor.key, hooks, bound)
      expect(created).toBeLessThanOrEqual(bound)
      expect(created).toBeGreaterThanOrEqual(Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION)
      await endAggressor(request, receiver, aggressor.key, "fan-out", hooks)
    },
    300_000
  )

  it(
    "job queue: another organization's backlog on both workers delays a small export by at most the jobs in hand",
    async () => {
      const victim = await api.provision()
      const aggressor = await api.provision()
      await reviewsOf(request, victim.key, "mine", 3)
      await reviewsOf(request, aggressor.key, "theirs", 2_000)
      const smallExport = (i: number) =>
        jobLatency(request, victim.key, "export", () => queueReviewExport(request, victim.key, i), i)
      const alone = await maxOf(3, smallExport)
      const oneJob = await jobLatency(
        request,
        aggressor.key,
        "import",
        () => queueProductImport(request, aggressor.key, productsFile("solo", 2_000))
      )

      // The aggressor's backlog: imports of 2,000 products and exports of its 2,000 reviews, then the victim's export.
      const queued: Array<{ readonly kind: "import" | "export"; readonly id: string }> = []
      for (let i = 0; i < 12; i++) {
        const kind = i % 3 === 2 ? "export" : "import"
        const res = kind === "import"
          ? await queueProductImport(request, aggressor.key, productsFile(`b${i}`, 2_000))
          : await queueReviewExport(request, aggressor.key, i)
        expect(res.status).toBe(202)
        queued.push({ kind, id: res.body.id })
      }
      const exportStarted = performance.now()
      const exported = await queueReviewExport(request, victim.key)
      expect(exported.status).toBe(202)
      const done = await jobSucceeded(request, victim.key, "export", exported.body.id, 1)
      const attacked = performance.now() - exportStarted
      expect(done.progress.processedRows, "the victim's export is its three rows").toBe(3)
      // First come first served would make the export wait for the whole backlog, six jobs per worker.
      expect(
        attacked,
        `alone ${alone.toFixed(0)} ms, one aggressor job ${oneJob.toFixed(0)} ms, attacked ${attacked.toFixed(0)} ms`
      ).toBeLessThan(RATIO * alone + 3 * oneJob + FLOOR_MS)
      // Whatever the timings: on each worker at most the job in hand (and one claimed with it) finished before it.
      const finished = await Promise.all(
        queued.map(({ id, kind }) => jobSucceeded(request, aggressor.key, kind, id, 0, 300_000))
      )
      expect(finished.filter((j) => j.finishedAt <= done.finishedAt).length).toBeLessThanOrEqual(2 * 2)
    },
    600_000
  )

  it("the feed and writes: another organization's strict import, run by either process, holds up neither", async () => {
    const victim = await api.provision()
    const aggressor = await api.provision()
    const alone = await maxOf(3, (i) => victimWriteAndFeed(request, receiver, victim.key, i))

    const queued = await queueProductImport(request, aggressor.key, productsFile("strict", 40_000), { strict: true })
    expect(queued.status).toBe(202)
    const status = async () =>
      (await request(0, "GET", `/import-jobs/${queued.body.id}`, { token: aggressor.key })).body?.status
    await eventually(async () => ((await status()) === "running" ? true : undefined), 60_000, "the strict import")
    const attacked = await maxOf(3, (i) => victimWriteAndFeed(request, receiver, victim.key, i))
    within(alone, attacked)
    expect(await status(), "the strict import was still running: the victim was measured against it").toBe(
      "running"
    )
    await jobSucceeded(request, aggressor.key, "import", queued.body.id, 0, 300_000)
  }, 600_000)
})
