/**
 * At-most-once delivery across processes, against a real PostgreSQL server (several processes share one database):
 * - a dispatcher killed between claim and POST leaves a delivery that becomes `failed: interrupted` and is never
 *   resent, while deliveries it never attempted are still sent;
 * - two dispatcher processes working one database never send an idempotency key twice.
 */
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Kernel } from "@feedback/core"
import { recordEvent, transactional } from "@feedback/testing"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, expect, it } from "vitest"
import { describeWithServer, freshServerDatabase } from "../../adapter-postgres/test/TestDatabase.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { eventually, type Receiver, sleep, startReceiver } from "./WebhookReceiver.ts"

const fixture = fileURLToPath(new URL("./fixtures/dispatcher-process.ts", import.meta.url))

interface Child {
  readonly process: ChildProcess
  readonly lines: Array<string>
  readonly exited: Promise<number | null>
}

const spawnDispatcher = (databaseUrl: string, crashAfterClaim = false): Child => {
  const child = spawn(process.execPath, [fixture], {
    env: { ...process.env, DATABASE_URL: databaseUrl, CRASH_AFTER_CLAIM: String(crashAfterClaim) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const lines: Array<string> = []
  let buffer = ""
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8")
    const parts = buffer.split("\n")
    buffer = parts.pop()!
    lines.push(...parts)
  })
  let stderr = ""
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      if (code !== 0 && code !== null && stderr !== "") process.stderr.write(stderr)
      resolve(code)
    })
  )
  return { process: child, lines, exited }
}

const waitForLine = (child: Child, prefix: string, timeoutMs = 15_000) =>
  eventually(
    async () => child.lines.find((l) => l.startsWith(prefix)),
    timeoutMs,
    `"${prefix}" from a dispatcher process`
  )

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined)
})

const relaxed = { allowInsecure: true, allowPrivate: true, timeoutMs: 2_000 }

/** A server over the database with no dispatcher of its own (the API side only). */
const apiServer = (databaseUrl: string, dispatcher: false | object = false): TestServer => {
  const server = makeTestServer(PgStoreLayer({ _tag: "Server", url: databaseUrl, maxConnections: 4 }), {
    webhooks: { ...relaxed, dispatcher: dispatcher === false ? false : dispatcher }
  })
  cleanups.push(() => server.dispose())
  return server
}

const receiverFor = async (): Promise<Receiver> => {
  const receiver = await startReceiver()
  cleanups.push(() => receiver.close())
  return receiver
}

const deliveries = async (server: TestServer, key: string, webhookId: string) =>
  (await server.request("GET", `/webhooks/${webhookId}/events?limit=250`, { token: key })).body.data as Array<any>

