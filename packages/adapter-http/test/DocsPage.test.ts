/**
 * `GET /docs` as an asset (docs/DECISIONS.md §19): Brotli or gzip per `Accept-Encoding`, the same page in every
 * encoding, an `ETag` per encoding with `304` on `If-None-Match`, `Cache-Control`, and nothing on the page that would
 * load from another origin (Scalar's fonts are off; the bundle is inline).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { chooseEncoding, DOCS_CACHE_CONTROL, matchesIfNoneMatch } from "../src/server/DocsPage.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"

describe("chooseEncoding", () => {
  it("prefers Brotli, then gzip, honouring q=0 and *", () => {
    expect(chooseEncoding(undefined)).toBe("identity")
    expect(chooseEncoding("")).toBe("identity")
    expect(chooseEncoding("gzip, deflate, br, zstd")).toBe("br")
    expect(chooseEncoding("gzip")).toBe("gzip")
    expect(chooseEncoding("GZIP;q=0.5, br;q=0")).toBe("gzip")
    expect(chooseEncoding("br;q=0, gzip;q=0")).toBe("identity")
    expect(chooseEncoding("*")).toBe("br")
    expect(chooseEncoding("*;q=0, gzip")).toBe("gzip")
    expect(chooseEncoding("identity")).toBe("identity")
    expect(chooseEncoding("br;q=nonsense, gzip")).toBe("gzip")
  })
})

describe("matchesIfNoneMatch", () => {
  it("compares weakly against any of the tags", () => {
    expect(matchesIfNoneMatch(undefined, ["\"a\""])).toBe(false)
    expect(matchesIfNoneMatch("\"a\"", ["\"a\""])).toBe(true)
    expect(matchesIfNoneMatch("W/\"a\"", ["\"a\""])).toBe(true)
    expect(matchesIfNoneMatch("\"x\", \"b\"", ["\"a\"", "\"b\""])).toBe(true)
    expect(matchesIfNoneMatch("\"ab\"", ["\"a\""])).toBe(false)
    expect(matchesIfNoneMatch("*", ["\"a\""])).toBe(true)
  })
})

describe("GET /docs", () => {
  let server: TestServer
  beforeAll(() => {
    server = makeTestServer()
  })
  afterAll(() => server.dispose())

  const get = async (headers: Record<string, string>) => {
    const res = await server.fetch("http://test/docs", { headers })
    return { res, bytes: Buffer.from(await res.arrayBuffer()) }
  }

  it(
    "sends the same page in Brotli, gzip or plain, each with its own ETag, cacheable",
    { timeout: 60_000 },
    async () => {
      const plain = await get({})
      const br = await get({ "accept-encoding": "gzip, deflate, br" })
      const gz = await get({ "accept-encoding": "gzip" })
      for (const { res } of [plain, br, gz]) {
        expect(res.status).toBe(200)
        expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
        expect(res.headers.get("cache-control")).toBe(DOCS_CACHE_CONTROL)
        expect(res.headers.get("vary")).toBe("accept-encoding")
        expect(res.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]+"$/)
      }
      expect(plain.res.headers.get("content-encoding")).toBeNull()
      expect(br.res.headers.get("content-encoding")).toBe("br")
      expect(gz.res.headers.get("content-encoding")).toBe("gzip")
      expect(brotliDecompressSync(br.bytes).equals(plain.bytes)).toBe(true)
      expect(gunzipSync(gz.bytes).equals(plain.bytes)).toBe(true)
      expect(br.bytes.length).toBeLessThan(plain.bytes.length / 3)
      expect(new Set([plain, br, gz].map(({ res }) => res.headers.get("etag"))).size).toBe(3)
      // Computed once: a second request gets the same bytes and tag.
      const again = await get({ "accept-encoding": "br" })
      expect(again.bytes.equals(br.bytes)).toBe(true)
      expect(again.res.headers.get("etag")).toBe(br.res.headers.get("etag"))

      const html = plain.bytes.toString("utf8")
      expect(html).toContain("Scalar.createApiReference")
      expect(html).toContain("\"withDefaultFonts\":false")
      // No script or stylesheet from elsewhere: the bundle is inline.
      expect(html).not.toMatch(/<script[^>]+src=/)
      expect(html).not.toMatch(/<link[^>]+href=["']https?:/)
    }
  )

  it("answers 304 with no body to a matching If-None-Match", async () => {
    const first = await get({ "accept-encoding": "br" })
    const etag = first.res.headers.get("etag")!
    const revalidated = await get({ "accept-encoding": "br", "if-none-match": etag })
    expect(revalidated.res.status).toBe(304)
    expect(revalidated.bytes.length).toBe(0)
    expect(revalidated.res.headers.get("etag")).toBe(etag)
    expect(revalidated.res.headers.get("cache-control")).toBe(DOCS_CACHE_CONTROL)
    // A stale tag gets the page.
    expect((await get({ "accept-encoding": "br", "if-none-match": "\"stale\"" })).res.status).toBe(200)
  })
})
