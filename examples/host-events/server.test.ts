/**
 * The host-events example: a host route records `loyaltyTransaction.created` in its own unit of work and a webhook receives it;
 * the same route spends from the per-endpoint bucket of `POST /loyalty-events`, sized by the plan.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, expect, it } from "vitest"
import { startHostEventsHost } from "./server.ts"

let host: Awaited<ReturnType<typeof startHostEventsHost>>
let receiver: Server
const received: Array<{ event: string; data: { id: string } }> = []

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  // A receiver on loopback over http: allowed for this test only.
  host = await startHostEventsHost(0, { allowInsecure: true, allowPrivate: true })
})
afterAll(async () => {
  await host.close()
  await new Promise((resolve) => receiver.close(resolve))
})

const authorized = { authorization: "", "content-type": "application/json" }
const post = (path: string, body: unknown) =>
  fetch(`${host.url}${path}`, {
    method: "POST",
    headers: { ...authorized, authorization: `Bearer ${host.key}` },
    body: JSON.stringify(body)
  })

it("reports loyaltyTransaction.created as emitted, records it from the host route, and a subscribed webhook receives it", async () => {
  const events =
    await (await fetch(`${host.url}/api/webhook-events`, { headers: { authorization: `Bearer ${host.key}` } }))
      .json() as { emitted: Array<string> }
  expect(events.emitted).toContain("loyaltyTransaction.created")
  const address = receiver.address()
  const hookUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hooks`
  const webhook = await post("/api/webhooks", { url: hookUrl, events: ["loyaltyTransaction.created"] })
  expect(webhook.status, await webhook.clone().text()).toBe(201)

  const res = await post("/loyalty-events", { order: { id: "ord_1001", status: "fulfilled", totalCents: 4200 } })
  expect(res.status).toBe(202)
  for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50))
  expect(received.map((d) => [d.event, d.data.id])).toEqual([["loyaltyTransaction.created", "ord_1001"]])
})

it("spends from the loyalty-events bucket that the plan sizes, and answers 429 with Retry-After when it is empty", async () => {
  await host.setPlan({ loyaltyEventsPerMinute: 3 })
  const statuses: Array<number> = []
  let retryAfter: string | null = null
  for (let i = 0; i < 5; i++) {
    const res = await post("/loyalty-events", { order: { id: `ord_${i}`, status: "paid", totalCents: 100 } })
    statuses.push(res.status)
    if (res.status === 429) retryAfter = res.headers.get("retry-after")
  }
  expect(statuses.filter((s) => s === 202).length).toBeLessThanOrEqual(3)
  expect(statuses).toContain(429)
  expect(Number(retryAfter)).toBeGreaterThan(0)
  // The Admin API's own routes spend from the organization bucket only: still admitted.
  expect((await fetch(`${host.url}/api/organization`, { headers: { authorization: `Bearer ${host.key}` } })).status)
    .toBe(200)
  expect((await fetch(`${host.url}/loyalty-events`, { method: "POST", body: "{}" })).status).toBe(401)
})
