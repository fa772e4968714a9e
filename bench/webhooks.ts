/**
 * `npm run bench -- webhooks`
 *
 * 1. Delivery throughput: deliveries per second from outbox event to recorded outcome (the clock stops when the
 *    dispatcher has shut down, so every outcome is stored), through the real dispatcher and node:http transport, to
 *    a receiver on loopback that answers 200 at once. Each event is about its own review: events about one record
 *    go out one at a time per webhook (docs/DECISIONS.md §17), which would measure that rule rather than the
 *    dispatcher. Baseline: the same number of plain keep-alive POSTs of the same bodies at the same concurrency,
 *    with nothing stored.
 * 2. API latency while receivers never answer: sequential PATCH /webhooks/{id} (each records an event) with no
 *    subscriber (baseline), then with 8 subscribers whose receiver accepts the connection and never answers, so
 *    every dispatcher slot is stuck in a POST. The ratio shows whether a dead receiver reaches the request path.
 *
 * Store: memory by default; BENCH_DATABASE_URL=postgres://… runs on a PostgreSQL server (a fresh database).
 * Sizes: BENCH_DELIVERIES (default 2000), BENCH_REQUESTS (default 300); BENCH_KEEP=1 keeps the throughput database. BENCH_ROUNDS (default 3) timed rounds of (1),
 * each a baseline run followed by a dispatcher run, so the two see the same load; the ratio of each round is printed
 * and the median ratio is the result. Each side also prints its CPU per delivery: this process's (dispatcher,
 * transport and receiver, from `process.cpuUsage`) and, on a local PostgreSQL server, its backends' (from /proc),
 * which stay comparable when other work shares the machine.
 * `npm run bench -- webhooks throughput` (or `… latency`) runs one part.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Kernel, Organizations, type StoreServices, Webhooks } from "@feedback/core"
import { recordEvent, transactional } from "@feedback/testing"
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { makeWebHandler } from "../packages/adapter-http/src/server/ApiServer.ts"
import {
  NodeHostResolver,
  NodeWebhookTransport
} from "../packages/adapter-http/src/server/webhooks/NodeWebhookTransport.ts"
import { cpuMillis, startCpuProfile, storeSearchPath } from "./support/common.ts"
import { floorDeliveries, prepareFloor } from "./support/webhook-floor.ts"
import { recordRow } from "./support/targets.ts"

const DELIVERIES = Number(process.env["BENCH_DELIVERIES"] ?? 2_000)
const ROUNDS = Math.max(1, Number(process.env["BENCH_ROUNDS"] ?? 3))
const REQUESTS = Number(process.env["BENCH_REQUESTS"] ?? 300)
const CONCURRENCY = 16
const databaseUrl = process.env["BENCH_DATABASE_URL"] || undefined

const onDatabase = (url: string, statement: string) =>
  Effect.runPromise(Effect.scoped(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  ))

const freshStore = async (): Promise<{
  layer: Layer.Layer<StoreServices>
  name: string
  analyze: (() => Promise<void>) | undefined
  drop: () => Promise<void>
  /** CPU ms used so far by the server processes serving this database (local server only), else undefined. */
  databaseCpu: () => number | undefined
  /** A client of the same database for the floor (bench/support/webhook-floor.ts); PostgreSQL only. */
  floorClient: Layer.Layer<SqlClient.SqlClient> | undefined
}> => {
  if (databaseUrl === undefined) {
    return {
      layer: MemoryStoreLayer,
      name: "memory",
      analyze: undefined,
      drop: async () => {},
      databaseCpu: () => undefined,
      floorClient: undefined
    }
  }
  const name = `bench_${randomBytes(4).toString("hex")}`
  await Effect.runPromise(Effect.scoped(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`CREATE DATABASE ${name}`)
      yield* sql.unsafe(storeSearchPath(name))
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })))
  ))
  const u = new URL(databaseUrl)
  u.pathname = `/${name}`
  return {
    layer: PgStoreLayer({ _tag: "Server", url: u.toString(), maxConnections: 10 }).pipe(Layer.orDie),
    name: `postgres (${name})`,
    analyze: () => onDatabase(u.toString(), "ANALYZE"),
    drop: () => onDatabase(databaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined),
    databaseCpu: () => backendsCpu(name),
    floorClient: PgClient.layer({ url: Redacted.make(u.toString()), maxConnections: 2 }).pipe(Layer.orDie)
  }
}

