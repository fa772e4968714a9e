/**
 * `npm run bench -- jobs`: import and export jobs on PostgreSQL (docs/DECISIONS.md §20), each as a ratio to a
 * baseline measured in the same run on the same database:
 *
 * - import: a `BENCH_ROWS`-row (default 100,000) NDJSON review import job — rows generated lazily and streamed into
 *   the job's staging table, then imported by the worker's `runNext` in batches of 2,000 (the default) with every rule of the
 *   synchronous import (resolution, customers, replies, files, events, stats) — vs the same review rows written by
 *   ONE multi-row INSERT (`INSERT … SELECT FROM jsonb_to_recordset`). Target ≤ 2×. Peak RSS is printed before and
 *   after: the job never holds the file, so it should stay flat as BENCH_ROWS grows (compare two runs).
 * - export: an NDJSON export job of those reviews (paged reads, chunks stored, then the download streamed and
 *   counted) vs `COPY (SELECT … FROM reviews WHERE organization_id = …) TO STDOUT` through `psql`. Target ≤ 2×.
 *   Beside the wall time it prints the export's CPU, this process's and the database backends' (from /proc, with the
 *   server on this machine); `BENCH_CPU_PROFILE=file` profiles this process during the export.
 *
 * Database: a fresh database on `BENCH_DATABASE_URL` (else `TEST_DATABASE_URL`), dropped afterwards; with neither,
 * embedded PGlite in a temporary directory (no COPY baseline then, and its numbers say little about a server).
 * One iteration: a 100,000-row job takes minutes.
 */
import { Catalog, Jobs, Kernel, Organizations, Reviews } from "@feedback/core"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { spawnSync } from "node:child_process"
import { cpus, totalmem } from "node:os"
import { recordRow } from "./support/targets.ts"
import { benchDatabaseTarget, cpuMillis, startCpuProfile } from "./support/common.ts"

const ROWS = Math.max(1, Number(process.env["BENCH_ROWS"] ?? 100_000))
const PRODUCTS = 1_000
const ms = (n: number) => `${n.toFixed(0)} ms`
const peakRssMiB = () => `${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`
const timed = async <A>(run: () => Promise<A>): Promise<[number, A]> => {
  const started = performance.now()
  const a = await run()
  return [performance.now() - started, a]
}

/** The file's rows, made one at a time (never the whole file in memory). */
function* rows(run: string): Generator<string> {
  const body = "Solid mug, keeps coffee warm for a long time. ".repeat(4)
  for (let i = 0; i < ROWS; i++) {
    yield JSON.stringify({
      externalId: `${run}-${i}`,
      product: `p-${i % PRODUCTS}`,
      customer: `buyer${i % 5_000}@example.com`,
      title: `Review ${i}`,
      body,
      rating: 1 + (i % 5),
      createdAt: "2025-06-01T12:00:00Z",
      metadata: { source: "bench" },
      ...(i % 10 < 3 ? { imageUrls: [`https://cdn.example/reviews/${run}-${i}.jpg`] } : {}),
      ...(i % 5 === 0 ? { response: "Thank you for the review!" } : {})
    })
  }
}

