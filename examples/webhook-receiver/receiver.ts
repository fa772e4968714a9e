/**
 * A minimal webhook receiver on node:http: what a merchant's endpoint should do with our deliveries.
 *
 * 1. Read the raw body bytes (capped), and verify `X-Webhook-Signature` against those exact bytes *before* parsing:
 *    re-serialising parsed JSON would not reproduce the signed bytes.
 * 2. Parse the envelope `{event, timestamp, idempotencyKey, data}`.
 * 3. De-duplicate by `idempotencyKey`: the service never sends a key twice, but a receiver can still see work twice
 *    (for example when its own answer is lost after it processed a delivery), so it records keys and ignores repeats.
 * 4. Answer 2xx quickly. Deliveries are never retried, so do slow work after answering (here: none).
 *
 * Run: `WEBHOOK_SECRET=... PORT=4000 node examples/webhook-receiver/receiver.ts`
 */
import { verifyWebhookSignature } from "@feedback/core"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { pathToFileURL } from "node:url"

export interface WebhookEnvelope {
  readonly event: string
  readonly timestamp: string
  readonly idempotencyKey: string
  readonly data: unknown
}

export interface ReceiverOptions {
  /** The webhook's `hmacSecret`; without one, deliveries are accepted unsigned. */
  readonly secret?: string | undefined
  /** Called once per idempotency key. */
  readonly onEvent?: ((envelope: WebhookEnvelope) => void | Promise<void>) | undefined
  readonly log?: ((line: string) => void) | undefined
  /** How many recent keys to remember (a real receiver would keep them in its database). */
  readonly rememberKeys?: number | undefined
}

const MAX_BODY_BYTES = 1024 * 1024

const readRaw = (req: IncomingMessage): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        resolve(undefined)
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const isEnvelope = (u: unknown): u is WebhookEnvelope =>
  typeof u === "object" && u !== null && typeof (u as WebhookEnvelope).event === "string" &&
  typeof (u as WebhookEnvelope).idempotencyKey === "string" && typeof (u as WebhookEnvelope).timestamp === "string"

/** Keys seen, oldest first, bounded: a Map keeps insertion order. */
class SeenKeys {
  private readonly keys = new Map<string, true>()
  private readonly capacity: number
  constructor(capacity: number) {
    this.capacity = capacity
  }
  has(key: string) {
    return this.keys.has(key)
  }
  add(key: string) {
    this.keys.set(key, true)
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.keys().next().value!)
  }
}

export const createReceiver = (options: ReceiverOptions = {}): Server => {
  const log = options.log ?? ((line: string) => process.stdout.write(line + "\n"))
  const seen = new SeenKeys(options.rememberKeys ?? 100_000)
  const answer = (res: ServerResponse, status: number, body: object) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

  return createServer(async (req, res) => {
    if (req.method !== "POST") return answer(res, 405, { error: "POST only" })
    const raw = await readRaw(req)
    if (raw === undefined) return answer(res, 413, { error: "body too large" })
    if (options.secret !== undefined && !verifyWebhookSignature(raw, req.headers["x-webhook-signature"] as string | undefined, options.secret)) {
      log("rejected: bad or missing signature")
      return answer(res, 401, { error: "bad signature" })
    }
    let envelope: unknown
    try {
      envelope = JSON.parse(raw.toString("utf8"))
    } catch {
      return answer(res, 400, { error: "body is not JSON" })
    }
    if (!isEnvelope(envelope)) return answer(res, 400, { error: "not a webhook envelope" })
    if (seen.has(envelope.idempotencyKey)) {
      log(`duplicate ${envelope.idempotencyKey} ignored`)
      return answer(res, 200, { duplicate: true })
    }
    try {
      await options.onEvent?.(envelope)
    } catch (error) {
      log(`failed to handle ${envelope.event} ${envelope.idempotencyKey}: ${String(error)}`)
      return answer(res, 500, { error: "handler failed" })
    }
    seen.add(envelope.idempotencyKey)
    log(`${envelope.timestamp} ${envelope.event} ${envelope.idempotencyKey}`)
    return answer(res, 200, { received: true })
  })
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
if (isMain) {
  const secret = process.env["WEBHOOK_SECRET"] || undefined
  const server = createReceiver({ secret })
  server.listen(Number(process.env["PORT"] ?? 4000), process.env["HOST"] ?? "127.0.0.1", () => {
    const { address, port } = server.address() as AddressInfo
    process.stdout.write(`webhook receiver on http://${address}:${port}/ (${secret === undefined ? "unsigned deliveries accepted" : "signature required"})\n`)
  })
  const stop = () => server.close(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
