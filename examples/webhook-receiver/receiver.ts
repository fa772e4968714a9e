/**
 * A webhook receiver that loses nothing and does nothing twice, across its own crashes (docs/WEBHOOKS.md):
 *
 * 1. Verify every delivery with the `standardwebhooks` package (the reference implementation) over the raw bytes,
 *    configured with `whsec_` + base64 of the webhook's secret; it also refuses replays outside its time tolerance.
 * 2. Process each event once: `eventId` is the key (a redelivery carries its original's), and the journal of
 *    processed ids is the work's own record (one appended line each), so a crash never half-records it.
 * 3. Catch up from `GET /events` on start: deliveries sent while the receiver was down are never retried, but the
 *    feed has every event; the receiver reads it from the cursor it saved last and skips what it already processed.
 * 4. Answer 2xx quickly.
 *
 * Run: ADMIN_API_URL=… ADMIN_API_KEY=sk_… WEBHOOK_SECRET=… STATE_DIR=./receiver-state PORT=4100 node receiver.ts
 */
import { type AdminApiPaths, createAdminApiClient } from "@feedback/client"

/** An event name `GET /events` takes, as the OpenAPI document lists them. */
type FeedEventName = NonNullable<NonNullable<AdminApiPaths["/events"]["get"]["parameters"]["query"]>["events"]>[number]
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import * as Path from "node:path"
import { Webhook } from "standardwebhooks"

export interface ReceiverOptions {
  readonly apiUrl: string
  readonly apiKey: string
  /** The webhook's `hmacSecret`. */
  readonly secret: string
  /** Where the journal of processed events and the feed cursor live. */
  readonly stateDir: string
  /** The event names this receiver handles (those its webhook subscribes to). */
  readonly events: ReadonlyArray<FeedEventName>
  readonly log?: ((line: string) => void) | undefined
}

interface Processed {
  readonly id: string
  readonly event: string
  readonly via: "delivery" | "feed"
}

const MAX_BODY_BYTES = 1024 * 1024

const readRaw = (req: IncomingMessage): Promise<string | undefined> =>
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
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const startReceiver = async (
  options: ReceiverOptions,
  port: number
): Promise<{ server: Server; url: string; caughtUp: number }> => {
  const log = options.log ?? ((line: string) => process.stdout.write(line + "\n"))
  mkdirSync(options.stateDir, { recursive: true })
  const journal = Path.join(options.stateDir, "processed.ndjson")
  const cursorFile = Path.join(options.stateDir, "cursor")
  const processed = new Set(
    existsSync(journal)
      ? readFileSync(journal, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) =>
        (JSON.parse(l) as Processed).id
      )
      : []
  )
  /** The work, once per event: here, one journal line (a real receiver updates its own records). */
  const processOnce = (id: string, event: string, via: Processed["via"]) => {
    if (processed.has(id)) return false
    processed.add(id)
    appendFileSync(journal, JSON.stringify({ id, event, via } satisfies Processed) + "\n")
    return true
  }

  const verifier = new Webhook("whsec_" + Buffer.from(options.secret, "utf8").toString("base64"))
  const server = createServer(async (req, res) => {
    if (req.method !== "POST") return res.writeHead(405).end()
    const raw = await readRaw(req)
    if (raw === undefined) return res.writeHead(413).end()
    let envelope: { event: string; eventId: string }
    try {
      envelope = verifier.verify(raw, {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? "")
      }) as { event: string; eventId: string }
    } catch {
      log("refused a delivery whose signature does not verify")
      return res.writeHead(401).end()
    }
    processOnce(envelope.eventId, envelope.event, "delivery")
    res.writeHead(204).end()
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))

  // Catch up: everything since the saved cursor, page by page, saving the cursor after each page.
  const client = createAdminApiClient({ baseUrl: options.apiUrl, secretKey: options.apiKey })
  let cursor = existsSync(cursorFile) ? readFileSync(cursorFile, "utf8").trim() : undefined
  let caughtUp = 0
  for (;;) {
    const page = await client.GET("/events", {
      params: {
        query: { limit: 250, events: [...options.events], ...(cursor === undefined || cursor === "" ? {} : { cursor }) }
      }
    })
    if (page.data === undefined) throw new Error(`GET /events answered ${page.response.status}`)
    for (const e of page.data.data) if (processOnce(e.id, e.event, "feed")) caughtUp++
    writeFileSync(cursorFile, page.data.nextCursor)
    cursor = page.data.nextCursor
    if (page.data.data.length < 250) break
  }
  const address = server.address()
  return {
    server,
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : port}`,
    caughtUp
  }
}

if (import.meta.main) {
  const env = (name: string) => {
    const value = process.env[name]
    if (value === undefined || value === "") throw new Error(`${name} is required`)
    return value
  }
  const { url, caughtUp } = await startReceiver({
    apiUrl: env("ADMIN_API_URL"),
    apiKey: env("ADMIN_API_KEY"),
    secret: env("WEBHOOK_SECRET"),
    stateDir: process.env["STATE_DIR"] ?? "./receiver-state",
    // Names outside the catalog are the server's to refuse (a 400 naming them).
    events: (process.env["EVENTS"] ?? "product.updated").split(",") as Array<FeedEventName>
  }, Number(process.env["PORT"] ?? 4100))
  console.log(`RECEIVING on ${url} (caught up ${caughtUp} events from the feed)`)
}
