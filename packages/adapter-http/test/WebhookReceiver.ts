/**
 * A real webhook receiver on loopback for tests: records every request's raw body and headers, and answers per
 * path — `/ok` 200, `/fail` 500 with a 2 KiB body, `/slow` answers after `slowMs`, `/hang` never answers,
 * `/redirect` 302 to `/ok`, `/jitter` 200 after 0–10 ms, `/hold/<name>` does not answer until `release(name)`, and
 * answers 200 at once after it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly raw: Buffer
  /** `performance.now()` when the request arrived, and when its response was finished (the receiver's own clock). */
  readonly arrivedAt: number
  finishedAt: number | undefined
}

export interface Receiver {
  readonly url: (path: string) => string
  readonly received: Array<ReceivedRequest>
  /** Responses the receiver finished writing (the client waited for them). */
  readonly answered: Array<string>
  /** Answers the requests held at `/hold/<name>` (200), and every later one at once. */
  readonly release: (name: string) => void
  readonly close: () => Promise<void>
}

export const startReceiver = async (options: { readonly slowMs?: number } = {}): Promise<Receiver> => {
  const received: Array<ReceivedRequest> = []
  const answered: Array<string> = []
  const hanging = new Set<import("node:http").ServerResponse>()
  const held = new Map<string, Set<import("node:http").ServerResponse>>()
  const released = new Set<string>()
  const server: Server = createServer((req, res) => {
    const arrivedAt = performance.now()
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!
      const request: ReceivedRequest = {
        path,
        headers: req.headers,
        raw: Buffer.concat(chunks),
        arrivedAt,
        finishedAt: undefined
      }
      received.push(request)
      res.on("finish", () => {
        request.finishedAt = performance.now()
        answered.push(path)
      })
      if (path.startsWith("/hold/")) {
        const name = path.slice("/hold/".length)
        if (released.has(name)) res.writeHead(200).end("ok")
        else held.set(name, (held.get(name) ?? new Set()).add(res))
        return
      }
      switch (path) {
        case "/fail":
          res.writeHead(500, { "content-type": "text/plain" }).end("E".repeat(1000) + "é" + "F".repeat(1047))
          return
        case "/slow":
          setTimeout(() => res.writeHead(200).end("ok"), options.slowMs ?? 300)
          return
        case "/hang":
          hanging.add(res)
          return
        case "/jitter":
          setTimeout(() => res.writeHead(200).end("ok"), Math.floor(Math.random() * 10))
          return
        case "/redirect":
          res.writeHead(302, { location: "/ok" }).end()
          return
        default:
          res.writeHead(200, { "content-type": "text/plain" }).end("ok")
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    answered,
    release: (name) => {
      released.add(name)
      for (const res of held.get(name) ?? []) if (!res.destroyed) res.writeHead(200).end("ok")
      held.delete(name)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        for (const responses of held.values()) for (const res of responses) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A loopback port nothing listens on. */
export const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `probe` until it returns a value, or fails after `timeoutMs`. */
export const eventually = async <A>(
  probe: () => Promise<A | undefined>,
  timeoutMs = 5_000,
  what = "condition",
  intervalMs = 20
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(intervalMs)
  }
}
