/**
 * The aggressors and victims of the noisy-neighbour suites (docs/FAIRNESS.md): `NoisyNeighbour.test.ts` runs them
 * against one server per store, `NoisyNeighbourProcesses.test.ts` against two server processes sharing one PostgreSQL
 * database. A case measures the victim alone, then under attack, in the same run; bounds are ratios with a generous
 * floor, never tight timings: they hold on a loaded machine and fail by a wide margin when the aggressor takes the
 * victim's share (the victim then waits for the aggressor's timeouts or backlog).
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
 * From registering a webhook (on `at`) to its first delivery (its own `webhook.created`) recorded as delivered, read
 * on `at + 1`.
 */
export const victimDelivery = async (request: TenantRequest, receiver: Receiver, key: string, at = 0) => {
  const started = performance.now()
  const created = await request(at, "POST", "/webhooks", {
    token: key,
    body: { url: receiver.url("/ok"), events: ["webhook.created"] }
  })
  expect(created.status).toBe(201)
  await eventually(
    async () => {
      const log = await request(at + 1, "GET", `/webhooks/${created.body.id}/events`, { token: key })
      return log.body?.data?.[0]?.status === "delivered" ? true : undefined
    },
    4 * TIMEOUT_MS,
    "the victim's delivery",
    10
  )
  await request(at, "DELETE", `/webhooks/${created.body.id}`, { token: key })
  return performance.now() - started
}

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
 * From a write on `at` (a webhook registered) to its `webhook.created` read in the organization's feed on `at + 1`.
 */
export const victimWriteAndFeed = async (request: TenantRequest, receiver: Receiver, key: string, at = 0) => {
  const started = performance.now()
  const created = await request(at, "POST", "/webhooks", {
    token: key,
    body: { url: receiver.url("/ok"), events: ["review.updated"] }
  })
  expect(created.status).toBe(201)
  await eventually(
    async () => {
      const feed = await request(at + 1, "GET", "/events?events=webhook.created&limit=100", { token: key })
      return feed.body?.data?.some((e: any) => e.data?.id === created.body.id) ? true : undefined
    },
    120_000,
    "the victim's event in its feed",
    10
  )
  const elapsed = performance.now() - started
  await request(at, "DELETE", `/webhooks/${created.body.id}`, { token: key })
  return elapsed
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
