/**
 * Revalidation of storefront reads (docs/DECISIONS.md §55): every answer carries a strong `ETag` (a hash of its exact
 * body) and `Cache-Control: public, max-age=60`; a request whose `If-None-Match` lists the current tag (or `*`)
 * answers 304 with no body. The tag is of the bytes, so any change to what the shopper would see changes it.
 */
import { hash } from "node:crypto"
import { HttpServerResponse } from "effect/http"

export const STOREFRONT_CACHE_CONTROL = "public, max-age=60"

export const etagOf = (body: string): string => `"${hash("sha256", body, "base64url").slice(0, 32)}"`

/** Whether an `If-None-Match` value lists `etag` (weak comparison, as RFC 9110 asks for this header) or is `*`. */
export const ifNoneMatchHas = (header: string | undefined, etag: string): boolean => {
  if (header === undefined || header.length > 8_192) return false
  for (const raw of header.split(",")) {
    const tag = raw.trim()
    if (tag === "*") return true
    if ((tag.startsWith("W/") ? tag.slice(2) : tag) === etag) return true
  }
  return false
}

/** The 200 with its tag, or the 304 when the client holds the same body. */
export const cacheableJson = (body: string, ifNoneMatch: string | undefined): HttpServerResponse.HttpServerResponse => {
  const etag = etagOf(body)
  const headers = { etag, "cache-control": STOREFRONT_CACHE_CONTROL }
  return ifNoneMatchHas(ifNoneMatch, etag)
    ? HttpServerResponse.empty({ status: 304, headers })
    : HttpServerResponse.text(body, { status: 200, contentType: "application/json", headers })
}

/** Reads about one shopper (a survey, a customer's own reviews): never kept by a shared cache (docs/DECISIONS.md §57). */
export const PERSONAL_CACHE_CONTROL = "private, no-store"

export const personalJson = (body: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, {
    status: 200,
    contentType: "application/json",
    headers: { "cache-control": PERSONAL_CACHE_CONTROL }
  })