/**
 * The CPU ms of every process whose title names the database: the backends of the pool and the listening connection
 * (a local server only; `undefined` when none is found, e.g. a remote server). The pool keeps its connections, so
 * the set is the same at both ends of a round.
 */
const backendsCpu = (database: string): number | undefined => {
  let total = 0
  let found = false
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(` ${database} `)) continue
    } catch {
      continue
    }
    const ms = cpuMillis(Number(entry))
    if (ms !== undefined) {
      total += ms
      found = true
    }
  }
  return found ? total : undefined
}

interface Measured {
  readonly perSecond: number
  /** CPU µs per delivery of this process and of the database's backends (undefined when unknown). */
  readonly processMicros: number
  readonly systemMicros: number
  readonly databaseMicros: number | undefined
}

/** Runs `run` (which answers the seconds its timed part took) and reads the CPU used around it. */
const measure = <E, R>(
  n: number,
  databaseCpu: () => number | undefined,
  run: Effect.Effect<number, E, R>
): Effect.Effect<Measured, E, R> =>
  Effect.gen(function*() {
    const cpu = process.cpuUsage()
    const db = databaseCpu()
    const seconds = yield* run
    const used = process.cpuUsage(cpu)
    const dbAfter = databaseCpu()
    return {
      perSecond: n / seconds,
      processMicros: (used.user + used.system) / n,
      systemMicros: used.system / n,
      databaseMicros: db === undefined || dbAfter === undefined ? undefined : ((dbAfter - db) * 1000) / n
    }
  })

const startReceiver = async (mode: "ok" | "hang") => {
  let count = 0
  const open = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      count++
      if (mode === "ok") res.writeHead(200, { "content-length": "0" }).end()
      else open.add(res)
    })
  })
  server.keepAliveTimeout = 30_000
  let connections = 0
  server.on("connection", () => connections++)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    count: () => count,
    /** TCP connections accepted so far: keep-alive shows as far fewer connections than requests. */
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of open) r.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const fmt = (n: number, digits = 1) => n.toFixed(digits)

const sampleBody = JSON.stringify({
  event: "review.updated",
  timestamp: new Date().toISOString(),
  idempotencyKey: "01930000-0000-7000-8000-000000000000",
  data: {
    id: "01930000-0000-7000-8000-000000000001",
    title: "Great",
    body: "x".repeat(200),
    rating: 5,
    published: true
  }
})

/**
 * `BENCH_CPU_PROFILE=file.cpuprofile`: a CPU profile of the dispatcher's timed run only; sampled every millisecond
 * unless `BENCH_CPU_PROFILE_INTERVAL` says otherwise (a 2,000-delivery round gives a few hundred samples).
 */
const startProfile = () => startCpuProfile(1000)

// --- 1. throughput ---------------------------------------------------------------------------------------------

/** `n` plain keep-alive POSTs of the sample body, 16 at a time; returns the seconds taken. */
const rawPosts = async (url: string, n: number): Promise<number> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const target = new URL(url)
  let next = 0
  const worker = async () => {
    while (next < n) {
      next++
      await new Promise<void>((resolve, reject) => {
        const req = http.request(target, {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(sampleBody) }
        }, (res) => {
          res.resume()
          res.on("end", resolve)
        })
        req.on("error", reject)
        req.end(sampleBody)
      })
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  return seconds
}

const WARM_UP = 125 // events, so 500 deliveries

interface Round {
  readonly baseline: Measured
  readonly dispatcher: Measured
  readonly floor: Measured | undefined
}

/**
 * A warm-up round, then `ROUNDS` timed rounds, each plain POSTs (the baseline) followed by the dispatcher delivering
 * `n` deliveries, so each ratio compares runs that saw the same load.
 */