const main = async () => {
  const { target, url, cleanup, label } = await benchDatabaseTarget()
  const services = Layer.merge(PgStoreLayer(target), Kernel.IdGenerator.uuidV7)
  const useCases = Layer.merge(
    Jobs.Jobs.layer.pipe(Layer.provide([Reviews.ReviewWrites.layer, Reviews.Reviews.layer, Catalog.Catalogs.layer])),
    Organizations.Organizations.layer
  )
  const runtime = ManagedRuntime.make(useCases.pipe(Layer.provideMerge(services)))
  const sqlRun = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    runtime.runPromise(SqlClient.SqlClient.use(f).pipe(Effect.orDie))
  console.log(
    `jobs benchmark: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${
      (totalmem() / 2 ** 30).toFixed(0)
    } GiB`
  )
  console.log(`store: ${label}; ${ROWS.toLocaleString("en-US")} rows; peak RSS at start ${peakRssMiB()}\n`)
  try {
    const org = await runtime.runPromise(
      Organizations.Organizations.use((o) => o.createOrganization({ name: "Jobs bench" }))
    )
    const organizationId = org.id as Kernel.OrganizationId
    const productIds = Array.from({ length: PRODUCTS }, () => Kernel.uuidV7(Date.now()))
    await sqlRun((sql) =>
      sql.unsafe(
        `INSERT INTO products (organization_id, id, slug, title, metadata, created_at, updated_at)
         SELECT $1, (p.value #>> '{}')::uuid, 'p-' || (p.ordinality - 1), 'Product ' || (p.ordinality - 1), '{}', now(), now()
         FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS p`,
        [organizationId, JSON.stringify(productIds)]
      )
    )
    const caller = new Kernel.SecretKeyCaller({
      organizationId,
      keyId: Kernel.uuidV7(Date.now()) as Kernel.SecretKeyId,
      permissions: new Set(["reviews:read", "reviews:write"])
    })
    const asCaller = Effect.provideService(Kernel.CurrentCaller, caller)
    // CPU so far of this process and of each of the bench database's client backends (the pool keeps its connections;
    // one opened during a phase counts from zero; autovacuum's workers are not the export's), from /proc where the
    // server runs on this machine.
    const cpuNow = async () => {
      const node = process.cpuUsage()
      const rows = url === undefined ?
        [] :
        await sqlRun((sql) =>
          sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND backend_type = 'client backend'`
        )
      const backends = new Map<number, number>()
      for (const { pid } of rows) {
        const used = cpuMillis(Number(pid))
        if (used !== undefined) backends.set(Number(pid), used)
      }
      return { node: (node.user + node.system) / 1000, backends }
    }
    const cpuSince = (before: Awaited<ReturnType<typeof cpuNow>>, after: Awaited<ReturnType<typeof cpuNow>>) => {
      let database = 0
      for (const [pid, used] of after.backends) database += used - (before.backends.get(pid) ?? 0)
      return { node: after.node - before.node, database: after.backends.size === 0 ? undefined : database }
    }
    const drain = async () => {
      while (await runtime.runPromise(Jobs.Jobs.use((j) => j.runNext("bench-worker")))) {
        // next job
      }
    }

    // Import job: upload (staging) + the worker's batches.
    const [uploadMs, job] = await timed(() =>
      runtime.runPromise(
        Jobs.Jobs.use((j) =>
          j.createImport({ type: "reviews", strict: false, format: "ndjson" }, Stream.fromIterable(rows("job")))
        ).pipe(asCaller)
      )
    )
    const [runMs] = await timed(drain)
    const done = await runtime.runPromise(Jobs.Jobs.use((j) => j.getImport(job.id)).pipe(asCaller))
    if (done.progress.importedRows !== ROWS) {
      throw new Error(`imported ${done.progress.importedRows}: ${JSON.stringify(done.skipped.slice(0, 3))}`)
    }
    console.log(
      `import job: upload ${ms(uploadMs)} + batches ${ms(runMs)} = ${ms(uploadMs + runMs)}; peak RSS ${peakRssMiB()}`
    )

    // Baseline: the same review rows in one multi-row INSERT (fresh ids, customers resolved by a join).
    const baselineRows = [...rows("baseline")].map((text, i) => {
      const r = JSON.parse(text)
      return {
        id: Kernel.uuidV7(Date.now()),
        product_id: productIds[i % PRODUCTS],
        email: r.customer,
        title: r.title,
        body: r.body,
        rating: r.rating,
        metadata: r.metadata,
        external_id: r.externalId,
        created_at: "2025-06-01T12:00:00.000Z"
      }
    })
    const [baselineMs] = await timed(() =>
      sqlRun((sql) =>
        sql.withTransaction(sql.unsafe(
          `INSERT INTO reviews (organization_id, id, product_id, customer_id, title, body, rating, published, moderated_at,
             metadata, external_id, created_at, updated_at)
           SELECT $1, x.id, x.product_id, c.id, x.title, x.body, x.rating, true, now(), x.metadata, x.external_id, x.created_at, now()
           FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, product_id uuid, email text, title text, body text,
             rating double precision, metadata jsonb, external_id text, created_at timestamptz)
           LEFT JOIN customers c ON c.organization_id = $1 AND c.email = x.email`,
          [organizationId, JSON.stringify(baselineRows)]
        ))
      )
    )
    console.log(
      `  baseline one multi-row INSERT of the same reviews: ${ms(baselineMs)}; ratio ${
        ((uploadMs + runMs) / baselineMs).toFixed(2)
      }× (target ≤ 2×)\n`
    )
    // The rows' wording is 100,000 rows on a server; a run elsewhere says where and how many.
    const where = [
      ...(url === undefined ? [label] : []),
      ...(ROWS === 100_000 ? [] : [`${ROWS.toLocaleString("en-US")} rows`])
    ]
    const note = where.length === 0 ? {} : { note: where.join(", ") }
    recordRow("job-import", (uploadMs + runMs) / baselineMs, note)
    // Only the job's reviews are exported: the baseline's are removed again.
    await sqlRun((sql) =>
      sql.unsafe(`DELETE FROM reviews WHERE organization_id = $1 AND external_id LIKE 'baseline-%'`, [organizationId])
    )

    // Export job vs COPY TO STDOUT, with the CPU of this process and of the database's backends (from /proc, on a
    // local server): steadier than wall time when other work shares the machine.
    const cpuBefore = await cpuNow()
    const stopProfile = await startCpuProfile(100)
    let runMsOfExport = 0
    const [exportMs, bytes] = await timed(async () => {
      const created = await runtime.runPromise(
        Jobs.Jobs.use((j) => j.createExport({ type: "reviews", format: "ndjson" })).pipe(asCaller)
      )
      ;[runMsOfExport] = await timed(drain)
      const file = await runtime.runPromise(Jobs.Jobs.use((j) => j.download(created.id)).pipe(asCaller))
      return runtime.runPromise(Stream.runFold(file.content, () => 0, (n, chunk) => n + Buffer.byteLength(chunk)))
    })
    await stopProfile()
    const cpu = cpuSince(cpuBefore, await cpuNow())
    console.log(
      `export job (ndjson): ${ms(exportMs)} (job ${ms(runMsOfExport)}, download ${ms(exportMs - runMsOfExport)}), ${
        (bytes / 2 ** 20).toFixed(1)
      } MiB; CPU: this process ${ms(cpu.node)}${
        cpu.database === undefined ? "" : `, the database's backends ${ms(cpu.database)}`
      }; peak RSS ${peakRssMiB()}`
    )
    if (url === undefined) {
      console.log("  COPY baseline skipped: it needs a PostgreSQL server (BENCH_DATABASE_URL)")
    } else {
      const [copyMs, out] = await timed(async () =>
        spawnSync("psql", [
          url,
          "-q",
          "-c",
          `COPY (SELECT row_to_json(r) FROM reviews r WHERE organization_id = '${organizationId}') TO STDOUT`
        ], { maxBuffer: 2 ** 31 })
      )
      if (out.status !== 0) console.log(`  COPY baseline failed: ${out.stderr.toString().slice(0, 200)}`)
      else {
        console.log(
          `  baseline COPY … TO STDOUT (psql): ${ms(copyMs)}, ${(out.stdout.length / 2 ** 20).toFixed(1)} MiB; ratio ${
            (exportMs / copyMs).toFixed(2)
          }× (target ≤ 2×)`
        )
        recordRow("job-export", exportMs / copyMs, note)
      }
    }
  } finally {
    await runtime.dispose()
    if (process.env["BENCH_KEEP"] === undefined) await cleanup()
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
