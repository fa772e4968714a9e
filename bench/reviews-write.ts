/**
 * `npm run bench -- reviews-write [import|bulk]`: the set-based review writes on PostgreSQL, each as a ratio to a
 * baseline measured in the same run on the same database:
 *
 * - import: `POST /reviews/import`'s use-case with 10,000 rows (products by slug, existing customers, 30% with an
 *   image, 20% with a reply, 10% with survey answers; one transaction: resolution, reviews, files, replies, answers,
 *   10,000 `review.created` events, stats of the affected products) vs the same 10,000 review rows written by ONE
 *   multi-row INSERT (`INSERT … SELECT FROM jsonb_to_recordset`, a VALUES list would exceed the protocol's 65,535
 *   parameters).
 * - bulk: `PATCH /reviews/bulk-update`'s use-case over 100,000 matching reviews whose `published` all change
 *   (100,000 `review.updated` events, stats of 1,000 products) vs ONE `UPDATE reviews SET published, moderated_at,
 *   updated_at WHERE organization_id = …` of the same rows, after one untimed warm-up of both (the seeded table is
 *   packed; only the first update of its rows extends it).
 *
 * Database: a fresh database on `BENCH_DATABASE_URL` (else `TEST_DATABASE_URL`), dropped afterwards; with neither,
 * embedded PGlite in a temporary directory (single connection, in-process: its numbers say little about a server).
 * `BENCH_ITERATIONS` (default 3) sets the repetitions; medians are reported. `BENCH_KEEP=1` keeps the database
 * (for EXPLAIN ANALYZE afterwards). The peak RSS of the process is printed
 * after each phase: the bulk update never brings the matching reviews into Node, so it should barely move.
 * Timings are of the use-cases (no HTTP: JSON parsing and schema decoding are measured separately for the import).
 */
import { Kernel, Organizations, Reviews } from "@feedback/core"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { recordRow } from "./support/targets.ts"
import { benchDatabaseServer, benchDatabaseTarget } from "./support/common.ts"

const ITERATIONS = Math.max(1, Number(process.env["BENCH_ITERATIONS"] ?? 3))
const IMPORT_ROWS = 10_000
const BULK_REVIEWS = 100_000
const PRODUCTS = 1_000
const CUSTOMERS = 5_000
// The runner may import this module in-process (argv: node run.ts reviews-write [mode]) or spawn it (argv: node
// reviews-write.ts [mode]); the mode is whichever argument names one.
const which = process.argv.slice(2).find((a) => a === "import" || a === "bulk" || a === "all") ?? "all"

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const ms = (n: number) => `${n.toFixed(0)} ms`
const peakRssMiB = () => `${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`

/** The process's own CPU (ms) of the last `timed` run: the Node side of a use-case, beside the database's. */
let lastNodeCpuMs = 0
const timed = async <A>(run: () => Promise<A>): Promise<[number, A]> => {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const a = await run()
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  lastNodeCpuMs = (used.user + used.system) / 1000
  return [wall, a]
}

/**
 * CPU time (ms) used so far by each given server process, read from /proc: with the server on this machine, the
 * database's own work for a phase, which other load on a shared machine disturbs much less than wall time does.
 * A process that cannot be read (gone, a remote server, no /proc) is left out.
 */
const processCpuMs = (pids: ReadonlyArray<number>): Map<number, number> => {
  const used = new Map<number, number>()
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
      used.set(pid, (Number(fields[11]) + Number(fields[12])) * 10) // utime + stime, USER_HZ 100
    } catch {
      // not readable here
    }
  }
  return used
}

