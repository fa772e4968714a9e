/**
 * `GET /storefront/embed.js` (shared DECISIONS §19; docs/DECISIONS.md §60): the storefront widget bundle (`@feedback/widget`, built by
 * esbuild and shipped in that package), the default `embedScriptUrl`. Public: no key is needed to load it (the page's
 * script tag carries the publishable key for the widget's own calls). Served like the docs page: Brotli or gzip as
 * `Accept-Encoding` allows, each computed once, an `ETag` per encoding, 304 on a matching `If-None-Match`.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { chooseEncoding, compress, type DocsEncoding, matchesIfNoneMatch } from "../DocsPage.ts"
import { EMBED_SCRIPT_PATH } from "../setup/SetupHandlers.ts"

/** Revalidated after 5 minutes, as the docs page: a deploy's new widget reaches shoppers soon, a revalidation is a 304. */
export const EMBED_CACHE_CONTROL = "public, max-age=300"

export const EMBED_SCRIPT_ROUTES = [["GET", EMBED_SCRIPT_PATH]] as const

/** The bundle's bytes as the widget package ships them. */
export const embedScriptBytes = (): Uint8Array =>
  new Uint8Array(readFileSync(createRequire(import.meta.url).resolve("@feedback/widget/embed.js")))

const headersOf = (etag: string): Record<string, string> => ({
  etag,
  "cache-control": EMBED_CACHE_CONTROL,
  vary: "accept-encoding",
  "x-content-type-options": "nosniff",
  // Any page may load it, also one that isolates itself (COEP) or loads it with `crossorigin`.
  "cross-origin-resource-policy": "cross-origin",
  "access-control-allow-origin": "*"
})

export const EmbedScriptRoute = Layer.unwrap(Effect.gen(function*() {
  const script = embedScriptBytes()
  const hash = createHash("sha256").update(script).digest("base64url").slice(0, 27)
  const encoded = {
    identity: Effect.succeed(script),
    br: yield* Effect.cached(Effect.promise(() => compress.br(script))),
    gzip: yield* Effect.cached(Effect.promise(() => compress.gzip(script)))
  }
  const etagOf = (encoding: DocsEncoding) => `"${hash}${encoding === "identity" ? "" : `-${encoding}`}"`
  const all = (["identity", "br", "gzip"] as const).map(etagOf)

  const serve = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const encoding = chooseEncoding(request.headers["accept-encoding"])
    const headers = headersOf(etagOf(encoding))
    if (matchesIfNoneMatch(request.headers["if-none-match"], all)) {
      return HttpServerResponse.empty({ status: 304, headers })
    }
    const body = yield* encoded[encoding]
    return HttpServerResponse.uint8Array(body, {
      contentType: "text/javascript; charset=utf-8",
      headers: encoding === "identity" ? headers : { ...headers, "content-encoding": encoding }
    })
  })
  return HttpRouter.add("GET", EMBED_SCRIPT_PATH, serve)
}))
