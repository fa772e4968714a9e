/**
 * CORS of the storefront routes (docs/DECISIONS.md §55): a page at `https://` + one of the organization's site domains
 * (or `www.` + it) may read the answers; any other origin gets no CORS header. Answers vary by `Origin` whether
 * or not it is allowed, so a shared cache never hands one origin's answer to another. Preflights (`OPTIONS`) are
 * answered 204 for an allowed origin; the organization is known from the key in the query (a browser sends no
 * custom header with a preflight, so a page that sends the key as `X-Publishable-Key` must also put it in the URL
 * for requests that need one).
 */
import { Organizations, Storefront } from "@feedback/core"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/** Headers of a storefront answer for a request from `origin` (undefined: not allowed, or none sent). */
export const corsHeaders = (allowedOrigin: string | undefined): Record<string, string> =>
  allowedOrigin === undefined
    ? { vary: "Origin" }
    : { vary: "Origin", "access-control-allow-origin": allowedOrigin, "access-control-expose-headers": exposed }

const exposed = "ETag, Retry-After, RateLimit, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id"

/** The storefront routes a preflight may ask for. */
export const STOREFRONT_PREFLIGHT_PATH = "/storefront/*"

export const keyInQuery = (url: string): string | undefined => {
  const q = url.indexOf("?")
  if (q === -1) return undefined
  const values = new URLSearchParams(url.slice(q + 1)).getAll("apiPublishableKey")
  return values.length === 1 ? values[0] : undefined
}

/** `OPTIONS /storefront/*`: 204 with the allowed methods and headers for an allowed origin, else 204 with none. */
export const StorefrontPreflight = Layer.effectDiscard(Effect.gen(function*() {
  const router = yield* HttpRouter.HttpRouter
  const organizations = yield* Organizations.Organizations
  const reads = yield* Storefront.StorefrontReads
  yield* router.add(
    "OPTIONS",
    STOREFRONT_PREFLIGHT_PATH,
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers["origin"]
      const key = keyInQuery(request.url)
      const allowed = origin !== undefined && key !== undefined
        ? yield* organizations.authenticatePublishableKey(key).pipe(
          Effect.flatMap((k) => reads.allowsOrigin(k.organization.id, origin)),
          Effect.orElseSucceed(() => false)
        )
        : false
      return HttpServerResponse.empty({
        status: 204,
        headers: allowed
          ? {
            ...corsHeaders(origin),
            "access-control-allow-methods": "GET, POST, OPTIONS",
            "access-control-allow-headers": "Content-Type, X-Publishable-Key, Idempotency-Key, If-None-Match",
            "access-control-max-age": "600"
          }
          : corsHeaders(undefined)
      })
    })
  )
}))