const dispatched = async (
  url: string,
  n: number,
  store: Layer.Layer<StoreServices>,
  received: () => number,
  analyze: (() => Promise<void>) | undefined,
  databaseCpu: () => number | undefined,
  connections: () => number,
  floor: ((n: number) => Promise<Measured>) | undefined
): Promise<{ readonly rounds: ReadonlyArray<Round>; readonly connections: number }> => {
  const webhooks = 4
  const Services = Layer.mergeAll(store, Kernel.IdGenerator.uuidV7, NodeWebhookTransport, NodeHostResolver)
  // The scope (and so the dispatcher) closes before the store's connections do.
  const exit = await Effect.runPromiseExit(
    Effect.gen(function*() {
      const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Bench" }))
      const repo = yield* Webhooks.WebhookRepository
      const at = Kernel.Timestamp.fromMillis(Date.now() - 1_000)
      const webhookIds: Array<Kernel.WebhookId> = []
      for (let i = 0; i < webhooks; i++) {
        const id = yield* Kernel.nextId<Kernel.WebhookId>()
        webhookIds.push(id)
        yield* repo.insert({
          id,
          organizationId: org.id,
          url,
          events: ["review.updated"],
          hmacSecret: "bench-secret-0123456789",
          previousHmacSecret: null,
          previousSecretExpiresAt: null,
          createdAt: at,
          updatedAt: at
        })
      }
      const events = Math.ceil(n / webhooks)
      // One round: `count` events (each about its own review), then a dispatcher until the receiver has them all.
      let recordsSoFar = 0
      const writeEvents = (count: number) =>
        Effect.gen(function*() {
          for (let done = 0; done < count; done += 500) {
            yield* transactional(Effect.forEach(
              Array.from({ length: Math.min(500, count - done) }, () => recordsSoFar++),
              (i) =>
                recordEvent(org.id as Kernel.OrganizationId, "review.updated", {
                  ...JSON.parse(sampleBody).data,
                  id: `01930000-0000-7000-8000-${String(i).padStart(12, "0")}`
                }),
              { discard: true }
            ))
          }
        })
      const deliver = (count: number, profiled: boolean) =>
        Effect.gen(function*() {
          const before = received()
          const profile = profiled ? yield* Effect.promise(() => startProfile()) : async () => {}
          const started = performance.now()
          // Closing the dispatcher's scope lets it record every outcome before the clock stops.
          yield* Effect.scoped(Effect.gen(function*() {
            yield* Webhooks.startDispatcher({
              concurrency: CONCURRENCY,
              perWebhookConcurrency: CONCURRENCY,
              pollIntervalMs: 20
            })
            yield* Effect.promise(() =>
              new Promise<void>((resolve) => {
                const check = () => (received() - before >= count * webhooks ? resolve() : setTimeout(check, 2))
                check()
              })
            )
          }))
          const seconds = (performance.now() - started) / 1000
          yield* Effect.promise(() => profile())
          return seconds
        })
      // A running server's tables have statistics; a database created a second ago has none, and the planner's
      // guesses then say little about production. So: a warm-up round, ANALYZE (PostgreSQL), then the measured rounds.
      yield* writeEvents(WARM_UP)
      yield* deliver(WARM_UP, false)
      if (analyze !== undefined) yield* Effect.promise(analyze)
      const rounds: Array<Round> = []
      let dispatcherConnections = 0
      for (let r = 0; r < ROUNDS; r++) {
        const baseline = yield* measure(
          events * webhooks,
          () => undefined,
          Effect.promise(() => rawPosts(url, events * webhooks))
        )
        yield* writeEvents(events)
        const connectionsBefore = connections()
        const dispatcher = yield* measure(events * webhooks, databaseCpu, deliver(events, r === ROUNDS - 1))
        dispatcherConnections += connections() - connectionsBefore
        const floorRun = floor === undefined ? undefined : yield* Effect.promise(() => floor(events * webhooks))
        rounds.push({ baseline, dispatcher, floor: floorRun })
      }
      // Every delivery must be stored as delivered (outside the clock).
      let recorded = 0
      for (const id of webhookIds) {
        let after: { createdAt: Kernel.Timestamp.Timestamp; id: string } | undefined = undefined
        for (;;) {
          const page: ReadonlyArray<Webhooks.WebhookDeliveryRecord> = yield* repo.listDeliveries(org.id, id, {
            limit: 250,
            after
          })
          recorded += page.filter((d) => d.status === "delivered").length
          if (page.length < 250) break
          after = { createdAt: page[page.length - 1]!.createdAt, id: page[page.length - 1]!.id }
        }
      }
      const expected = (WARM_UP + events * ROUNDS) * webhooks
      if (recorded !== expected) throw new Error(`${recorded} of ${expected} deliveries stored as delivered`)
      return { rounds, connections: dispatcherConnections }
    }).pipe(
      Effect.scoped,
      Effect.provide(Organizations.Organizations.layer.pipe(Layer.provideMerge(Services))),
      Effect.provideService(Webhooks.CurrentWebhookSettings, {
        allowInsecure: true,
        allowPrivate: true,
        timeoutMs: 10_000
      })
    )
  )
  if (exit._tag === "Failure") throw new Error(Cause.pretty(exit.cause))
  return exit.value
}

