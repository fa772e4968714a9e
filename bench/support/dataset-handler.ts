/**
 * What the in-process benchmarks over the large review data set share (`reviews-list`, `storefront`): a fresh
 * PostgreSQL database, the store and the real web handler on it (no workers) beside a runtime over the same layers,
 * the data set generated and analyzed, and the interleaved measuring loop (wall and this process's CPU per call).
 */
import { Kernel, Organizations, type StoreServices } from "@feedback/core"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { makeWebHandler } from "@feedback/adapter-http/server"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { generateReviewDataset } from "../../packages/adapter-postgres/src/testing/ReviewDataset.ts"
import { benchDatabaseServer, freshDatabase, startCpuProfile } from "./common.ts"

/** A positive whole number from the environment (`1_000_000` spellings allowed), else `fallback`. */
export const positiveEnv = (name: string, fallback: number): number => {
  const raw = process.env[name]
  const n = raw === undefined || raw === "" ? fallback : Number(raw.replace(/_/g, ""))
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number, got ${raw}`)
  return n
}

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

type Services = StoreServices | Kernel.IdGenerator | SqlClient.SqlClient

export interface DatasetHandler {
  readonly dbUrl: string
  /** The store's services (and `Organizations`) as the handler sees them, for set-up and direct baselines. */
  readonly runtime: ManagedRuntime.ManagedRuntime<Organizations.Organizations | Services, unknown>
  /** The real web handler over the same store. */
  readonly handler: (request: Request) => Promise<Response>
  /** The built services, for a floor server over the same store. */
  readonly built: () => Promise<Layer.Layer<StoreServices | SqlClient.SqlClient>>
  /** Fills the organization's data set (BENCH_REVIEWS over BENCH_PRODUCTS) and analyzes it; prints what it did. */
  readonly generate: (organizationId: Kernel.OrganizationId, label: string) => Promise<void>
  /** Disposes everything opened, then drops the database unless BENCH_KEEP=1 (its URL printed then). */
  readonly close: (more?: ReadonlyArray<() => Promise<void>>) => Promise<void>
}

/** Exits with a hint when no PostgreSQL server is configured: these benchmarks need one. */
export const openDatasetHandler = async (): Promise<DatasetHandler> => {
  if (benchDatabaseServer === undefined) {
    console.error("Set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server")
    process.exit(2)
  }
  const database = await freshDatabase(benchDatabaseServer)
  const store = PgStoreLayer({ _tag: "Server", url: database.url, maxConnections: 10 })
  const services = Layer.merge(store, Kernel.IdGenerator.uuidV7) as Layer.Layer<Services, unknown>
  const memoMap = Layer.makeMemoMapUnsafe()
  const runtime = ManagedRuntime.make(Organizations.Organizations.layer.pipe(Layer.provideMerge(services)), { memoMap })
  // No background workers: idle here, they would only add their heartbeats to the timings.
  const { handler, dispose } = makeWebHandler(services, { workers: false }, memoMap)
  const reviews = positiveEnv("BENCH_REVIEWS", 1_000_000)
  const products = positiveEnv("BENCH_PRODUCTS", 10_000)
  return {
    dbUrl: database.url,
    runtime,
    handler: (request) => handler(request),
    built: async () =>
      Layer.succeedContext(await runtime.runPromise(Effect.context<StoreServices | SqlClient.SqlClient>())),
    generate: async (organizationId, label) => {
      console.log(`${label}: ${reviews.toLocaleString("en")} reviews over ${products.toLocaleString("en")} products`)
      const g0 = performance.now()
      await runtime.runPromise(generateReviewDataset({ organizationId, reviews, products }))
      // What autovacuum does to a table that stopped growing: the search indexes' pending lists are merged.
      await runtime.runPromise(
        Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`VACUUM ANALYZE reviews, customers, products`))
      )
      console.log(`  data set generated and analyzed in ${((performance.now() - g0) / 1000).toFixed(1)} s`)
    },
    close: async (more = []) => {
      await dispose()
      for (const f of more) await f()
      await runtime.dispose()
      if (process.env["BENCH_KEEP"] === "1") console.log(`Kept the database: ${database.url}`)
      else await database.drop()
    }
  }
}

/**
 * Times every variant `runs` times, interleaved (so a burst of load on the machine falls on each alike), after
 * `warmups` calls each: per variant, the wall milliseconds and this process's CPU microseconds of each call.
 */
export const interleaved = async <N extends string>(
  variants: Readonly<Record<N, () => Promise<unknown>>>,
  runs: number,
  warmups: number
): Promise<{ readonly wall: Record<N, Array<number>>; readonly cpu: Record<N, Array<number>> }> => {
  const names = Object.keys(variants) as Array<N>
  const empty = () => Object.fromEntries(names.map((n) => [n, [] as Array<number>])) as Record<N, Array<number>>
  const wall = empty()
  const cpu = empty()
  for (const n of names) for (let i = 0; i < warmups; i++) await variants[n]()
  for (let i = 0; i < runs; i++) {
    for (const n of names) {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      await variants[n]()
      wall[n].push(performance.now() - t0)
      const c = process.cpuUsage(c0)
      cpu[n].push(c.user + c.system)
    }
  }
  return { wall, cpu }
}

/**
 * `BENCH_CPU_PROFILE=file.cpuprofile BENCH_PROFILE_VARIANT=name`: after the timed runs, `BENCH_PROFILE_CALLS` (default
 * 2,000) more calls of that one variant under the inspector's sampling profiler (`BENCH_CPU_PROFILE_INTERVAL` µs,
 * default 100), written to the file for DevTools or a summary script.
 */
export const profileVariant = async <N extends string>(
  variants: Readonly<Record<N, () => Promise<unknown>>>
): Promise<void> => {
  const file = process.env["BENCH_CPU_PROFILE"]
  const name = process.env["BENCH_PROFILE_VARIANT"] as N | undefined
  if (file === undefined || file === "" || name === undefined) return
  const variant = variants[name]
  if (variant === undefined) throw new Error(`BENCH_PROFILE_VARIANT must be one of ${Object.keys(variants).join(", ")}`)
  const stop = await startCpuProfile(100)
  const calls = positiveEnv("BENCH_PROFILE_CALLS", 2_000)
  for (let i = 0; i < calls; i++) await variant()
  await stop()
  console.log(`  wrote a CPU profile of ${name} to ${file}`)
}
