/**
 * The standalone server's limits, through a real process and raw sockets (docs/SECURITY.md): clients that send
 * their headers or body too slowly are cut off with an enveloped 408, connections over the cap are refused, what
 * Node's parser refuses is answered in the envelope, and an unsafe configuration refuses to start.
 * Waits are bounded ("the server cut the connection within N s"), never timed.
 */
import { Effect } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshServerDatabase, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { demoKeyOf, type ServerProcess, startServer, startServerProcess } from "./ServerProcess.ts"
import { eventually, sleep } from "./WebhookReceiver.ts"

interface RawConnection {
  readonly socket: net.Socket
  readonly received: () => string
  readonly closed: Promise<void>
  readonly isClosed: () => boolean
}

const connect = (url: string): Promise<RawConnection> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = net.connect(Number(port), hostname)
    let data = ""
    let isClosed = false
    socket.on("data", (chunk: Buffer) => (data += chunk.toString("utf8")))
    socket.on("error", () => {})
    const closed = new Promise<void>((done) =>
      socket.once("close", () => {
        isClosed = true
        done()
      })
    )
    socket.once("connect", () => resolve({ socket, received: () => data, closed, isClosed: () => isClosed }))
    socket.once("error", reject)
  })

/** Resolves when the server closes the connection; fails after `ms` (a bound, not a measurement). */
const closedWithin = (connection: RawConnection, ms: number) =>
  Promise.race([
    connection.closed,
    sleep(ms).then(() => {
      throw new Error(`the server kept the connection open for ${ms} ms; it sent: ${connection.received()}`)
    })
  ])

const envelopeOf = (raw: string) => {
  const [head, body] = raw.split("\r\n\r\n")
  return { statusLine: head!.split("\r\n")[0], head: head!.toLowerCase(), error: JSON.parse(body!).error }
}

/** Sends `text` one byte at a time, `gapMs` apart, until it is sent or the connection closes. */
const dribble = async (connection: RawConnection, text: string, gapMs: number) => {
  for (const byte of text) {
    if (connection.isClosed()) return
    connection.socket.write(byte)
    await sleep(gapMs)
  }
}

const DEMO_KEY = "sk_" + "h".repeat(40)
const auth = `Authorization: Bearer ${DEMO_KEY}\r\n`