describeWithServer("webhook delivery across processes (PostgreSQL)", (serverUrl) => {
  it("a dispatcher killed between claim and POST: the delivery fails as interrupted and is never resent", async () => {
    const databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
    const receiver = await receiverFor()
    const api = apiServer(databaseUrl)
    const { key } = await api.provision()
    const created = await api.request("POST", "/webhooks", {
      token: key,
      body: { url: receiver.url("/ok"), events: ["webhook.created", "webhook.updated"] }
    })
    expect(created.status).toBe(201)

    const doomed = spawnDispatcher(databaseUrl, true)
    cleanups.push(async () => doomed.process.kill("SIGKILL"))
    const claimedLine = await waitForLine(doomed, "CLAIMED ")
    doomed.process.kill("SIGKILL")
    await doomed.exited
    const claimedId = claimedLine.slice("CLAIMED ".length)
    const [inFlight] = await deliveries(api, key, created.body.id)
    expect(inFlight).toMatchObject({ id: claimedId, status: "pending", event: "webhook.created" })
    expect(inFlight.attemptedAt).not.toBeNull()

    // A later event, never attempted by anyone.
    await api.request("PATCH", `/webhooks/${created.body.id}`, { token: key, body: { events: ["webhook.updated"] } })

    // A restarted server (with a dispatcher) fails the orphan once the dead process's lease lapses, and sends the rest.
    const restarted = apiServer(databaseUrl, { pollIntervalMs: 20, heartbeatIntervalMs: 200, leaseMs: 1_000 })
    const rows = await eventually(
      async () => {
        const log = await deliveries(restarted, key, created.body.id)
        return log.length === 2 && log.every((d) => d.status !== "pending") ? log : undefined
      },
      10_000,
      "the interrupted delivery to fail and the new one to be delivered"
    )
    const byEvent = new Map(rows.map((d) => [d.event, d]))
    expect(byEvent.get("webhook.created")).toMatchObject({
      id: claimedId,
      status: "failed",
      error: "interrupted",
      responseStatus: null
    })
    expect(byEvent.get("webhook.updated")).toMatchObject({ status: "delivered", responseStatus: 200 })
    await sleep(300)
    const keys = receiver.received.map((r) => JSON.parse(r.raw.toString("utf8")).idempotencyKey)
    expect(keys).toEqual([byEvent.get("webhook.updated").idempotencyKey])
  }, 40_000)

  it("two dispatcher processes on one database never send an idempotency key twice", async () => {
    const databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
    const receiver = await receiverFor()
    const api = apiServer(databaseUrl)
    const { key, organizationId } = await api.provision()
    const hooks: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const created = await api.request("POST", "/webhooks", {
        token: key,
        body: { url: receiver.url(`/jitter?hook=${i}`), events: ["review.created"] }
      })
      hooks.push(created.body.id)
    }
    const children = [spawnDispatcher(databaseUrl), spawnDispatcher(databaseUrl)]
    for (const c of children) cleanups.push(async () => c.process.kill("SIGKILL"))
    await Promise.all(children.map((c) => waitForLine(c, "READY")))

    // 100 events in bursts while both processes fan out and claim concurrently: 300 deliveries.
    const Store = Layer.merge(
      PgStoreLayer({ _tag: "Server", url: databaseUrl, maxConnections: 2 }),
      Kernel.IdGenerator.uuidV7
    )
    await Effect.runPromise(
      Effect.gen(function*() {
        for (let burst = 0; burst < 5; burst++) {
          yield* transactional(Effect.forEach(
            Array.from({ length: 20 }, (_, i) => burst * 20 + i),
            (n) => recordEvent(organizationId as Kernel.OrganizationId, "review.created", { n }),
            { discard: true }
          ))
          yield* Effect.sleep("30 millis")
        }
      }).pipe(Effect.provide(Store))
    )

    await eventually(
      async () => {
        const logs = await Promise.all(hooks.map((h) => deliveries(api, key, h)))
        return logs.flat().length === 300 && logs.flat().every((d) => d.status !== "pending") ? true : undefined
      },
      30_000,
      "300 deliveries to finish",
      250
    )
    for (const c of children) c.process.kill("SIGTERM")
    expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0]) // graceful stop

    const logs = (await Promise.all(hooks.map((h) => deliveries(api, key, h)))).flat()
    expect(logs.filter((d) => d.status === "delivered")).toHaveLength(300)
    const sent = receiver.received.map((r) => JSON.parse(r.raw.toString("utf8")).idempotencyKey as string)
    expect(sent).toHaveLength(300)
    expect(new Set(sent).size).toBe(300)
    expect(new Set(sent)).toEqual(new Set(logs.map((d) => d.idempotencyKey)))

    // Both processes did part of the work (otherwise this would not test anything).
    const claimers = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ n: number }>`SELECT count(DISTINCT claimed_by)::int AS n FROM feedback.webhook_deliveries`
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })))
    )
    expect(claimers[0]?.n).toBe(2)
  }, 60_000)

  it(
    "two processes deliver the events of each record in the order they happened, unrelated records in parallel",
    async () => {
      const databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
      const receiver = await receiverFor()
      const api = apiServer(databaseUrl)
      const { key, organizationId } = await api.provision()
      const hook = (await api.request("POST", "/webhooks", {
        token: key,
        body: { url: receiver.url("/jitter?hook=ordered"), events: ["review.updated"] }
      })).body.id as string
      // 5 records × 8 updates, each update its own transaction (as a PATCH is), interleaved across records, all
      // waiting when the dispatchers start: each claim could take several updates of one record at once.
      const Store = Layer.merge(
        PgStoreLayer({ _tag: "Server", url: databaseUrl, maxConnections: 2 }),
        Kernel.IdGenerator.uuidV7
      )
      await Effect.runPromise(
        Effect.gen(function*() {
          for (let n = 0; n < 8; n++) {
            for (let r = 0; r < 5; r++) {
              yield* transactional(
                recordEvent(organizationId as Kernel.OrganizationId, "review.updated", { id: `rec-${r}`, n })
              )
            }
          }
        }).pipe(Effect.provide(Store))
      )
      const children = [spawnDispatcher(databaseUrl), spawnDispatcher(databaseUrl)]
      for (const c of children) cleanups.push(async () => c.process.kill("SIGKILL"))
      await Promise.all(children.map((c) => waitForLine(c, "READY")))

      await eventually(
        async () => {
          const log = await deliveries(api, key, hook)
          return log.length === 40 && log.every((d) => d.status !== "pending") ? true : undefined
        },
        30_000,
        "40 deliveries to finish",
        250
      )
      for (const c of children) c.process.kill("SIGTERM")
      await Promise.all(children.map((c) => c.exited))

      const received = receiver.received.map((r) =>
        JSON.parse(r.raw.toString("utf8")).data as { id: string; n: number }
      )
      expect(received).toHaveLength(40)
      for (let r = 0; r < 5; r++) {
        expect(received.filter((d) => d.id === `rec-${r}`).map((d) => d.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
      }
      // One at a time: no update of a record arrived before the receiver had finished answering the previous one.
      // (Timed on the receiver's clock: each dispatcher's own timestamps are taken before its claim query runs.)
      const attempts = receiver.received.map((r) => ({
        ...(JSON.parse(r.raw.toString("utf8")).data as { id: string; n: number }),
        start: r.arrivedAt,
        end: r.finishedAt ?? Infinity
      }))
      for (let r = 0; r < 5; r++) {
        const mine = attempts.filter((a) => a.id === `rec-${r}`).sort((a, b) => a.n - b.n)
        for (let i = 1; i < mine.length; i++) expect(mine[i]!.start).toBeGreaterThanOrEqual(mine[i - 1]!.end)
      }
      // Unrelated records did overlap: ordering did not serialise the whole webhook.
      expect(attempts.some((a) => attempts.some((b) => b.id !== a.id && b.start < a.end && a.start < b.end))).toBe(true)
    },
    60_000
  )
})
