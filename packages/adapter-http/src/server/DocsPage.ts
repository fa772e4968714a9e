/**
 * `GET /docs`, the interactive API reference (docs/DECISIONS.md §19). The page is Effect's Scalar page (the Scalar
 * bundle and the OpenAPI document inline, megabytes of it), rendered once by `HttpApiScalar` itself and then served
 * like a static asset: compressed with Brotli or gzip as the client's `Accept-Encoding` allows (each encoding
 * computed once, off the event loop, on first demand), with an `ETag` per encoding, `304 Not Modified` on a
 * matching `If-None-Match`, and `Cache-Control`. Scalar's web fonts are off, so the page loads nothing from the
 * internet: every byte it needs comes from this server.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type HttpApi, type HttpApiGroup, HttpApiScalar } from "effect/http-api"
import { createHash } from "node:crypto"
import { promisify } from "node:util"
import * as Zlib from "node:zlib"

/** Revalidated after 5 minutes: a deploy's new reference shows up soon, and a revalidation is a 304 of no body. */
export const DOCS_CACHE_CONTROL = "public, max-age=300"

export type DocsEncoding = "br" | "gzip" | "identity"

/**
 * The encoding to send for an `Accept-Encoding` header (RFC 9110 §12.5.3): Brotli, then gzip, then none, skipping
 * any the client refuses with `q=0` (directly or through `*`). No header means any encoding is acceptable.
 */
export const chooseEncoding = (header: string | undefined): DocsEncoding => {
  if (header === undefined) return "identity"
  const q = new Map<string, number>()
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    if (name === undefined || name === "") continue
    const weight = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const value = weight === undefined ? 1 : Number(weight.slice(2))
    q.set(name, Number.isFinite(value) ? value : 0)
  }
  const accepts = (coding: string) => (q.get(coding) ?? q.get("*") ?? 0) > 0
  return accepts("br") ? "br" : accepts("gzip") ? "gzip" : "identity"
}

/** Whether an `If-None-Match` header names one of `etags` (weak comparison, RFC 9110 §13.1.2). */
export const matchesIfNoneMatch = (header: string | undefined, etags: ReadonlyArray<string>): boolean => {
  if (header === undefined) return false
  if (header.trim() === "*") return true
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "")
  const wanted = new Set(etags.map(opaque))
  return header.split(",").some((tag) => wanted.has(opaque(tag)))
}

const brotli = promisify(Zlib.brotliCompress)
const gzip = promisify(Zlib.gzip)

// Brotli quality 9, not 11: nearly the same size for a small part of the CPU; computed once (docs/DECISIONS.md §19).
export const compress: Record<Exclude<DocsEncoding, "identity">, (bytes: Uint8Array) => Promise<Uint8Array>> = {
  br: (bytes) =>
    brotli(bytes, {
      params: {
        [Zlib.constants.BROTLI_PARAM_QUALITY]: 9,
        [Zlib.constants.BROTLI_PARAM_MODE]: Zlib.constants.BROTLI_MODE_TEXT,
        [Zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength
      }
    }),
  gzip: (bytes) => gzip(bytes, { level: 9 })
}

/** Scalar's page for `api`, rendered by Effect's own `HttpApiScalar` layer through a throwaway web handler. */
const renderScalarPage = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  scalar: HttpApiScalar.ScalarConfig
) =>
  Effect.promise(async () => {
    const { dispose, handler } = HttpRouter.toWebHandler(
      HttpApiScalar.layer(api, { path: "/docs", scalar }).pipe(Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    )
    try {
      const response = await handler(new Request("http://docs.invalid/docs"))
      return new Uint8Array(await response.arrayBuffer())
    } finally {
      await dispose()
    }
  })

export interface DocsPageOptions {
  readonly path?: `/${string}` | undefined
  /** Scalar settings; `withDefaultFonts` is forced off (the fonts would come from Scalar's CDN). */
  readonly scalar?: HttpApiScalar.ScalarConfig | undefined
}

export const DocsPage = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  options: DocsPageOptions = {}
) =>
  Layer.unwrap(Effect.gen(function*() {
    const html = yield* Effect.cached(renderScalarPage(api, { ...options.scalar, withDefaultFonts: false }))
    const tag = yield* Effect.cached(
      Effect.map(html, (bytes) => createHash("sha256").update(bytes).digest("base64url").slice(0, 27))
    )
    const encoded = {
      identity: html,
      br: yield* Effect.cached(Effect.flatMap(html, (bytes) => Effect.promise(() => compress.br(bytes)))),
      gzip: yield* Effect.cached(Effect.flatMap(html, (bytes) => Effect.promise(() => compress.gzip(bytes))))
    }
    const etagOf = (hash: string, encoding: DocsEncoding) => `"${hash}${encoding === "identity" ? "" : `-${encoding}`}"`

    const serve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const hash = yield* tag
      const encoding = chooseEncoding(request.headers["accept-encoding"])
      const etag = etagOf(hash, encoding)
      const headers: Record<string, string> = { etag, "cache-control": DOCS_CACHE_CONTROL, vary: "accept-encoding" }
      const all = (["identity", "br", "gzip"] as const).map((e) => etagOf(hash, e))
      if (matchesIfNoneMatch(request.headers["if-none-match"], all)) {
        return HttpServerResponse.empty({ status: 304, headers })
      }
      const body = yield* encoded[encoding]
      return HttpServerResponse.uint8Array(body, {
        contentType: "text/html; charset=utf-8",
        headers: encoding === "identity" ? headers : { ...headers, "content-encoding": encoding }
      })
    })
    return HttpRouter.add("GET", options.path ?? "/docs", serve)
  }))
