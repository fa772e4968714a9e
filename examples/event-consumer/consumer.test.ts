/**
 * The event-consumer example: reviews imported through the API reach the host's in-process consumer, which keeps
 * its place; stopped and started again, it goes on after the last event it handled, with nothing lost or twice.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { startEventConsumerHost } from "./consumer.ts"

let host: Awaited<ReturnType<typeof startEventConsumerHost>>
beforeAll(async () => {
  host = await startEventConsumerHost(0)
})
afterAll(() => host.close())

const post = (path: string, body: unknown) =>
  fetch(`${host.url}/api${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${host.key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const importReviews = async (rows: ReadonlyArray<{ readonly rating: number; readonly customer: string }>) => {
  const res = await post("/reviews/import", { data: rows.map((r) => ({ product: "mug", title: "A mug", ...r })) })
  expect(res.status, await res.clone().text()).toBe(200)
  return ((await res.json()) as { imported: Array<{ id: string }> }).imported.map((r) => r.id)
}

/** Waits until the inbox holds `n` items (the consumer runs beside the requests). */
const inboxOf = async (n: number) => {
  for (let i = 0; i < 400 && host.inbox.length < n; i++) await new Promise((r) => setTimeout(r, 25))
  return host.inbox.map((item) => item.reviewId)
}

it("receives review.created in process, and resumes after its saved position", async () => {
  expect((await post("/products", { title: "Mug", slug: "mug" })).status).toBe(201)
  const [low, , lower] = await importReviews([
    { rating: 1, customer: "ann@example.com" },
    { rating: 5, customer: "bob@example.com" },
    { rating: 2, customer: "cy@example.com" }
  ])
  expect(await inboxOf(2)).toEqual([low, lower])

  await host.stopConsumer()
  const [whileDown] = await importReviews([{ rating: 1, customer: "dee@example.com" }])
  await host.restartConsumer()
  expect(await inboxOf(3)).toEqual([low, lower, whileDown])
  const [afterRestart] = await importReviews([{ rating: 2, customer: "eve@example.com" }])
  expect(await inboxOf(4)).toEqual([low, lower, whileDown, afterRestart])
  expect(host.inbox.every((item) => item.rating <= 2)).toBe(true)
})
