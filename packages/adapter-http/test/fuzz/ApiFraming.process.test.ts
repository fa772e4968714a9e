/**
 * Hostile framing over raw sockets, for every endpoint of both APIs read from their definitions (`ApiShape`): what a
 * fetch handler cannot be sent, so the in-process fuzz never tries it. A `GET` carrying a body is a 405 where the path
 * has no `GET` (as the same request without a body is) and a 400 where it has one; a body declared over its route's
 * limit is a 413 answered before the body, and the connection closed (docs/DECISIONS.md §1, §64). Each answer is in
 * the envelope, and nothing changes. Waits are bounds, never timings.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServerProcess, startServerProcess } from "../ServerProcess.ts"
import { allEndpoints, type EndpointShape } from "./ApiShape.ts"

const DEMO_KEY = "sk_" + "f".repeat(40)
const OPERATOR_TOKEN = "framing-operator-token-0123456789abcdef"
const SOME_ID = "0190a000-0000-7000-8000-000000000001"

interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** Writes `head` (and `body`) on a fresh connection and reads the answer until the server closes it. */
const exchange = (url: string, head: string, body = ""): Promise<RawAnswer> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = net.connect(Number(port), hostname)
    let data = ""
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no complete answer to ${head.split("\r\n")[0]} within 30 s; got ${JSON.stringify(data)}`))
    }, 30_000)
    socket.on("data", (chunk: Buffer) => (data += chunk.toString("utf8")))
    socket.on("error", () => {})
    socket.once("close", () => {
      clearTimeout(timer)
      const [top = "", rest = ""] = data.split(/\r\n\r\n([\s\S]*)/)
      const [statusLine = "", ...lines] = top.split("\r\n")
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()])
      )
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: rest })
    })
    socket.once("connect", () => socket.write(head + body))
  })

const tokenOf = (endpoint: EndpointShape) => endpoint.auth === "operator" ? OPERATOR_TOKEN : DEMO_KEY
const concretePath = (endpoint: EndpointShape) => endpoint.path.replace(/:[A-Za-z0-9_]+/g, SOME_ID)
const matches = (template: string, path: string) => {
  const a = template.split("/")
  const b = path.split("/")
  return a.length === b.length && a.every((s, i) => s.startsWith(":") ? b[i] !== "" : s === b[i])
}

const expectEnvelope = (answer: RawAnswer, what: string) => {
  expect(answer.headers["content-type"], what).toMatch(/^application\/json/)
  const body = JSON.parse(answer.body)
  expect(Object.keys(body), what).toEqual(["error"])
  expect(typeof body.error.code, what).toBe("string")
  expect(typeof body.error.message, what).toBe("string")
}

describe("hostile framing over raw sockets, every endpoint (a real process)", () => {
  const endpoints = allEndpoints()
  const bodied = endpoints.filter((e) => e.method !== "GET")
  let server: ServerProcess
  let before: ReadonlyArray<string> = []
  const snapshot = () =>
    Promise.all(
      ["/reviews?limit=250", "/products?limit=250", "/customers?limit=250", "/sites?limit=250", "/organization"].map(
        async (path) =>
          (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${DEMO_KEY}` } })).text()
      )
    )
  beforeAll(async () => {
    server = await startServerProcess({
      DATABASE_URL: "memory",
      DEMO_SECRET_KEY: DEMO_KEY,
      OPERATOR_TOKEN,
      LOG_REQUESTS: "false"
    })
    before = await snapshot()
  })
  afterAll(() => server.stop())

  it("a GET with a body is the 405 of a GET-less path (with Allow), else a 400; never served", async () => {
    const paths = [...new Set(bodied.map(concretePath))]
    expect(paths.length).toBeGreaterThan(10)
    for (const path of paths) {
      const hasGet = endpoints.some((e) => e.method === "GET" && matches(e.path, path))
      const endpoint = bodied.find((e) => concretePath(e) === path)!
      const body = "{}"
      const answer = await exchange(
        server.url,
        `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokenOf(endpoint)}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        body
      )
      const what = `GET ${path} with a body`
      expect(answer.status, what).toBe(hasGet ? 400 : 405)
      if (!hasGet) expect(answer.headers["allow"], what).toContain(endpoint.method)
      expectEnvelope(answer, what)
    }
  })

  it("a body declared over its route's limit is a 413 before it is sent, and the connection closed", async () => {
    for (const endpoint of bodied) {
      const path = concretePath(endpoint)
      const type = endpoint.name === "importJobs.create" ? "application/x-ndjson" : "application/json"
      // A gibibyte declared, one byte sent: an answer that waited for the body would never come.
      const answer = await exchange(
        server.url,
        `${endpoint.method} ${path}${endpoint.name === "importJobs.create" ? "?type=reviews" : ""} HTTP/1.1\r\n` +
          `Host: x\r\nAuthorization: Bearer ${tokenOf(endpoint)}\r\nContent-Type: ${type}\r\n` +
          `Content-Length: 1073741824\r\n\r\n`,
        "["
      )
      const what = `${endpoint.method} ${path} declaring a gibibyte`
      expect(answer.status, what).toBe(413)
      expect(answer.headers["connection"], what).toBe("close")
      expectEnvelope(answer, what)
    }
  })

  it("changes nothing", async () => {
    expect(await snapshot()).toEqual(before)
  })
})
