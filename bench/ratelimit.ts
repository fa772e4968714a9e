/**
 * `npm run bench -- ratelimit`: what the rate limiter costs.
 *
 * 1. Decisions per second of each store, for one hot organization and for 1,000 organizations, against baselines
 *    measured in the same run: the same loop calling a no-op store, and (PostgreSQL) the same loop running one
 *    trivial `SELECT 1` round trip on the same pool — so "1.00× of SELECT 1" would mean one round trip per decision.
 *    PostgreSQL is a fresh database on BENCH_DATABASE_URL / TEST_DATABASE_URL's server, else embedded PGlite.
 *    Redis (the scale-out limiter, `RATE_LIMIT_URL`) is TEST_REDIS_URL's server, else a throwaway `redis-server`;
 *    its round-trip baseline is one `PING` on the same client.
 * 2. The limiter's cost on a cheap request: `GET /organization` through the real HTTP server (a child process) under
 *    autocannon, with the limiter on vs a store whose spend always admits.
 *
 * BENCH_SECONDS scales the measured durations (default 2 s per decision loop; HTTP: each variant twice, interleaved,
 * 4 s after a 1.5 s warm-up, the better run kept).
 */
import { makeMemoryRateLimitRepository } from "@feedback/adapter-memory"
import { type DatabaseTarget, PgStoreLayer } from "@feedback/adapter-postgres"
import { RateLimits } from "@feedback/core"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { startServerProcess } from "../packages/adapter-http/test/ServerProcess.ts"
import { RedisRateLimitRepository } from "@feedback/adapter-redis"
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import * as Redis from "effect/persistence/Redis"
import { redisAvailable, startRedis } from "../packages/adapter-redis/test/TestRedis.ts"
import {
  benchDatabaseServer,
  benchScale,
  describeMachine,
  fmt,
  freshDatabase,
  load,
  OPERATOR_TOKEN,
  provision,
  ratio,
  table
} from "./support/common.ts"
import { recordRow } from "./support/targets.ts"

const scale = benchScale
const DECISION_SECONDS = 2 * scale
const HTTP_SECONDS = 4 * scale
const WARMUP_SECONDS = 1.5 * Math.min(scale, 1)

// A ceiling so large that no run empties a bucket: every decision measured is an admission (the common case).
const buckets: ReadonlyArray<RateLimits.KeyedBucket> = [{
  key: RateLimits.ORG_BUCKET_KEY,
  spec: RateLimits.TokenBucket.bucketForPlan(30_000_000)
}]
const hotOrg = randomUUID()
const manyOrgs = Array.from({ length: 1_000 }, () => randomUUID())

type Spend = (organizationId: string) => Effect.Effect<unknown>

/** `concurrency` fibers calling `spend` until the time is up; decisions per second. */
const decisionsPerSecond = (spend: Spend, orgs: ReadonlyArray<string>, concurrency: number, seconds: number) =>
  Effect.gen(function*() {
    let count = 0
    const deadline = performance.now() + seconds * 1000
    const worker = Effect.gen(function*() {
      let i = 0
      while (performance.now() < deadline) {
        // Check the time every 64 calls: a clock read per call would show in the no-op baseline.
        for (let j = 0; j < 64; j++) yield* spend(orgs[(i++) % orgs.length]!)
        count += 64
      }
    })
    const started = performance.now()
    yield* Effect.all(Array.from({ length: concurrency }, () => worker), { concurrency: "unbounded", discard: true })
    return count / ((performance.now() - started) / 1000)
  })

const noOpDecision: RateLimits.SpendDecision = {
  _tag: "Admitted",
  cost: 1,
  limit: 30_000_000,
  remaining: 30_000_000,
  fullInSeconds: 0
}
const noOpStore: Spend = () => Effect.succeed(noOpDecision)
const viaStore = (store: RateLimits.RateLimitRepository["Service"]): Spend => (org) => store.spend(org, buckets, 1)