// --- 2. API latency --------------------------------------------------------------------------------------------

const apiLatencies = async (store: Layer.Layer<StoreServices>, hangingUrl: string, stuckPosts: () => number) => {
  const operator = "bench-operator-token"
  const { handler, dispose } = makeWebHandler(Layer.merge(store, Kernel.IdGenerator.uuidV7), {
    operatorToken: Redacted.make(operator),
    webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: 5_000, dispatcher: { concurrency: CONCURRENCY } }
  })
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await handler(
      new Request(`http://bench${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const json = await res.json() as any
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }
  const organization = await call("POST", "/operator/organizations", operator, {
    name: "Latency",
    apiRequestsPerMinute: 1_000_000
  })
  const { secretKey } = await call("POST", `/operator/organizations/${organization.id}/keys`, operator, {
    permissions: ["settings:read", "settings:write"]
  })
  const target = await call("POST", "/webhooks", secretKey, {
    url: "http://127.0.0.1:9/unused",
    events: ["review.created"]
  })
  const run = async () => {
    const times: Array<number> = []
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now()
      await call("PATCH", `/webhooks/${target.id}`, secretKey, {
        events: [i % 2 === 0 ? "review.updated" : "review.created"]
      })
      times.push(performance.now() - started)
    }
    return times.slice(Math.floor(REQUESTS / 10)) // drop warm-up
  }
  const baseline = await run()
  for (let i = 0; i < 8; i++) {
    await call("POST", "/webhooks", secretKey, { url: hangingUrl, events: ["webhook.updated"] })
  }
  // Fill every dispatcher slot with a POST the receiver never answers before measuring.
  for (let i = 0; i < 10; i++) {
    await call("PATCH", `/webhooks/${target.id}`, secretKey, {
      events: [i % 2 === 0 ? "review.updated" : "review.created"]
    })
  }
  const deadline = Date.now() + 10_000
  while (stuckPosts() < CONCURRENCY && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  if (stuckPosts() < CONCURRENCY) throw new Error(`only ${stuckPosts()} POSTs reached the hanging receiver`)
  const stuck = await run()
  return { baseline, stuck, dispose }
}

// --- main ------------------------------------------------------------------------------------------------------

const part = process.argv[2]

const main = async () => {
  const store = await freshStore()
  process.stdout.write(
    `webhooks benchmark — store: ${store.name}, concurrency ${CONCURRENCY}, node ${process.version}\n\n`
  )
  if (part !== "latency") await throughput(store.layer, store.analyze, store.databaseCpu, store.floorClient)
  if (process.env["BENCH_KEEP"] === undefined) await store.drop()
  else process.stdout.write(`kept database ${store.name}\n`)
  if (part !== "throughput") await latencyPart()
}

const throughput = async (
  storeLayer: Layer.Layer<StoreServices>,
  analyze: (() => Promise<void>) | undefined,
  databaseCpu: () => number | undefined,
  floorClient: Layer.Layer<SqlClient.SqlClient> | undefined
) => {
  const ok = await startReceiver("ok")
  const floorRuntime = floorClient === undefined ? undefined : ManagedRuntime.make(floorClient)
  const floor = floorRuntime === undefined ? undefined : async (n: number) => {
    await floorRuntime.runPromise(prepareFloor)
    return floorRuntime.runPromise(
      measure(n, databaseCpu, floorDeliveries(ok.url, n, sampleBody, "bench-secret-0123456789"))
    )
  }
  if (floor !== undefined) await floor(500) // warm-up
  // A first baseline run warms node:http up before the rounds, as the dispatcher's warm-up round does for it.
  await rawPosts(ok.url, DELIVERIES)
  const rawConnections = ok.connections()
  const { connections, rounds } = await dispatched(
    ok.url,
    DELIVERIES,
    storeLayer,
    ok.count,
    analyze,
    databaseCpu,
    ok.connections,
    floor
  )
  await floorRuntime?.dispose()
  await ok.close()
  const cpu = (m: Measured) =>
    `CPU/delivery: process ${fmt(m.processMicros, 0)} µs (kernel ${fmt(m.systemMicros, 0)})` +
    (m.databaseMicros === undefined ? "" : `, database ${fmt(m.databaseMicros, 0)} µs`)
  const ratios = rounds.map((r) => r.dispatcher.perSecond / r.baseline.perSecond)
  const floorRatios = rounds.flatMap((r) => r.floor === undefined ? [] : [r.floor.perSecond / r.baseline.perSecond])
  recordRow(
    databaseUrl === undefined ? "webhooks-memory" : "webhooks-postgres",
    percentile(ratios, 50),
    floorRatios.length === 0 ? {} : { floor: percentile(floorRatios, 50) }
  )
  process.stdout.write(
    `deliveries/s (${DELIVERIES} per round, signed, each stored, claimed and recorded) vs plain keep-alive POSTs:\n` +
      rounds.map((r, i) =>
        `  round ${i + 1}: dispatcher ${fmt(r.dispatcher.perSecond, 0)} (${cpu(r.dispatcher)})\n` +
        `           baseline   ${fmt(r.baseline.perSecond, 0)} (${cpu(r.baseline)})   ratio ${fmt(ratios[i]!, 2)}\n` +
        (r.floor === undefined ?
          "" :
          `           floor      ${fmt(r.floor.perSecond, 0)} (${cpu(r.floor)})   ratio ${
            fmt(r.floor.perSecond / r.baseline.perSecond, 2)
          }\n`)
      ).join("") +
      `  connections the receiver accepted: ${rawConnections} (one baseline run), ${connections} (new in the dispatcher's timed rounds)\n` +
      `  ratio dispatcher / baseline, median of ${rounds.length}: ${fmt(percentile(ratios, 50), 2)}` +
      ` (range ${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)})\n` +
      (rounds[0]?.floor === undefined ? "" : (() => {
        const floors = rounds.map((r) => r.floor!.perSecond / r.baseline.perSecond)
        return `  ratio floor / baseline, median of ${rounds.length}: ${fmt(percentile(floors, 50), 2)}` +
          ` (range ${fmt(Math.min(...floors), 2)}–${
            fmt(Math.max(...floors), 2)
          }); floor: bench/support/webhook-floor.ts\n`
      })()) + "\n"
  )
}

const latencyPart = async () => {
  const hang = await startReceiver("hang")
  const store = await freshStore()
  const latency = await apiLatencies(store.layer, hang.url, hang.count)
  const p = (xs: ReadonlyArray<number>, q: number) => percentile(xs, q)
  process.stdout.write(
    `API latency, PATCH /webhooks/{id} (${REQUESTS} sequential, ms):\n` +
      `  no subscriber (baseline):        p50 ${fmt(p(latency.baseline, 50), 2)}  p99 ${
        fmt(p(latency.baseline, 99), 2)
      }\n` +
      `  8 subscribers, receiver hangs:   p50 ${fmt(p(latency.stuck, 50), 2)}  p99 ${fmt(p(latency.stuck, 99), 2)}` +
      `  (all ${CONCURRENCY} delivery slots stuck; ${hang.count()} POSTs reached the receiver)\n` +
      `  ratio hanging / baseline:        p50 ${fmt(p(latency.stuck, 50) / p(latency.baseline, 50), 2)}  p99 ${
        fmt(p(latency.stuck, 99) / p(latency.baseline, 99), 2)
      }\n`
  )
  await hang.close()
  await latency.dispose()
  await store.drop()
}

await main()
