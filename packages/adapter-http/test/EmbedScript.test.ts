/**
 * `GET /storefront/embed.js` over HTTP (shared DECISIONS §19, docs/DECISIONS.md §60): the installed widget bundle,
 * public, compressed as the client accepts, an `ETag` per encoding with 304s, and the setup state's default
 * `embedScriptUrl`; `/demo` is a 404 page where there is no demo organization.
 */
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, describe, expect, it } from "vitest"
import { embedScriptBytes } from "../src/server/storefront/EmbedScript.ts"
import { makeTestServer } from "./TestServer.ts"

const server = makeTestServer()
afterAll(() => server.dispose())

const get = (path: string, headers: Record<string, string> = {}) => server.fetch(`http://test${path}`, { headers })

describe("GET /storefront/embed.js", () => {
  it("answers the widget bundle with no key, in the encoding asked for, each with its own ETag", async () => {
    const bundle = embedScriptBytes()
    const plain = await get("/storefront/embed.js", { "accept-encoding": "identity" })
    expect(plain.status).toBe(200)
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(plain.headers.get("cache-control")).toBe("public, max-age=300")
    expect(plain.headers.get("content-encoding")).toBeNull()
    expect(new Uint8Array(await plain.arrayBuffer())).toEqual(bundle)

    const br = await get("/storefront/embed.js", { "accept-encoding": "gzip, br" })
    expect(br.headers.get("content-encoding")).toBe("br")
    expect(new Uint8Array(brotliDecompressSync(new Uint8Array(await br.arrayBuffer())))).toEqual(bundle)
    const gzip = await get("/storefront/embed.js", { "accept-encoding": "gzip" })
    expect(gzip.headers.get("content-encoding")).toBe("gzip")
    const gzipped = new Uint8Array(await gzip.arrayBuffer())
    expect(new Uint8Array(gunzipSync(gzipped))).toEqual(bundle)
    expect(gzipped.byteLength).toBeLessThanOrEqual(30 * 1024)

    const tags = [plain, br, gzip].map((r) => r.headers.get("etag"))
    expect(new Set(tags).size).toBe(3)
    for (const response of [plain, br, gzip]) expect(response.headers.get("vary")).toBe("accept-encoding")
  })

  it("answers 304 with no body to a matching If-None-Match", async () => {
    const first = await get("/storefront/embed.js", { "accept-encoding": "gzip" })
    const etag = first.headers.get("etag")!
    const again = await get("/storefront/embed.js", { "accept-encoding": "gzip", "if-none-match": etag })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
    expect(again.headers.get("etag")).toBe(etag)
    const other = await get("/storefront/embed.js", { "accept-encoding": "gzip", "if-none-match": "\"other\"" })
    expect(other.status).toBe(200)
  })

  it("is the setup state's default embedScriptUrl, on the origin the API was reached at", async () => {
    const { key } = await server.provision()
    const setup = await server.request("GET", "/organization/setup", { token: key })
    expect(setup.body.embedScriptUrl).toBe("http://test/storefront/embed.js")
  })
})

describe("GET /demo without a demo organization", () => {
  it("is the 404 page, HTML", async () => {
    const response = await get("/demo")
    expect(response.status).toBe(404)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(await response.text()).toContain("No demo on this server")
  })
})
