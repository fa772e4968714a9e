/**
 * A soak on a PostgreSQL server: three server processes on one database under a mixed load (writes, reads, import
 * jobs, webhooks to a live receiver, survey emails to a live SMTP server, a rate-limited organization) while one
 * process at a time is killed with SIGKILL and restarted. Afterwards: every acknowledged write is there, no webhook
 * delivery and no email arrived twice, no email was lost but those a killed process was sending (docs/DECISIONS.md
 * §61: a step in flight at a kill is failed, never resent), no import-job row was stored twice, each product's counts
 * equal a recount of its reviews, and the limiter admitted no more than the plan allows.
 *
 * Its size: SOAK_SECONDS of load (default 20, what `npm test` runs) and a kill every SOAK_KILL_EVERY_MS (default
 * 4000). Larger by hand as docs/OPERATIONS.md ("The soak") shows. Waits are bounds, never timings.
 */
import { Surveys } from "@feedback/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dropServerDatabase, freshServerDatabase, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { provisionVia, requestVia, type TestResponse } from "./Http.ts"
import { type ServerProcess, startServerProcess } from "./ServerProcess.ts"
import { type SmtpReceiver, startSmtpReceiver } from "./SmtpReceiver.ts"
import { eventually, type Receiver, sleep, startReceiver } from "./WebhookReceiver.ts"

const SECONDS = Number(process.env["SOAK_SECONDS"] ?? "20")
const KILL_EVERY_MS = Number(process.env["SOAK_KILL_EVERY_MS"] ?? "4000")
const LIMITED_PER_MINUTE = 20
const PROCESSES = 3
/** A standalone server wants an operator token of 32 characters or more. */
const OPERATOR_TOKEN = "soak-test-operator-token-of-32-characters"

const describeWithServer = serverUrl === undefined ? describe.skip : describe

