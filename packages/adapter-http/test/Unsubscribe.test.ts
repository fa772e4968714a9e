/**
 * `GET|POST /u/{token}` over HTTP (shared DECISIONS §17; docs/EMAILS.md "Unsubscribe"): the confirmation page, the
 * opt-out by the page's button and by a mail client's one-click POST, the same 404 page for every token that is not
 * a live one, no key needed and nothing charged to the organization's rate limit, and the token kept out of the
 * access log and out of traces. On memory, and on a PostgreSQL server with TEST_DATABASE_URL.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Catalog, Kernel } from "@feedback/core"
import { Context, Layer, ManagedRuntime, Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeWebHandler } from "../src/server/ApiServer.ts"
import { testStores } from "./SeededServer.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"

for (const [name, makeStore] of testStores) {
  describe(`unsubscribe links (${name})`, () => {
    const logLines: Array<string> = []
    let server: TestServer
    let runtime: ManagedRuntime.ManagedRuntime<Catalog.Unsubscribes, unknown>

    beforeAll(() => {
      const store = makeStore()
      const memoMap = Layer.makeMemoMapUnsafe()
      runtime = ManagedRuntime.make(
        Catalog.Unsubscribes.layer.pipe(Layer.provide(Layer.merge(store, Kernel.IdGenerator.uuidV7))),
        {
          memoMap
        }
      )
      server = makeTestServer(store, { logRequests: true, log: (line) => logLines.push(line) }, memoMap)
    })
    afterAll(async () => {
      await server.dispose()
      await runtime.dispose()
    })

    const shop = async (options: { readonly apiRequestsPerMinute?: number } = {}) => {
      const { organizationId, key } = await server.provision(options)
      const created = await server.request("POST", "/customers", {
        token: key,
        body: { email: "ada.lovelace@example.com", firstName: "Ada" }
      })
      expect(created.status).toBe(201)
      const customerId: string = created.body.id
      const token = await runtime.runPromise(
        Catalog.Unsubscribes.use((u) =>
          u.tokenFor(organizationId as Kernel.OrganizationId, customerId as Kernel.CustomerId)
        )
      )
      return { organizationId, key, customerId, token }
    }
    /** The feed's `customer.updated` events once `count` are there (a PostgreSQL feed shows committed events a moment later). */
    const customerEvents = async (key: string, count: number) => {
      let data: Array<{ data: { id: string; emailOptOut: boolean } }> = []
      for (let i = 0; i < 200; i++) {
        data = (await server.request("GET", "/events?events=customer.updated", { token: key })).body.data
        if (data.length >= count) break
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      return data
    }
    const page = (
      method: "GET" | "POST",
      token: string,
      init: { readonly rawBody?: string; readonly headers?: Record<string, string> } = {}
    ) => server.request(method, `/u/${token}`, init)

    it("GET shows an accessible confirmation page and changes nothing; POST opts out with customer.updated; the page then says so", async () => {
      const { key, customerId, token } = await shop()
      const confirm = await page("GET", token)
      expect(confirm.status).toBe(200)
      expect(confirm.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(confirm.headers.get("cache-control")).toBe("no-store")
      expect(confirm.headers.get("referrer-policy")).toBe("no-referrer")
      expect(confirm.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(confirm.text).toContain("<html lang=\"en\">")
      expect(confirm.text).toContain("<h1>Unsubscribe from review emails?</h1>")
      expect(confirm.text).toContain("a***@example.com")
      expect(confirm.text).not.toContain("ada.lovelace")
      expect(confirm.text).toMatch(/<form method="post">\s*<button type="submit">Unsubscribe<\/button>/)
      expect((await server.request("GET", `/customers/${customerId}`, { token: key })).body.emailOptOut).toBe(false)

      // The page's button: a form POST.
      const done = await page("POST", token, {
        rawBody: "",
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      expect(done.status).toBe(200)
      expect(done.text).toContain("You are unsubscribed")
      const customer = (await server.request("GET", `/customers/${customerId}`, { token: key })).body
      expect(customer).toMatchObject({ emailOptOut: true, emailOptOutSource: "unsubscribe_link" })
      expect(customer.emailOptOutAt).toBe(customer.updatedAt)
      const events = await customerEvents(key, 2)
      expect(events.map((e) => e.data.emailOptOut)).toEqual([false, true])
      expect((await page("GET", token)).text).toContain("You are unsubscribed")
    })

    it("a mail client's one-click POST (RFC 8058) opts out; a repeat answers 200 and fires nothing more", async () => {
      const { key, customerId, token } = await shop()
      const oneClick = () =>
        page("POST", token, {
          rawBody: "List-Unsubscribe=One-Click",
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })
      expect((await oneClick()).status).toBe(200)
      expect((await oneClick()).status).toBe(200)
      expect((await server.request("GET", `/customers/${customerId}`, { token: key })).body.emailOptOut).toBe(true)
      // A later event (another customer's) is in the feed once everything before it is: still two of Ada's.
      const marker = await server.request("POST", "/customers", { token: key, body: { email: "marker@example.com" } })
      const events = await customerEvents(key, 3)
      expect(events.at(-1)?.data.id).toBe(marker.body.id)
      expect(events.filter((e) => e.data.id === customerId).map((e) => e.data.emailOptOut)).toEqual([false, true])
      // Multipart form bodies, as some clients send, too.
      const other = await shop()
      const multipart = await page("POST", other.token, {
        rawBody: "--b\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--b--\r\n",
        headers: { "content-type": "multipart/form-data; boundary=b" }
      })
      expect(multipart.status).toBe(200)
    })

    it("every token that is not a live one answers the same 404 page, whatever the method, and changes nothing", async () => {
      const { key, customerId, token } = await shop()
      const flipped = (token[0] === "A" ? "B" : "A") + token.slice(1)
      const bodies = new Set<string>()
      for (
        const bad of [
          flipped,
          "short",
          "x".repeat(65),
          "A".repeat(43),
          `${token.slice(0, 20)}%2F${token.slice(20)}`,
          `${token}.json`
        ]
      ) {
        for (const method of ["GET", "POST"] as const) {
          const res = await page(method, bad)
          expect(res.status, `${method} ${bad}`).toBe(404)
          expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
          bodies.add(res.text)
        }
      }
      expect(bodies.size).toBe(1)
      expect([...bodies][0]).toContain("This link is not valid")
      expect((await server.request("GET", `/customers/${customerId}`, { token: key })).body.emailOptOut).toBe(false)
      // Another method is the API's 405, in the envelope.
      const put = await server.request("PUT", `/u/${token}`)
      expect(put.status).toBe(405)
      expect(put.headers.get("allow")).toBe("GET, POST")
      expect(put.body.error.code).toBe("METHOD_NOT_ALLOWED")
    })

    it("needs no key, and is never charged to the organization's rate limit, even with its key attached", async () => {
      const { key, token } = await shop({ apiRequestsPerMinute: 5 })
      // Provisioning created the customer (one request); the bucket holds 4 now.
      for (let i = 0; i < 12; i++) {
        expect((await page("GET", token)).status).toBe(200)
        expect((await server.request("GET", `/u/${token}`, { token: key })).status).toBe(200)
      }
      expect((await page("POST", token)).status).toBe(200)
      const org = await server.request("GET", "/organization", { token: key })
      expect(org.status).toBe(200)
      expect(Number(org.headers.get("x-ratelimit-remaining"))).toBeGreaterThanOrEqual(2)
    })

    it("the access log names the route, never the token", async () => {
      const { token } = await shop()
      await page("GET", token)
      await page("POST", token)
      const lines = logLines.filter((line) => line.includes("/u/"))
      expect(lines.length).toBeGreaterThanOrEqual(2)
      for (const line of lines) expect(line).not.toContain(token)
      expect(lines.some((line) => JSON.parse(line).route === "/u/:token")).toBe(true)
    })
  })
}

describe("unsubscribe links and tracing", () => {
  it("record no server span (its URL attributes would carry the token); other routes still do", async () => {
    const { handler, dispose } = makeWebHandler(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7), {
      workers: false
    })
    try {
      const names: Array<string> = []
      const recording = Tracer.make({
        span(options) {
          names.push(options.name)
          return Tracer.nativeTracer.span(options)
        }
      })
      const context = Context.make(Tracer.Tracer, recording) as Context.Context<never>
      const token = "A".repeat(43)
      expect((await handler(new Request(`http://embedded/u/${token}`), context)).status).toBe(404)
      expect((await handler(new Request(`http://embedded/u/${token}`, { method: "POST" }), context)).status).toBe(404)
      expect(names.filter((name) => name.includes("/u/"))).toEqual([])
      expect((await handler(new Request("http://embedded/health"), context)).status).toBe(200)
      expect(names).toContain("GET /health")
    } finally {
      await dispose()
    }
  })
})
