/**
 * The bytes of the hot path as a client reads them off the socket (made as docs/DECISIONS.md §42 says):
 * `GET /organization` on the standalone server answers its headers in this order, the request id before the
 * rate-limit headers, and the organization's JSON as the operator API answered it when it was created; a 403 after
 * the spend carries the same headers; a replan is seen at once (the kept text is per organization value).
 */
import net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServerProcess, startServerProcess } from "./ServerProcess.ts"

const OPERATOR_TOKEN = "hot-path-operator-token-of-at-least-32-chars"
let server: ServerProcess

beforeAll(async () => {
  server = await startServerProcess({ DATABASE_URL: "memory", OPERATOR_TOKEN, LOG_REQUESTS: "false" })
})
afterAll(() => server.stop())

const operator = async (method: string, path: string, body: unknown) => {
  const res = await fetch(`${server.url}/operator${path}`, {
    method,
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: res.status, text: await res.text() }
}

/** One request on its own connection, read raw: status line, header lines in order, body. */
const raw = (path: string, key: string) =>
  new Promise<{ status: string; headers: ReadonlyArray<[string, string]>; body: string }>((resolve, reject) => {
    const socket = net.connect(
      Number(new URL(server.url).port),
      "127.0.0.1",
      () =>
        socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`)
    )
    let text = ""
    socket.on("data", (chunk) => (text += chunk.toString()))
    socket.on("error", reject)
    socket.on("end", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n")
      const [status = "", ...lines] = head.split("\r\n")
      resolve({
        status,
        headers: lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
        body
      })
    })
  })

const CHARGED = [
  "content-type",
  "content-length",
  "x-request-id",
  "x-rate-limit-cost",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "ratelimit-policy",
  "ratelimit",
  "date",
  "connection"
]

describe("the hot path's bytes", () => {
  it("GET /organization: headers in order, the organization as created; a 403 alike; a replan seen at once", async () => {
    const created = await operator("POST", "/organizations", { name: "Hot path", apiRequestsPerMinute: 1000 })
    expect(created.status).toBe(201)
    const id = JSON.parse(created.text).id as string
    const key = JSON.parse(
      (await operator("POST", `/organizations/${id}/keys`, { permissions: ["settings:read"] })).text
    ).secretKey as string

    for (let i = 0; i < 2; i++) {
      const res = await raw("/organization", key)
      expect(res.status).toBe("HTTP/1.1 200 OK")
      expect(res.headers.map(([name]) => name)).toEqual(CHARGED)
      expect(Object.fromEntries(res.headers)).toMatchObject({
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(res.body)),
        "x-rate-limit-cost": "1",
        "x-ratelimit-limit": "1000",
        "ratelimit-policy": `"org";q=1000;w=60`
      })
      expect(res.body).toBe(created.text)
    }

    const forbidden = await raw("/reviews", key)
    expect(forbidden.status).toBe("HTTP/1.1 403 Forbidden")
    expect(forbidden.headers.map(([name]) => name)).toEqual(CHARGED)

    const replanned = await operator("PATCH", `/organizations/${id}`, { apiRequestsPerMinute: 500 })
    expect(replanned.status).toBe(200)
    const after = await raw("/organization", key)
    expect(JSON.parse(after.body).plan.apiRequestsPerMinute).toBe(500)
    expect(after.body).toBe(replanned.text)
  })
})
