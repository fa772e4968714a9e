/**
 * The example receiver against the real server, as a process of its own: killed mid-stream and restarted, it ends
 * with every event processed exactly once — what arrived while it was down comes from the event feed — and every
 * delivery it accepted verified with the `standardwebhooks` package.
 */
import { makeNodeHandler } from "@feedback/adapter-http/server"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { openHostStore, runningHost } from "../shared/HostStore.ts"

const SECRET = "receiver-example-secret-0123456789"
const script = Path.join(import.meta.dirname, "receiver.ts")
const stateDir = mkdtempSync(Path.join(tmpdir(), "fb-receiver-"))
let api: ReturnType<typeof runningHost>
const children: Array<ChildProcess> = []

beforeAll(async () => {
  const store = openHostStore("memory")
  const handler = await makeNodeHandler(store.services, {
    webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: 2_000, dispatcher: { pollIntervalMs: 20 } }
  }, store.runtime.memoMap)
  const tenant = await store.provisionTenant("Receiver shop")
  const server = createServer((req, res) => handler.handler(req, res))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  api = runningHost(server, tenant.secretKey, handler, store.runtime)
})
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL")
  await api.close()
  rmSync(stateDir, { recursive: true, force: true })
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port
      probe.close(() => resolve(port))
    })
  })

/** Starts the receiver process and resolves once it has caught up and listens. */
const startReceiver = (port: number) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      env: {
        ...process.env,
        ADMIN_API_URL: api.url,
        ADMIN_API_KEY: api.key,
        WEBHOOK_SECRET: SECRET,
        STATE_DIR: stateDir,
        PORT: String(port),
        EVENTS: "product.updated"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let out = ""
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes("RECEIVING")) resolve(child)
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code) => reject(new Error(`receiver exited ${code}: ${out}`)))
  })

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }).then(async (r) => ({ status: r.status, body: await r.json() as any }))

const produce = async (from: number, to: number) => {
  for (let i = from; i < to; i++) {
    expect((await call("POST", "/products", { title: `Product ${i}`, slug: `product-${i}` })).status).toBe(201)
    await new Promise((r) => setTimeout(r, 15))
  }
}

const journal = () =>
  readFileSync(Path.join(stateDir, "processed.ndjson"), "utf8").split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l) as { id: string; via: string }
  )

it(
  "is killed and restarted mid-stream, and still processes every event exactly once",
  { timeout: 60_000 },
  async () => {
    const port = await freePort()
    let receiver = await startReceiver(port)
    const hook = await call("POST", "/webhooks", {
      url: `http://127.0.0.1:${port}/hooks`,
      events: ["product.updated"],
      hmacSecret: SECRET
    })
    expect(hook.status).toBe(201)

    await produce(0, 15)
    receiver.kill("SIGKILL") // no goodbye: whatever it had not recorded is lost with it
    await new Promise((r) => receiver.once("exit", r))
    await produce(15, 30) // delivered to nobody: these deliveries fail and are never retried
    receiver = await startReceiver(port)
    await produce(30, 45)

    // Every product.updated event of the feed, once each, in the journal.
    const feedIds: Array<string> = []
    let cursor: string | undefined
    for (;;) {
      const page = await call(
        "GET",
        `/events?events=product.updated&limit=250${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      )
      feedIds.push(...page.body.data.map((e: { id: string }) => e.id))
      cursor = page.body.nextCursor
      if (page.body.data.length < 250) break
    }
    expect(feedIds).toHaveLength(45)
    const deadline = Date.now() + 20_000
    while (journal().length < 45 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    const processed = journal()
    expect(processed.map((p) => p.id).sort()).toEqual([...feedIds].sort())
    expect(new Set(processed.map((p) => p.id)).size).toBe(processed.length)
    // The downtime mattered: deliveries failed, and the feed made up for them.
    expect(processed.filter((p) => p.via === "feed").length).toBeGreaterThanOrEqual(15)
    const log = await call("GET", `/webhooks/${hook.body.id}/events?limit=250`)
    expect(log.body.data.filter((d: { status: string }) => d.status === "failed").length).toBeGreaterThan(0)
  }
)

it("refuses a delivery whose signature does not verify", { timeout: 30_000 }, async () => {
  const port = await freePort()
  await startReceiver(port)
  const body = JSON.stringify({
    event: "product.updated",
    timestamp: new Date().toISOString(),
    idempotencyKey: "k",
    eventId: "forged",
    data: {}
  })
  const res = await fetch(`http://127.0.0.1:${port}/hooks`, {
    method: "POST",
    headers: {
      "webhook-id": "k",
      "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
      "webhook-signature": "v1,AAAA"
    },
    body
  })
  expect(res.status).toBe(401)
  expect(journal().some((p) => p.id === "forged")).toBe(false)
})