const decisionBenchmarks = Effect.gen(function*() {
  const rows: Array<Array<string>> = []

  // --- memory ------------------------------------------------------------------------------------------------------
  const memory = yield* makeMemoryRateLimitRepository
  const memoryBaseline = yield* decisionsPerSecond(noOpStore, [hotOrg], 1, DECISION_SECONDS)
  rows.push(["no-op store (baseline), 1 fiber", fmt(memoryBaseline), "1.00×", ""])
  for (
    const [label, orgs] of [["memory, 1 hot organization", [hotOrg]], [
      "memory, 1,000 organizations",
      manyOrgs
    ]] as const
  ) {
    const rate = yield* decisionsPerSecond(viaStore(memory), orgs, 1, DECISION_SECONDS)
    rows.push([label, fmt(rate), ratio(rate, memoryBaseline), ""])
  }

  // --- PostgreSQL --------------------------------------------------------------------------------------------------
  const database = benchDatabaseServer === undefined
    ? undefined
    : yield* Effect.promise(() => freshDatabase(benchDatabaseServer!))
  const dataDir = database === undefined ? mkdtempSync(Path.join(tmpdir(), "fb-bench-pglite-")) : undefined
  const concurrency = database === undefined ? 1 : 8
  const target: DatabaseTarget = database === undefined
    ? { _tag: "Embedded", dataDir: dataDir! }
    : { _tag: "Server", url: database.url, maxConnections: concurrency }
  const label = database === undefined
    ? "PGlite (embedded, 1 connection)"
    : `PostgreSQL server, ${concurrency} connections`
  yield* Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(PgStoreLayer(target).pipe(Layer.orDie))
    const store = Context.get(context, RateLimits.RateLimitRepository)
    const sql = Context.get(context, SqlClient.SqlClient)
    const selectOne: Spend = () => sql`SELECT 1`.pipe(Effect.orDie)
    const pgNoOp = yield* decisionsPerSecond(noOpStore, [hotOrg], concurrency, DECISION_SECONDS)
    const roundTrip = yield* decisionsPerSecond(selectOne, [hotOrg], concurrency, DECISION_SECONDS)
    rows.push([`no-op store (baseline), ${concurrency} fiber${concurrency === 1 ? "" : "s"}`, fmt(pgNoOp), "1.00×", ""])
    rows.push([`SELECT 1 on ${label} (baseline)`, fmt(roundTrip), ratio(roundTrip, pgNoOp), "1.00×"])
    for (const [name, orgs] of [["1 hot organization", [hotOrg]], ["1,000 organizations", manyOrgs]] as const) {
      const rate = yield* decisionsPerSecond(viaStore(store), orgs, concurrency, DECISION_SECONDS)
      rows.push([`${label}, ${name}`, fmt(rate), ratio(rate, pgNoOp), ratio(rate, roundTrip)])
    }
  }))
  if (database !== undefined) yield* Effect.promise(database.drop)
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })

  // --- Redis ------------------------------------------------------------------------------------------------------
  if (redisAvailable) {
    const redisServer = yield* Effect.promise(startRedis)
    yield* Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(
        RedisRateLimitRepository.layerRedis({ keyPrefix: `bench:${randomUUID()}:` }).pipe(
          Layer.provideMerge(NodeRedis.layer({ url: redisServer.url })),
          Layer.orDie
        )
      )
      const store = Context.get(context, RateLimits.RateLimitRepository)
      const redis = Context.get(context, Redis.Redis)
      const ping: Spend = () => redis.send("PING").pipe(Effect.orDie)
      const redisConcurrency = 8
      const noOp = yield* decisionsPerSecond(noOpStore, [hotOrg], redisConcurrency, DECISION_SECONDS)
      const roundTrip = yield* decisionsPerSecond(ping, [hotOrg], redisConcurrency, DECISION_SECONDS)
      rows.push([`no-op store (baseline), ${redisConcurrency} fibers`, fmt(noOp), "1.00×", ""])
      rows.push([
        `PING on Redis, one client, ${redisConcurrency} fibers (baseline)`,
        fmt(roundTrip),
        ratio(roundTrip, noOp),
        "1.00×"
      ])
      for (const [name, orgs] of [["1 hot organization", [hotOrg]], ["1,000 organizations", manyOrgs]] as const) {
        const rate = yield* decisionsPerSecond(viaStore(store), orgs, redisConcurrency, DECISION_SECONDS)
        rows.push([`Redis, ${name}`, fmt(rate), ratio(rate, noOp), ratio(rate, roundTrip)])
      }
    }))
    redisServer.stop()
  } else {
    rows.push(["Redis: skipped (no TEST_REDIS_URL, no redis-server on PATH)", "", "", ""])
  }

  console.log("\nDecisions per second (each ratio against a baseline measured in this run)\n")
  table(["store and load", "decisions/s", "vs no-op", "vs round trip (SELECT 1 / PING)"], rows)
})

