/**
 * The cases of the noisy-neighbour suites (docs/FAIRNESS.md), with their aggressors and victims:
 * `NoisyNeighbour.test.ts` runs them against one server per store, `NoisyNeighbourProcesses.test.ts` against two
 * server processes sharing one PostgreSQL database (a `Neighbourhood` says how). A case measures the victim alone,
 * then under attack, in the same run; bounds are ratios with a generous floor, never tight timings: they hold on a
 * loaded machine and fail by a wide margin when the aggressor takes the victim's share (the victim then waits for
 * the aggressor's timeouts or backlog).
 */
import { Webhooks } from "@feedback/core"
import { expect } from "vitest"
import type { RequestOptions } from "./Http.ts"
import { eventually, type Receiver } from "./WebhookReceiver.ts"

/**
 * A tenant's request. `at` picks where it goes (two-process suites spread a case's requests over both processes: a
 * write on one, the read that waits for it on the other); a single server ignores it.
 */
export type TenantRequest = (
  at: number,
  method: string,
  path: string,
  options: RequestOptions & { readonly token: string }
) => Promise<{ readonly status: number; readonly body: any }>

/** How long a POST may take (a held one keeps its slot this long): beyond any bound, so a victim behind it fails. */
export const TIMEOUT_MS = 30_000

/** The victim's latency under attack may be this many times its latency alone, plus a floor (a loaded machine). */
export const RATIO = 10

export const within = (alone: number, attacked: number, floorMs: number) => {
  expect(attacked, `alone ${alone.toFixed(0)} ms, attacked ${attacked.toFixed(0)} ms`).toBeLessThan(
    RATIO * alone + floorMs
  )
}

/** The worst of `n` measures, run one after the other (measure `i` may choose where its requests go). */
export const maxOf = async (n: number, measure: (i: number) => Promise<number>) => {
  let worst = 0
  for (let i = 0; i < n; i++) worst = Math.max(worst, await measure(i))
  return worst
}

/** POSTs that arrived at the receiver's `/hold/<name>` so far: each holds a delivery slot until `release(name)`. */
export const heldPosts = (receiver: Receiver, name: string) =>
  receiver.received.filter((r) => r.path === `/hold/${name}`).length

/**
 * From registering a webhook on `at` (subscribed to `events`) to `seen(id)` holding, asked on `at + 1`; the webhook
 * is deleted afterwards.
 */
const registeredUntil = async (
  request: TenantRequest,
  receiver: Receiver,
  key: string,
  at: number,
  events: ReadonlyArray<string>,
  seen: (id: string) => Promise<boolean>,
  what: string
) => {
  const started = performance.now()
  const created = await request(at, "POST", "/webhooks", { token: key, body: { url: receiver.url("/ok"), events } })
  expect(created.status).toBe(201)
  await eventually(async () => ((await seen(created.body.id)) ? true : undefined), 4 * TIMEOUT_MS, what, 10)
  const elapsed = performance.now() - started
  await request(at, "DELETE", `/webhooks/${created.body.id}`, { token: key })
  return elapsed
}

/** From registering a webhook to its first delivery (its own `webhook.created`) recorded as delivered. */
export const victimDelivery = (request: TenantRequest, receiver: Receiver, key: string, at = 0) =>
  registeredUntil(request, receiver, key, at, ["webhook.created"], async (id) => {
    const log = await request(at + 1, "GET", `/webhooks/${id}/events`, { token: key })
    return log.body?.data?.[0]?.status === "delivered"
  }, "the victim's delivery")

/** From a write (a webhook registered) to its `webhook.created` read in the organization's feed. */
export const victimWriteAndFeed = (request: TenantRequest, receiver: Receiver, key: string, at = 0) =>
  registeredUntil(request, receiver, key, at, ["review.updated"], async (id) => {
    const feed = await request(at + 1, "GET", "/events?events=webhook.created&limit=100", { token: key })
    return feed.body?.data?.some((e: any) => e.data?.id === id) === true
  }, "the victim's event in its feed")

