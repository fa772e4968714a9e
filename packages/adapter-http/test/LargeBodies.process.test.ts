/**
 * Bodies over their route's limit, through a real process and raw sockets (docs/DECISIONS.md §1, §64): one declared
 * too large is refused before any of it is sent, and one that never declares its size (chunked) is cut off at the
 * limit rather than taken in whole; meanwhile the server keeps answering `/health`. Waits are bounds, never timings.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServerProcess, startServerProcess } from "./ServerProcess.ts"
import { eventually } from "./WebhookReceiver.ts"

const DEMO_KEY = "sk_" + "l".repeat(40)
const auth = `Authorization: Bearer ${DEMO_KEY}\r\n`

interface Raw {
  readonly socket: net.Socket
  readonly received: () => string
  readonly closed: () => boolean
}

const connect = (url: string): Promise<Raw> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = net.connect(Number(port), hostname)
    let data = ""
    let closed = false
    socket.on("data", (chunk: Buffer) => (data += chunk.toString("utf8")))
    socket.on("error", () => {})
    socket.once("close", () => (closed = true))
    socket.once("connect", () => resolve({ socket, received: () => data, closed: () => closed }))
    socket.once("error", reject)
  })

const answered = (raw: Raw, what: string) =>
  eventually(async () => (raw.received().includes("\r\n\r\n{") ? true : undefined), 20_000, what)

describe("bodies over the limit (a real process)", () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServerProcess({ DATABASE_URL: "memory", DEMO_SECRET_KEY: DEMO_KEY, LOG_REQUESTS: "false" })
  })
  afterAll(() => server.stop())

  const healthy = async () => {
    const res = await fetch(`${server.url}/health`)
    expect(res.status).toBe(200)
  }

  it("a body declared over the limit is refused before it is sent, and the connection closed", async () => {
    for (const path of ["/reviews/import", "/import-jobs?type=products", "/sites"]) {
      const raw = await connect(server.url)
      // A gibibyte declared, one byte sent: only an answer that does not wait for the body can arrive.
      raw.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n[`
      )
      await answered(raw, `the 413 of ${path}`)
      const [head, body] = raw.received().split("\r\n\r\n")
      expect(head!.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large")
      expect(head!.toLowerCase()).toContain("connection: close")
      expect(JSON.parse(body!).error.code).toBe("PAYLOAD_TOO_LARGE")
      expect(JSON.parse(body!).error.details.limitBytes).toBeGreaterThan(0)
      await eventually(async () => (raw.closed() ? true : undefined), 20_000, "the connection closed")
      await healthy()
    }
  })

  it("a chunked body is cut off at the limit while /health keeps answering", async () => {
    const raw = await connect(server.url)
    raw.socket.write(
      `POST /sites HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    )
    const chunk = `{"name":"${"x".repeat(64 * 1024)}`
    // Up to 16 MiB offered, 64 KiB at a time, a health check between chunks; the server stops it at 1 MiB.
    let offered = 0
    while (offered < 16 * 1024 * 1024 && !raw.closed() && !raw.received().includes("\r\n\r\n")) {
      const written = raw.socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
      offered += chunk.length
      if (!written) await new Promise((resolve) => raw.socket.once("drain", resolve).once("close", resolve))
      if (offered % (1024 * 1024) < chunk.length) await healthy()
    }
    await answered(raw, "the 413 of a chunked body")
    expect(raw.received().split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large")
    expect(offered).toBeLessThan(16 * 1024 * 1024)
    await healthy()
  })
})