describe("server limits (a real process)", () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServerProcess({
      DATABASE_URL: "memory",
      DEMO_SECRET_KEY: DEMO_KEY,
      LOG_REQUESTS: "false",
      HEADERS_TIMEOUT_MS: "500",
      REQUEST_TIMEOUT_MS: "1000",
      IMPORT_REQUEST_TIMEOUT_MS: "60000"
    })
  })
  afterAll(() => server.stop())

  it("a slow-loris client sending its headers byte by byte is cut off with an enveloped 408", async () => {
    const connection = await connect(server.url)
    const sending = dribble(
      connection,
      "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(1_000) + "\r\n\r\n",
      50
    )
    await closedWithin(connection, 15_000)
    await sending
    const { error, head, statusLine } = envelopeOf(connection.received())
    expect(statusLine).toBe("HTTP/1.1 408 Request Timeout")
    expect(head).toContain("content-type: application/json")
    expect(error.code).toBe("REQUEST_TIMEOUT")
  })

  it("a body sent too slowly is cut off too (imports get longer)", async () => {
    const connection = await connect(server.url)
    connection.socket.write(
      `POST /webhooks HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n`
    )
    const sending = dribble(connection, "{" + " ".repeat(999), 50)
    await closedWithin(connection, 15_000)
    await sending
    expect(envelopeOf(connection.received()).error.code).toBe("REQUEST_TIMEOUT")
  })

  it("a request answered before its slow body arrived is hung up on at the deadline, with no second answer", async () => {
    const connection = await connect(server.url)
    connection.socket.write(
      "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    const sending = dribble(connection, "{" + " ".repeat(999), 50)
    await closedWithin(connection, 15_000)
    await sending
    const answer = envelopeOf(connection.received())
    expect(answer.statusLine).toBe("HTTP/1.1 401 Unauthorized")
    expect(answer.error.code).toBe("UNAUTHORIZED")
  })

  it("what Node's HTTP parser refuses is answered in the envelope", async () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["FOOBAR /organization HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 Bad Request", "INVALID_REQUEST"],
      [
        `GET /${"a".repeat(100 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        "HTTP/1.1 431 Request Header Fields Too Large",
        "HEADERS_TOO_LARGE"
      ],
      ["GET /health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", "HTTP/1.1 400 Bad Request", "INVALID_REQUEST"],
      [
        `POST /webhooks HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\nzz\r\n`,
        "HTTP/1.1 400 Bad Request",
        "INVALID_REQUEST"
      ],
      [
        "POST /webhooks HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}",
        "HTTP/1.1 417 Expectation Failed",
        "EXPECTATION_FAILED"
      ],
      ["GET /health HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "INVALID_REQUEST"],
      ["GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", "HTTP/1.1 400 Bad Request", "INVALID_REQUEST"],
      // A body does not change what a path without the method answers.
      [
        `GET /import-jobs HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 2\r\n\r\n{}`,
        "HTTP/1.1 405 Method Not Allowed",
        "METHOD_NOT_ALLOWED"
      ],
      [`GET /import-jobs HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, "HTTP/1.1 405 Method Not Allowed", "METHOD_NOT_ALLOWED"],
      [
        `GET /no-such-route HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        "HTTP/1.1 404 Not Found",
        "NOT_FOUND"
      ]
    ]
    for (const [request, expectedStatus, code] of cases) {
      const connection = await connect(server.url)
      connection.socket.write(request)
      await eventually(
        async () => (connection.received().includes("\r\n\r\n{") && connection.received().endsWith("}}")
          ? true
          : undefined),
        10_000,
        `an answer to ${request.slice(0, 40)}`
      )
      connection.socket.destroy()
      const { error, head, statusLine } = envelopeOf(connection.received())
      expect(statusLine, request.slice(0, 60)).toBe(expectedStatus)
      expect(head).toContain("content-type: application/json")
      expect(error.code).toBe(code)
    }
  })
})

describe("connection cap (a real process)", () => {
  let server: ServerProcess
  // Default timeouts: the held connections must outlive the test.
  beforeAll(async () => {
    server = await startServerProcess({ DATABASE_URL: "memory", LOG_REQUESTS: "false", MAX_CONNECTIONS: "3" })
  })
  afterAll(() => server.stop())

  it("connections over the cap are closed as they arrive; freed slots are usable again", async () => {
    const held: Array<RawConnection> = []
    try {
      // The cap counts connections, so hold it full, then knock.
      for (let i = 0; i < 3; i++) held.push(await connect(server.url))
      const extra = await connect(server.url)
      await closedWithin(extra, 5_000)
      expect(extra.received()).toBe("")
      expect(held.some((c) => c.isClosed())).toBe(false)
    } finally {
      held.forEach((c) => c.socket.destroy())
    }
    const health = await eventually(
      async () => {
        const res = await fetch(`${server.url}/health`).catch(() => undefined)
        return res?.status === 200 ? res : undefined
      },
      10_000,
      "a request once the held connections are gone"
    )
    expect(health.status).toBe(200)
  })
})

describe("configuration that refuses to start", () => {
  it("an OPERATOR_TOKEN shorter than 32 characters", async () => {
    await expect(startServer({ DATABASE_URL: "memory", OPERATOR_TOKEN: "a".repeat(31) })).rejects.toThrow(
      /exited with 1[\s\S]*OPERATOR_TOKEN must be at least 32 characters/
    )
  })

  it("a headers timeout longer than the request timeout", async () => {
    await expect(startServer({ DATABASE_URL: "memory", HEADERS_TIMEOUT_MS: "5000", REQUEST_TIMEOUT_MS: "1000" }))
      .rejects.toThrow(
        /HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS/
      )
  })
})

describe("demo seeding switch", () => {
  it("DEMO=false seeds nothing, and says so", async () => {
    const server = await startServer({ DATABASE_URL: "memory", DEMO: "false", DEMO_SECRET_KEY: "sk_" + "f".repeat(40) })
    try {
      expect(server.output()).toContain("Demo: off (DEMO=false)")
      expect(demoKeyOf(server.output())).toBeUndefined()
      const res = await fetch(`${server.url}/organization`, {
        headers: { authorization: `Bearer sk_${"f".repeat(40)}` }
      })
      expect(res.status).toBe(401)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it.skipIf(serverUrl === undefined)(
    "a PostgreSQL server DATABASE_URL seeds only with DEMO=true (needs TEST_DATABASE_URL)",
    async () => {
      const url = await Effect.runPromise(freshServerDatabase(serverUrl!))
      const off = await startServer({ DATABASE_URL: url })
      try {
        expect(off.output()).toContain("Demo: off (not seeded on a PostgreSQL server; set DEMO=true")
        expect(demoKeyOf(off.output())).toBeUndefined()
      } finally {
        expect(await off.stop()).toBe(0)
      }
      const on = await startServer({ DATABASE_URL: url, DEMO: "true" })
      try {
        const key = demoKeyOf(on.output())!
        expect((await fetch(`${on.url}/organization`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(
          200
        )
      } finally {
        expect(await on.stop()).toBe(0)
      }
    }
  )
})