/**
 * Every webhook the aggressor may have (one more is a 400 naming the cap), at the receiver's `/hold/<name>`, which
 * does not answer until released, each subscribed to `events`; returns their ids.
 */
export const heldWebhooks = async (
  request: TenantRequest,
  receiver: Receiver,
  key: string,
  name: string,
  events: ReadonlyArray<string>
): Promise<ReadonlyArray<string>> => {
  const url = receiver.url(`/hold/${name}`)
  const hooks: Array<string> = []
  for (let i = 0; i < Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION; i++) {
    const res = await request(i, "POST", "/webhooks", { token: key, body: { url, events } })
    expect(res.status).toBe(201)
    hooks.push(res.body.id)
  }
  const oneMore = await request(0, "POST", "/webhooks", { token: key, body: { url, events } })
  expect(oneMore.status).toBe(400)
  expect(oneMore.body.error.message).toContain(`at most ${Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION} webhooks`)
  return hooks
}

/**
 * The delivery-slot aggressor: its every webhook held (`heldWebhooks`), and five rounds of changes to them fanned out
 * to all (each PATCH records a `webhook.updated`), so its deliveries hold every slot it may take. Returns its webhooks.
 */
export const slotAggressor = async (request: TenantRequest, receiver: Receiver, key: string, name: string) => {
  const hooks = await heldWebhooks(request, receiver, key, name, ["webhook.updated"])
  for (let round = 0; round < 5; round++) {
    for (const [i, id] of hooks.entries()) {
      const res = await request(i, "PATCH", `/webhooks/${id}`, {
        token: key,
        body: { url: receiver.url(`/hold/${name}?round=${round}`) }
      })
      expect(res.status).toBe(200)
    }
  }
  return hooks
}

/**
 * Ends an aggressor, so the next case starts with every slot free: its webhooks go (their queued deliveries with them,
 * and its events still in the outbox fan out to nobody), then its held POSTs are answered, and any it had claimed
 * ahead are answered at once.
 */
export const endAggressor = async (
  request: TenantRequest,
  receiver: Receiver,
  key: string,
  name: string,
  hooks: ReadonlyArray<string>
) => {
  for (const [i, hook] of hooks.entries()) {
    expect((await request(i, "DELETE", `/webhooks/${hook}`, { token: key })).status).toBe(200)
  }
  receiver.release(name)
}

/** An NDJSON file of `n` new products, slugs `<tag>-<i>`. */
export const productsFile = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ slug: `${tag}-${i}`, title: `P ${i}` })).join("\n")

/** Queues an import of `n` new products (`strict`: one transaction); answers the request's response. */
export const queueProductImport = (
  request: TenantRequest,
  key: string,
  file: string,
  options: { readonly strict?: boolean; readonly at?: number } = {}
) =>
  request(options.at ?? 0, "POST", `/import-jobs?type=products${options.strict === true ? "&strict=true" : ""}`, {
    token: key,
    rawBody: file,
    headers: { "content-type": "application/x-ndjson" }
  })

/** `n` reviews of one new product (`<tag>`), imported in one request: what an organization's export writes. */
export const reviewsOf = async (request: TenantRequest, key: string, tag: string, n: number) => {
  const product = await request(0, "POST", "/products", { token: key, body: { slug: tag, title: tag } })
  expect(product.status).toBe(201)
  const imported = await request(1, "POST", "/reviews/import", {
    token: key,
    body: { data: Array.from({ length: n }, () => ({ product: tag, rating: 5 })) }
  })
  expect(imported.status).toBe(200)
  expect(imported.body.imported.length).toBe(n)
}

/** Queues an export of the organization's reviews as CSV. */
export const queueReviewExport = (request: TenantRequest, key: string, at = 0) =>
  request(at, "POST", "/export-jobs", { token: key, body: { type: "reviews", format: "csv" } })