describeWithServer("soak: three processes, one killed with SIGKILL every few seconds (PostgreSQL server)", () => {
  let databaseUrl = ""
  let env: Record<string, string> = {}
  let receiver: Receiver
  let smtp: SmtpReceiver
  const servers: Array<ServerProcess> = []

  beforeAll(async () => {
    receiver = await startReceiver()
    // Each message takes a moment to accept, so sends are in flight when a process is killed.
    smtp = await startSmtpReceiver(20)
    databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl!))
    env = {
      DATABASE_URL: databaseUrl,
      OPERATOR_TOKEN,
      LOG_REQUESTS: "false",
      WEBHOOK_ALLOW_INSECURE: "true",
      WEBHOOK_ALLOW_PRIVATE: "true",
      DEMO: "false",
      SMTP_URL: smtp.url,
      MAIL_FROM: "Shop <reviews@shop.example>",
      // A killed process's claimed survey steps are taken over after this (the default is ten minutes).
      SURVEY_RECOVERY_MS: "2000"
    }
    // One after the other: the first applies the migrations.
    for (let i = 0; i < PROCESSES; i++) servers.push(await startServerProcess(env, { timeoutMs: 60_000 }))
  }, 180_000)

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await receiver?.close()
    await smtp?.close()
    if (databaseUrl !== "") await dropServerDatabase(serverUrl!, databaseUrl)
  }, 60_000)

  /** A request to the server in slot `i` (whichever process holds it now); a dead one's failure is `undefined`. */
  const via = (i: number) => requestVia((request: Request) => fetch(request), servers[i]!.url)
  const any = () => Math.floor(Math.random() * PROCESSES)
  const tryCall = async (
    method: string,
    path: string,
    options: { token: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }
  ): Promise<TestResponse | undefined> => {
    try {
      return await via(any())(method, path, options)
    } catch {
      return undefined
    }
  }
  /** A call that must succeed: retried on whichever process answers (one may be down). */
  const must = async (method: string, path: string, options: { token: string; body?: unknown }) =>
    eventually(
      async () => {
        const res = await tryCall(method, path, options)
        return res !== undefined && res.status < 500 ? res : undefined
      },
      60_000,
      `${method} ${path}`,
      100
    )

  it("keeps every invariant", async () => {
    const provision = provisionVia(via(0), OPERATOR_TOKEN)
    // The loaded organization's plan is far above what the soak asks (its checks read back every product and review
    // at once): a 429 there would be the test's budget, not a lost write. The limiter is the `limited` one's.
    const { key } = await provision({ apiRequestsPerMinute: 1_000_000 })
    const limited = await provision({ apiRequestsPerMinute: LIMITED_PER_MINUTE })
    const webhook = await must("POST", "/webhooks", {
      token: key,
      body: { url: receiver.url("/ok"), events: ["product.updated", "review.created"] }
    })
    expect(webhook.status).toBe(201)
    // A fulfilled order asks its customer for a review at once, by email.
    expect(
      (await must("POST", "/organization/setup/reviews", {
        token: key,
        body: { data: { delayDays: 0, reminder: false } }
      })).status
    ).toBe(201)
    expect((await must("POST", "/products", { token: key, body: { slug: "mug", title: "Mug" } })).status).toBe(201)

    const products: Array<{ id: string; slug: string }> = []
    const reviews: Array<string> = []
    const jobs: Array<{ id: string; product: string; prefix: string; rows: number }> = []
    /** Customers whose order was acknowledged: each is asked once. */
    const buyers: Array<string> = []
    let admitted = 0
    let kills = 0
    let stop = false
    let n = 0

    const writer = async () => {
      while (!stop) {
        const i = n++
        const product = await tryCall("POST", "/products", { token: key, body: { slug: `p-${i}`, title: `P ${i}` } })
        if (product?.status === 201) products.push({ id: product.body.id, slug: `p-${i}` })
        const target = products[Math.floor(Math.random() * products.length)]
        if (target === undefined) continue
        const imported = await tryCall("POST", "/reviews/import", {
          token: key,
          body: {
            data: [{ product: target.slug, rating: 1 + (i % 5), body: `r-${i}`, customer: `c${i % 7}@example.com` }]
          }
        })
        if (imported?.status === 200) reviews.push(...imported.body.imported.map((r: { id: string }) => r.id))
        if (i % 10 === 0) {
          // An import job of its own product, each row's body unique: a row stored twice would show.
          const rows = 50
          const lines = Array.from(
            { length: rows },
            (_, r) =>
              JSON.stringify({ product: target.slug, rating: 5, body: `job-${i}-row-${r}`, customer: "j@example.com" })
          )
          const job = await tryCall("POST", "/import-jobs?type=reviews", {
            token: key,
            rawBody: lines.join("\n") + "\n",
            headers: { "content-type": "application/x-ndjson" }
          })
          if (job?.status === 202) jobs.push({ id: job.body.id, product: target.id, prefix: `job-${i}-`, rows })
        }
      }
    }
    const buyer = async () => {
      while (!stop) {
        const email = `buyer-${n++}@example.com`
        const order = await tryCall("POST", "/orders", {
          token: key,
          body: { customer: { email }, lines: [{ productSlug: "mug" }], status: "fulfilled" }
        })
        if (order?.status === 201) buyers.push(email)
        await sleep(50)
      }
    }
    const reader = async () => {
      while (!stop) {
        await tryCall("GET", "/reviews?limit=50&include=product", { token: key })
        const res = await tryCall("GET", "/organization", { token: limited.key })
        if (res !== undefined && res.status === 200) admitted++
      }
    }
    // Kills one live process every KILL_EVERY_MS and starts its replacement meanwhile (a start takes seconds).
    const restarting = new Map<number, Promise<void>>()
    const killer = async () => {
      while (!stop) {
        await sleep(KILL_EVERY_MS)
        const live = Array.from({ length: PROCESSES }, (_, i) => i).filter((i) => !restarting.has(i))
        if (stop || live.length <= 1) continue
        const slot = live[Math.floor(Math.random() * live.length)]!
        process.kill(servers[slot]!.pid, "SIGKILL")
        kills++
        restarting.set(
          slot,
          servers[slot]!.stop()
            .then(() => startServerProcess(env, { timeoutMs: 120_000 }))
            .then((server) => {
              servers[slot] = server
              restarting.delete(slot)
            })
        )
      }
    }

    const started = Date.now()
    const running = [writer(), writer(), buyer(), reader(), reader(), killer()]
    await sleep(SECONDS * 1000)
    stop = true
    await Promise.all(running)
    await Promise.all(restarting.values())
    const elapsedSeconds = (Date.now() - started) / 1000

    console.info(
      `soak: ${elapsedSeconds.toFixed(0)} s, ${kills} kills, ${products.length} products, ${reviews.length} reviews, ` +
        `${jobs.length} import jobs, ${buyers.length} orders asking for a review, ${admitted} limited reads admitted`
    )
    expect(kills).toBeGreaterThan(0)
    expect(jobs.length).toBeGreaterThan(0)
    expect(products.length).toBeGreaterThan(5)
    expect(reviews.length).toBeGreaterThan(5)
    expect(buyers.length).toBeGreaterThan(5)

    // Every acknowledged write is there.
    for (const product of products) {
      expect((await must("GET", `/products/${product.id}`, { token: key })).status, product.id).toBe(200)
    }
    for (const review of reviews) {
      expect((await must("GET", `/reviews/${review}`, { token: key })).status, review).toBe(200)
    }

    /** Every review of a product, page after page. */
    const reviewsOf = async (productId: string) => {
      const all: Array<{ body: string; rating: number; published: boolean }> = []
      let cursor: string | null = null
      do {
        const filter = encodeURIComponent(JSON.stringify({ "product.id": productId }))
        const page: TestResponse = await must(
          "GET",
          `/reviews?limit=250&filter=${filter}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
          { token: key }
        )
        expect(page.status, page.text).toBe(200)
        all.push(...page.body.data)
        cursor = page.body.nextCursor
      } while (cursor !== null)
      return all
    }

    // Jobs finish (a killed worker's lease lapses and another process takes the job on); no row is stored twice.
    for (const job of jobs) {
      const done = await eventually(
        async () => {
          const res = await tryCall("GET", `/import-jobs/${job.id}`, { token: key })
          return res?.status === 200 && !["queued", "running"].includes(res.body.status) ? res.body : undefined
        },
        120_000,
        `import job ${job.id} to finish`,
        250
      )
      const rows = (await reviewsOf(job.product)).map((r) => r.body).filter((body) => body.startsWith(job.prefix))
      expect(rows.length - new Set(rows).size, `rows of ${job.prefix} stored twice`).toBe(0)
      expect(rows.length).toBeLessThanOrEqual(job.rows)
      if (done.status === "succeeded") expect(rows.length, `rows of ${job.prefix}`).toBe(job.rows)
    }

    // Each product's counts equal a recount of its reviews.
    for (const product of products) {
      const record = (await must("GET", `/products/${product.id}`, { token: key })).body
      const all = await reviewsOf(product.id)
      expect(record.reviewCount, `reviewCount of ${product.slug}`).toBe(all.length)
      expect(record.publishedReviewCount, `publishedReviewCount of ${product.slug}`).toBe(
        all.filter((r) => r.published).length
      )
    }

    // No delivery arrived twice.
    await sleep(1_000)
    const ids = receiver.received.map((r) => String(r.headers["webhook-id"]))
    console.info(`soak: ${ids.length} deliveries received`)
    expect(ids.length).toBeGreaterThan(0)
    expect(ids.length - new Set(ids).size, "deliveries received twice").toBe(0)

    // No email was sent twice, and none was lost but the steps a killed process had in flight: each kill fails at most
    // the waves a worker has in flight (`WAVES_IN_FLIGHT` × `concurrency` steps), sent or not; every other request is
    // sent, once.
    const surveys = await eventually(
      async () => {
        const all: Array<any> = []
        let cursor: string | null = null
        do {
          const page: TestResponse | undefined = await tryCall(
            "GET",
            `/surveys?limit=250${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
            { token: key }
          )
          if (page?.status !== 200) return undefined
          all.push(...page.body.data)
          cursor = page.body.nextCursor
        } while (cursor !== null)
        const settled = all.every((s) => s.steps.every((step: any) => step.type !== "email" || step.outcome !== null))
        return all.length >= buyers.length && settled ? all : undefined
      },
      120_000,
      "every survey's email to be sent or failed",
      250
    )
    const customers = new Map<string, string>()
    let cursor: string | null = null
    do {
      const page: TestResponse = await must(
        "GET",
        `/customers?limit=250${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
        { token: key }
      )
      for (const c of page.body.data) customers.set(c.id, c.email)
      cursor = page.body.nextCursor
    } while (cursor !== null)
    const emailed = new Map<string, number>()
    for (const to of smtp.received) emailed.set(to, (emailed.get(to) ?? 0) + 1)
    console.info(`soak: ${surveys.length} surveys, ${smtp.received.length} emails received`)
    expect([...emailed].filter(([, count]) => count > 1), "emails received twice").toEqual([])
    const ofBuyers = surveys.filter((s) => buyers.includes(customers.get(s.customerId)!))
    expect(new Set(ofBuyers.map((s) => customers.get(s.customerId))).size, "a survey per acknowledged order").toBe(
      buyers.length
    )
    const failed = ofBuyers.filter((s) => s.steps.some((step: any) => step.outcome === "failed"))
    expect(failed.length).toBeLessThanOrEqual(
      kills * Surveys.WAVES_IN_FLIGHT * Surveys.defaultSurveyWorkerSettings("any").concurrency
    )
    for (const survey of ofBuyers.filter((s) => !failed.includes(s))) {
      const to = customers.get(survey.customerId)!
      expect(survey.status, `the survey of ${to}`).toBe("sent")
      expect(emailed.get(to), `emails to ${to}`).toBe(1)
    }

    // The limiter admitted no more than a full bucket plus what refilled meanwhile.
    expect(admitted).toBeLessThanOrEqual(LIMITED_PER_MINUTE + Math.ceil((LIMITED_PER_MINUTE * elapsedSeconds) / 60))
    expect(admitted).toBeGreaterThan(0)
  }, 600_000)
})