const main = async () => {
  const { target, cleanup, label } = await benchDatabaseTarget()
  const services = Layer.merge(PgStoreLayer(target), Kernel.IdGenerator.uuidV7)
  const runtime = ManagedRuntime.make(
    Layer.merge(Reviews.ReviewWrites.layer, Organizations.Organizations.layer).pipe(Layer.provideMerge(services))
  )
  const sqlRun = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    runtime.runPromise(SqlClient.SqlClient.use(f).pipe(Effect.orDie))
  // The database's CPU for one phase: every backend of the bench database, before and after.
  const backendPids = () =>
    sqlRun((sql) => sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
      .then((rows) => rows.map((r) => Number(r.pid)))
  const withDbCpu = async <A>(run: () => Promise<[number, A]>): Promise<[number, A, number | undefined]> => {
    if (benchDatabaseServer === undefined) return [...(await run()), undefined]
    const before = processCpuMs(await backendPids())
    const [wall, a] = await run()
    // Backends that started during the phase count from zero; one that ended during it is lost (rare: the pool
    // keeps its connections), so the figure can only be low.
    const after = processCpuMs(await backendPids())
    if (before.size === 0 || after.size === 0) return [wall, a, undefined]
    let used = 0
    for (const [pid, ms] of after) used += ms - (before.get(pid) ?? 0)
    return [wall, a, used]
  }
  const cpuNote = (u: number | undefined, b: number | undefined) =>
    u === undefined || b === undefined ? "" : `; database CPU ${ms(u)} vs ${ms(b)}`
  const cpuRatio = (
    label: string,
    useCase: ReadonlyArray<number | undefined>,
    baseline: ReadonlyArray<number | undefined>
  ) => {
    if (useCase.some((x) => x === undefined) || baseline.some((x) => x === undefined)) return
    const u = median(useCase as Array<number>)
    const b = median(baseline as Array<number>)
    console.log(
      `  database CPU: ${label} ${ms(u)}, baseline ${ms(b)}: ${
        (u / b).toFixed(2)
      }× (less disturbed by other load than wall time)`
    )
  }
  console.log(
    `reviews-write benchmark: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${
      (totalmem() / 2 ** 30).toFixed(0)
    } GiB`
  )
  console.log(`store: ${label}; ${ITERATIONS} iteration(s), medians\n`)
  try {
    /** An organization with PRODUCTS products (slug p-<i>) and CUSTOMERS customers (buyer<i>@example.com). */
    const organization = async (name: string) => {
      const org = await runtime.runPromise(Organizations.Organizations.use((o) => o.createOrganization({ name })))
      const productIds = Array.from({ length: PRODUCTS }, () => Kernel.uuidV7(Date.now()))
      await sqlRun((sql) =>
        sql.unsafe(
          `INSERT INTO products (organization_id, id, slug, title, metadata, created_at, updated_at)
           SELECT $1, (p.value #>> '{}')::uuid, 'p-' || (p.ordinality - 1), 'Product ' || (p.ordinality - 1), '{}', now(), now()
           FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS p`,
          [org.id, JSON.stringify(productIds)]
        )
      )
      await sqlRun((sql) =>
        sql.unsafe(
          `INSERT INTO customers (organization_id, id, email, metadata, created_at, updated_at)
           SELECT $1, gen_random_uuid(), 'buyer' || g || '@example.com', '{}', now(), now() FROM generate_series(0, $2::int - 1) g`,
          [org.id, CUSTOMERS]
        )
      )
      const caller = new Kernel.SecretKeyCaller({
        organizationId: org.id,
        keyId: Kernel.uuidV7(Date.now()) as Kernel.SecretKeyId,
        permissions: new Set(["reviews:write"])
      })
      return { org: org.id as Kernel.OrganizationId, productIds, caller }
    }
    const asCaller = (caller: Kernel.SecretKeyCaller) => Effect.provideService(Kernel.CurrentCaller, caller)
    const countEvents = (org: Kernel.OrganizationId, event: string) =>
      sqlRun((sql) =>
        sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM domain_events WHERE organization_id = ${org} AND event = ${event}`
      )
        .then((rows) => Number(rows[0]!.n))

    if (which === "all" || which === "import") {
      const { org, productIds, caller } = await organization("Import bench")
      const body = "Solid mug, keeps coffee warm for a long time. ".repeat(4)
      const rowsFor = (run: number): Array<Reviews.ReviewImportRow> =>
        Array.from({ length: IMPORT_ROWS }, (_, i): Reviews.ReviewImportRow => ({
          externalId: `bench-${run}-${i}`,
          product: `p-${i % PRODUCTS}`,
          customer: i % 7 === 0 ? `Buyer${i % CUSTOMERS}@Example.com` : `buyer${i % CUSTOMERS}@example.com`,
          title: `Review ${i}`,
          body,
          rating: 1 + (i % 5),
          createdAt: "2025-06-01T12:00:00Z",
          metadata: { source: "bench" },
          ...(i % 10 < 3 ? { imageUrls: [`https://cdn.example/reviews/${run}-${i}.jpg`] } : {}),
          ...(i % 5 === 0 ? { response: "Thank you for the review!" } : {}),
          ...(i % 10 === 0
            ? {
              answers: [{
                questionId: "0190f000-0000-7000-8000-0000000000aa" as never,
                label: "Fit",
                type: "scale",
                step: 1,
                steps: 5
              }]
            }
            : {})
        }))
      const decode = Schema.decodeUnknownSync(Schema.toCodecJson(Reviews.ImportRequest))
      const importTimes: Array<number> = []
      const baselineTimes: Array<number> = []
      const decodeTimes: Array<number> = []
      const importCpus: Array<number | undefined> = []
      const baselineCpus: Array<number | undefined> = []
      const importNodeCpus: Array<number> = []
      for (let run = 0; run < ITERATIONS; run++) {
        const rows = rowsFor(run)
        const json = JSON.stringify({ data: rows })
        const [decodeMs, request] = await timed(async () => decode(JSON.parse(json)))
        decodeTimes.push(decodeMs)
        const [importMs, result, importCpu] = await withDbCpu(() =>
          timed(() => runtime.runPromise(Reviews.ReviewWrites.use((w) => w.import(request)).pipe(asCaller(caller))))
        )
        importCpus.push(importCpu)
        const importNodeCpu = lastNodeCpuMs
        if (result.imported.length !== IMPORT_ROWS) {
          throw new Error(`imported ${result.imported.length}, skipped ${JSON.stringify(result.skipped.slice(0, 3))}`)
        }
        importTimes.push(importMs)
        // The same 10,000 review rows (fresh ids, same products, customers and content) in one multi-row INSERT.
        const baselineRows = rows.map((r, i) => ({
          id: Kernel.uuidV7(Date.now()),
          product_id: productIds[i % PRODUCTS],
          email: r.customer!.toLowerCase(),
          title: r.title,
          body: r.body,
          rating: r.rating,
          metadata: r.metadata,
          external_id: `baseline-${run}-${i}`,
          created_at: "2025-06-01T12:00:00.000Z"
        }))
        const [baselineMs, , baselineCpu] = await withDbCpu(() =>
          timed(() =>
            sqlRun((sql) =>
              sql.withTransaction(sql.unsafe(
                `INSERT INTO reviews (organization_id, id, product_id, customer_id, title, body, rating, published, moderated_at,
                 metadata, external_id, created_at, updated_at)
               SELECT $1, x.id, x.product_id, c.id, x.title, x.body, x.rating, true, now(), x.metadata, x.external_id,
                 x.created_at, now()
               FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, product_id uuid, email text, title text, body text,
                 rating double precision, metadata jsonb, external_id text, created_at timestamptz)
               LEFT JOIN customers c ON c.organization_id = $1 AND c.email = x.email`,
                [org, JSON.stringify(baselineRows)]
              ))
            )
          )
        )
        baselineTimes.push(baselineMs)
        baselineCpus.push(baselineCpu)
        importNodeCpus.push(importNodeCpu)
        console.log(
          `  import run ${run + 1}: use-case ${ms(importMs)}, baseline ${ms(baselineMs)} (decode ${ms(decodeMs)})${
            cpuNote(importCpu, baselineCpu)
          }; this process's CPU ${ms(importNodeCpu)} vs ${ms(lastNodeCpuMs)}`
        )
      }
      const events = await countEvents(org, "review.created")
      const i = median(importTimes)
      const b = median(baselineTimes)
      console.log(
        `import of ${IMPORT_ROWS.toLocaleString("en-US")} rows: ${
          ms(i)
        }; baseline one multi-row INSERT of the same reviews: ${ms(b)}`
      )
      console.log(
        `  ratio ${(i / b).toFixed(2)}× the baseline; JSON parse + schema decode of the body: ${
          ms(median(decodeTimes))
        }`
      )
      recordRow("import", i / b, benchDatabaseServer === undefined ? { note: "embedded PGlite" } : {})
      cpuRatio("import", importCpus, baselineCpus)
      console.log(`  this process's CPU during the import: ${ms(median(importNodeCpus))} (median)`)
      console.log(
        `  ${(IMPORT_ROWS / (i / 1000)).toFixed(0)} reviews/s; review.created events recorded: ${
          events.toLocaleString("en-US")
        }; peak RSS ${peakRssMiB()}\n`
      )
    }

    if (which === "all" || which === "bulk") {
      const { org, productIds, caller } = await organization("Bulk bench")
      await sqlRun((sql) =>
        sql.unsafe(
          `WITH products AS (SELECT array_agg((value #>> '{}')::uuid) AS ids FROM jsonb_array_elements($2::jsonb))
           INSERT INTO reviews (organization_id, id, product_id, title, body, rating, published, created_at, updated_at)
           SELECT $1, gen_random_uuid(), products.ids[1 + (g % ${PRODUCTS})], 'Review ' || g,
             'Solid mug, keeps coffee warm for a long time.', 1 + (g % 5), false, now(), now()
           FROM generate_series(0, $3::int - 1) g, products`,
          [org, JSON.stringify(productIds), BULK_REVIEWS]
        )
      )
      const vacuum = () => sqlRun((sql) => sql.unsafe("VACUUM ANALYZE reviews"))
      await vacuum()
      console.log(
        `seeded ${BULK_REVIEWS.toLocaleString("en-US")} reviews over ${PRODUCTS} products; peak RSS ${peakRssMiB()}`
      )
      const bulkTimes: Array<number> = []
      const baselineTimes: Array<number> = []
      const bulkCpus: Array<number | undefined> = []
      const baselineCpus: Array<number | undefined> = []
      // Run -1 is a warm-up, not timed: the seeded table is packed, so the first UPDATE of its rows (always the
      // use-case's) puts 100,000 new versions on new pages (19 → 40 MB), where every later one, after VACUUM, reuses
      // the space the previous one freed. Timed runs then start from the same steady state on both sides.
      for (let run = -1; run < ITERATIONS; run++) {
        // Reviews are all unpublished here: the use-case publishes every one (100,000 changes and events)...
        await vacuum()
        const [bulkMs, result, bulkCpu] = await withDbCpu(() =>
          timed(() =>
            runtime.runPromise(
              Reviews.ReviewWrites.use((w) => w.bulkUpdate({}, { published: true })).pipe(asCaller(caller))
            )
          )
        )
        if (result.count !== BULK_REVIEWS) throw new Error(`matched ${result.count}`)
        // ...and the baseline unpublishes the same rows with one plain UPDATE.
        await vacuum()
        const [baselineMs, , baselineCpu] = await withDbCpu(() =>
          timed(() =>
            sqlRun((sql) =>
              sql.withTransaction(sql.unsafe(
                `UPDATE reviews SET published = false, moderated_at = now(), updated_at = now() WHERE organization_id = $1`,
                [org]
              ))
            )
          )
        )
        if (run < 0) {
          console.log(
            `  warm-up (not timed): use-case ${ms(bulkMs)}, baseline ${ms(baselineMs)}${cpuNote(bulkCpu, baselineCpu)}`
          )
          continue
        }
        bulkTimes.push(bulkMs)
        bulkCpus.push(bulkCpu)
        baselineTimes.push(baselineMs)
        baselineCpus.push(baselineCpu)
        console.log(
          `  bulk run ${run + 1}: use-case ${ms(bulkMs)}, baseline ${ms(baselineMs)}; peak RSS ${peakRssMiB()}${
            cpuNote(bulkCpu, baselineCpu)
          }`
        )
      }
      const events = await countEvents(org, "review.updated")
      const u = median(bulkTimes)
      const b = median(baselineTimes)
      console.log(
        `bulk-update of ${BULK_REVIEWS.toLocaleString("en-US")} reviews: ${
          ms(u)
        }; baseline one UPDATE of the same rows: ${ms(b)}`
      )
      recordRow("bulk-update", u / b, benchDatabaseServer === undefined ? { note: "embedded PGlite" } : {})
      console.log(
        `  ratio ${(u / b).toFixed(2)}× the baseline; review.updated events recorded: ${
          events.toLocaleString("en-US")
        } (${ITERATIONS + 1} × ${
          BULK_REVIEWS.toLocaleString("en-US")
        }, the warm-up's included); peak RSS ${peakRssMiB()}`
      )
      cpuRatio("bulk-update", bulkCpus, baselineCpus)
    }
  } finally {
    await runtime.dispose()
    if (process.env["BENCH_KEEP"] === undefined) await cleanup()
    else console.log(`kept ${label}`)
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