/** Waits for a job to succeed (a failure fails the test); answers its record. */
export const jobSucceeded = (
  request: TenantRequest,
  key: string,
  kind: "import" | "export",
  id: string,
  at = 0,
  timeoutMs = 120_000
) =>
  eventually(
    async () => {
      const res = await request(at, "GET", `/${kind}-jobs/${id}`, { token: key })
      if (res.body?.status === "failed") throw new Error(JSON.stringify(res.body.error))
      return res.body?.status === "succeeded" ? res.body : undefined
    },
    timeoutMs,
    `the ${kind} job`,
    10
  )

/** From queueing a job (`queue`) to its success, read on `at + 1`. */
export const jobLatency = async (
  request: TenantRequest,
  key: string,
  kind: "import" | "export",
  queue: () => Promise<{ readonly status: number; readonly body: any }>,
  at = 0
) => {
  const started = performance.now()
  const created = await queue()
  expect(created.status).toBe(202)
  await jobSucceeded(request, key, kind, created.body.id, at + 1)
  return performance.now() - started
}

/**
 * The organization's deliveries through its webhooks' logs, counted up to `atMost + 1` (enough to fail a bound
 * without paging through a runaway fan-out).
 */
export const deliveriesOf = async (
  request: TenantRequest,
  key: string,
  hooks: ReadonlyArray<string>,
  atMost: number
) => {
  let n = 0
  for (const hook of hooks) {
    let cursor: string | null | undefined
    do {
      const page = await request(
        0,
        "GET",
        `/webhooks/${hook}/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        {
          token: key
        }
      )
      expect(page.status).toBe(200)
      n += page.body.data.length
      cursor = page.body.data.length === 0 ? null : page.body.nextCursor
    } while (cursor && n <= atMost)
    if (n > atMost) break
  }
  return n
}

// --- the cases -----------------------------------------------------------------------------------------------------

/** Where a suite runs its cases. */
export interface Neighbourhood {
  readonly request: TenantRequest
  readonly receiver: Receiver
  /** A fresh organization and its key. */
  readonly provision: () => Promise<{ readonly key: string }>
  /** Server processes sharing the store, each running a webhook dispatcher and a job worker. */
  readonly processes: number
  /** The floor of `within`. */
  readonly floorMs: number
}

/** Delivery slots: an organization whose every webhook hangs never delays another's delivery. */
export const deliverySlotsCase = async ({ floorMs, processes, provision, receiver, request }: Neighbourhood) => {
  const victim = await provision()
  const alone = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))

  const aggressor = await provision()
  const hooks = await slotAggressor(request, receiver, aggressor.key, "slots")
  // Its deliveries now hold every slot it may take: wait until its held POSTs have arrived.
  const held = () => heldPosts(receiver, "slots")
  await eventually(async () => (held() >= 8 ? true : undefined), 20_000, "the aggressor's POSTs to be held")

  const attacked = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))
  within(alone, attacked, floorMs)
  // Each process lets one organization hold at most 8 of its POST slots (docs/FAIRNESS.md).
  expect(held()).toBeLessThanOrEqual(8 * processes)
  await endAggressor(request, receiver, aggressor.key, "slots", hooks)
}

/**
 * Fan-out: every webhook the aggressor may have, held until the case ends, each subscribed to the event every imported
 * product records; 5,000 products make 100,000 deliveries, which its share cannot drain meanwhile. The victim's event
 * is fanned out in turn and delivered within the bound, and the aggressor's fan-out waits at its queue cap.
 */
export const fanOutCase = async ({ floorMs, processes, provision, receiver, request }: Neighbourhood) => {
  const victim = await provision()
  const alone = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))

  const aggressor = await provision()
  const hooks = await heldWebhooks(request, receiver, aggressor.key, "fan-out", ["product.updated"])
  const imported = await queueProductImport(request, aggressor.key, productsFile("fan", 5_000))
  expect(imported.status).toBe(202)
  await jobSucceeded(request, aggressor.key, "import", imported.body.id)

  const attacked = await maxOf(3, (i) => victimDelivery(request, receiver, victim.key, i))
  within(alone, attacked, floorMs)
  // Whatever the timings: at most the cap and one fan-out unit of work (200 events × 20 webhooks) per process (two
  // fan-outs may read the count at once, docs/DECISIONS.md §68) of its deliveries exist; its other events wait.
  const bound = Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION +
    processes * 200 * Webhooks.MAX_WEBHOOKS_PER_ORGANIZATION
  const created = await deliveriesOf(request, aggressor.key, hooks, bound)
  expect(created).toBeLessThanOrEqual(bound)
  expect(created).toBeGreaterThanOrEqual(Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION)
  await endAggressor(request, receiver, aggressor.key, "fan-out", hooks)
}

/**
 * Job queue: an aggressor's backlog of imports and exports delays the victim's three-row export by at most the job in
 * hand on each worker, never by the backlog.
 */
export const jobQueueCase = async ({ floorMs, processes, provision, request }: Neighbourhood) => {
  const victim = await provision()
  const aggressor = await provision()
  await reviewsOf(request, victim.key, "mine", 3)
  await reviewsOf(request, aggressor.key, "theirs", 2_000)
  const alone = await maxOf(
    3,
    (i) => jobLatency(request, victim.key, "export", () => queueReviewExport(request, victim.key, i), i)
  )
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
  // First come first served would make the export wait for the whole backlog.
  expect(
    attacked,
    `alone ${alone.toFixed(0)} ms, one aggressor job ${oneJob.toFixed(0)} ms, attacked ${attacked.toFixed(0)} ms`
  ).toBeLessThan(RATIO * alone + 3 * oneJob + floorMs)
  // Whatever the timings: once it was queued, on each worker at most the job in hand (and one claimed with it)
  // finished before it. Jobs the workers finished while the backlog was still being queued do not count.
  const finished = await Promise.all(
    queued.map(({ id, kind }) => jobSucceeded(request, aggressor.key, kind, id, 0, 300_000))
  )
  const ahead = finished.filter((j) => j.finishedAt > exported.body.createdAt && j.finishedAt <= done.finishedAt)
  expect(ahead.length).toBeLessThanOrEqual(2 * processes)
}

/** Store locks and the feed: another organization's strict import (one transaction) holds up no write and no feed. */
export const strictImportCase = async ({ floorMs, provision, receiver, request }: Neighbourhood) => {
  const victim = await provision()
  const aggressor = await provision()
  const alone = await maxOf(3, (i) => victimWriteAndFeed(request, receiver, victim.key, i))

  // One transaction of 40,000 rows: the victim is measured while it is open.
  const queued = await queueProductImport(request, aggressor.key, productsFile("strict", 40_000), { strict: true })
  expect(queued.status).toBe(202)
  const status = async () =>
    (await request(0, "GET", `/import-jobs/${queued.body.id}`, { token: aggressor.key })).body?.status
  await eventually(async () => ((await status()) === "running" ? true : undefined), 60_000, "the strict import")
  const attacked = await maxOf(3, (i) => victimWriteAndFeed(request, receiver, victim.key, i))
  within(alone, attacked, floorMs)
  expect(await status(), "the strict import was still running: the victim was measured against it").toBe("running")
  await jobSucceeded(request, aggressor.key, "import", queued.body.id, 0, 300_000)
}

/** Every case with its name and time limit: a suite runs each in its own neighbourhood. */
export const cases: ReadonlyArray<
  readonly [name: string, run: (hood: Neighbourhood) => Promise<void>, timeoutMs: number]
> = [
  [
    "delivery slots: an organization whose every webhook hangs never delays another's delivery",
    deliverySlotsCase,
    300_000
  ],
  [
    "fan-out: another organization's import fanned out to 100,000 deliveries never holds up an event",
    fanOutCase,
    300_000
  ],
  ["job queue: another organization's backlog delays a small export by at most the job in hand", jobQueueCase, 600_000],
  [
    "store locks and the feed: another organization's strict import holds up neither a write nor the feed",
    strictImportCase,
    600_000
  ]
]