const httpBenchmarks = async () => {
  const rows: Array<Array<string>> = []
  const pglite = async () => {
    const dir = mkdtempSync(Path.join(tmpdir(), "fb-bench-pglite-"))
    return {
      env: { DATABASE_URL: "", DATA_DIR: dir },
      cleanup: async () => rmSync(dir, { recursive: true, force: true })
    }
  }
  const server = benchDatabaseServer
  const stores: Array<
    {
      readonly name: string
      readonly env: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>
    }
  > = [
    { name: "memory", env: async () => ({ env: { DATABASE_URL: "memory" }, cleanup: async () => {} }) },
    ...(server === undefined ? [] : [{
      name: "PostgreSQL server",
      env: async () => {
        const db = await freshDatabase(server)
        return { env: { DATABASE_URL: db.url }, cleanup: db.drop }
      }
    }]),
    // Always: the embedded store is the default of `npm start`, and its limiter differs (levels in the process).
    { name: "PGlite (embedded)", env: pglite }
  ]
  for (const store of stores) {
    const results: Record<string, Awaited<ReturnType<typeof load>>> = {}
    // off, on, off, on: the first run of a benchmark process is slower whatever it measures (seen both ways round),
    // so each variant runs twice, interleaved, and keeps its better run.
    for (const limiter of ["off", "on", "off", "on"] as const) {
      const { cleanup, env } = await store.env()
      const server = await startServerProcess(
        { ...env, BENCH_LIMITER: limiter, OPERATOR_TOKEN, LOG_REQUESTS: "false" },
        { script: Path.join(import.meta.dirname, "support/server.ts") }
      )
      try {
        const { key } = await provision(server.url)
        const r = await load(`${server.url}/organization`, key, {
          seconds: HTTP_SECONDS,
          warmupSeconds: WARMUP_SECONDS,
          connections: 32,
          serverPid: server.pid
        })
        const previous = results[limiter]
        if (previous === undefined || r.requestsPerSecond > previous.requestsPerSecond) results[limiter] = r
      } finally {
        await server.stop()
        await cleanup()
      }
    }
    const off = results["off"]!
    const on = results["on"]!
    // Issue 14's row is the default store of `npm start`; the others are printed for comparison.
    if (store.name === "PGlite (embedded)") recordRow("limiter-pglite", on.requestsPerSecond / off.requestsPerSecond)
    const cpu = (r: typeof on) => r.serverCpuMicrosPerRequest
    for (const [limiter, r] of [["off (always admits)", off], ["on", on]] as const) {
      rows.push([
        `${store.name}, limiter ${limiter}`,
        fmt(r.requestsPerSecond),
        ratio(r.requestsPerSecond, off.requestsPerSecond),
        cpu(r) === undefined ? "n/a" : fmt(cpu(r)!),
        cpu(r) === undefined || cpu(off) === undefined ? "n/a" : ratio(cpu(off)!, cpu(r)!),
        fmt(r.latencyMeanMs, 2),
        fmt(r.latencyP99Ms, 0),
        `${r.non2xx + r.errors}`
      ])
    }
    rows.push([
      `${store.name}: the limiter adds`,
      "",
      "",
      cpu(on) === undefined || cpu(off) === undefined ? "" : `${fmt(cpu(on)! - cpu(off)!)} µs`,
      "",
      `${fmt(on.latencyMeanMs - off.latencyMeanMs, 2)} ms`,
      "",
      ""
    ])
  }
  console.log(
    `\nGET /organization through the HTTP server (autocannon, 32 connections, best of 2 interleaved runs of ${HTTP_SECONDS} s after ${WARMUP_SECONDS} s warm-up;`
  )
  console.log("one organization takes every request: for PostgreSQL, every spend contends for one row)\n")
  table(["server", "req/s", "vs off", "server CPU µs/req", "CPU: off/on", "mean ms", "p99 ms", "non-2xx"], rows)
}

const main = async () => {
  console.log(`ratelimit benchmark — ${await describeMachine()}`)
  const only = process.argv[2]
  if (only === undefined || only === "decisions") await Effect.runPromise(decisionBenchmarks)
  if (only === undefined || only === "http") await httpBenchmarks()
}

await main()
