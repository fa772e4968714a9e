/**
 * Crash safety of import jobs against a real PostgreSQL server (docs/DECISIONS.md §20): a server process killed with
 * SIGKILL in the middle of a job loses nothing committed; after a restart the job resumes after its last committed
 * batch and every row is imported exactly once. A server stopped gracefully (SIGTERM) hands its job's lease back, so
 * the next process resumes at once rather than after the lease.
 */
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Effect } from "effect"
import { afterEach, expect, it } from "vitest"
import { describeWithServer, freshServerDatabase } from "../../adapter-postgres/test/TestDatabase.ts"
import { startServerProcess } from "./ServerProcess.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined)
})

const ROWS = 3_000

const allReviews = async (api: TestServer, key: string) => {
  const out: Array<any> = []
  let cursor: string | null = null
  do {
    const page: any = await api.request(
      "GET",
      `/reviews?limit=250&include=importJob${cursor === null ? "" : `&cursor=${cursor}`}`,
      { token: key }
    )
    out.push(...page.body.data)
    cursor = page.body.nextCursor
  } while (cursor !== null)
  return out
}

/**
 * A fresh database with the API in this process (without a job worker: only the child processes run the job), an
 * organization with one product, and an import job of `ROWS` reviews queued there (`row(i)` its line from 0).
 * `jobWhen` polls the job until `reached` holds of it (or 60 s have passed) and answers it as it then is.
 */
const queuedImport = async (serverUrl: string, row: (i: number) => object) => {
  const databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
  const api = makeTestServer(PgStoreLayer({ _tag: "Server", url: databaseUrl, maxConnections: 4 }), {
    jobs: { worker: false }
  })
  cleanups.push(() => api.dispose())
  const { key } = await api.provision()
  expect((await api.request("POST", "/products", { token: key, body: { slug: "mug", title: "Mug" } })).status).toBe(
    201
  )
  const created = await api.request("POST", "/import-jobs?type=reviews", {
    token: key,
    rawBody: Array.from({ length: ROWS }, (_, i) => JSON.stringify(row(i))).join("\n"),
    headers: { "content-type": "application/x-ndjson" }
  })
  expect(created.status, created.text).toBe(202)
  const jobPath = `/import-jobs/${created.body.id}`
  const jobWhen = async (reached: (job: any) => boolean) => {
    const deadline = Date.now() + 60_000
    for (;;) {
      const job = (await api.request("GET", jobPath, { token: key })).body
      if (reached(job) || Date.now() > deadline) return job
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  return { databaseUrl, api, key, jobPath, jobWhen }
}
const midJob = (job: any) => job.progress.processedRows >= 300
const finished = (job: any) => job.status !== "running" && job.status !== "queued"

describeWithServer("import jobs across a crash (PostgreSQL)", (serverUrl) => {
  it("a server killed mid-job: after a restart every row is imported exactly once", async () => {
    const { api, databaseUrl, jobPath, jobWhen, key } = await queuedImport(serverUrl, (i) => ({
      externalId: `x${i + 1}`,
      product: "mug",
      rating: 1 + (i % 5),
      customer: `c${i % 50}@example.com`
    }))

    const env = { DATABASE_URL: databaseUrl, JOB_LEASE_MS: "1000", JOB_BATCH_SIZE: "50", LOG_REQUESTS: "false" }
    const doomed = await startServerProcess(env)
    cleanups.push(() => doomed.stop())
    await jobWhen(midJob)
    process.kill(doomed.pid, "SIGKILL")
    await doomed.stop()
    const atKill = (await api.request("GET", jobPath, { token: key })).body
    expect(atKill.status, doomed.output()).toBe("running")
    expect(atKill.progress.processedRows).toBeGreaterThan(0)
    expect(atKill.progress.processedRows, "killed mid-job").toBeLessThan(ROWS)
    // What the job reports is exactly what was committed: each batch and its progress commit together.
    expect((await allReviews(api, key)).length).toBe(atKill.progress.importedRows)

    const restarted = await startServerProcess(env)
    cleanups.push(() => restarted.stop())
    const done = await jobWhen(finished)
    expect(done.status, restarted.output()).toBe("succeeded")
    expect(done.progress).toEqual({ totalRows: ROWS, processedRows: ROWS, importedRows: ROWS, skippedRows: 0 })
    const reviews = await allReviews(api, key)
    expect(reviews.length).toBe(ROWS)
    expect(new Set(reviews.map((r) => r.externalId)).size).toBe(ROWS)
    const rows = reviews.map((r) => r.importJob.row).sort((a: number, b: number) => a - b)
    expect(rows).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1))
    for (const r of reviews) expect(r.externalId).toBe(`x${r.importJob.row}`)
  }, 180_000)

  it(
    "a server stopped with SIGTERM mid-job hands the job back: the next process resumes before the lease runs out",
    async () => {
      const { api, databaseUrl, jobPath, jobWhen, key } = await queuedImport(serverUrl, (i) => ({
        externalId: `t${i + 1}`,
        product: "mug",
        rating: 5
      }))
      // A lease far longer than the test may wait: only a lease handed back lets the next process start.
      const env = { DATABASE_URL: databaseUrl, JOB_LEASE_MS: "600000", JOB_BATCH_SIZE: "50", LOG_REQUESTS: "false" }
      const first = await startServerProcess(env)
      cleanups.push(() => first.stop())
      await jobWhen(midJob)
      await first.stop()
      const stopped = (await api.request("GET", jobPath, { token: key })).body
      expect(stopped.progress.processedRows).toBeLessThan(ROWS)
      const second = await startServerProcess(env)
      cleanups.push(() => second.stop())
      const done = await jobWhen(finished)
      expect(done.status, second.output()).toBe("succeeded")
      expect(done.progress.importedRows).toBe(ROWS)
      expect((await allReviews(api, key)).length).toBe(ROWS)
    },
    180_000
  )
})
