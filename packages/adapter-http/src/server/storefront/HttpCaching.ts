/**
 * Revalidation of storefront reads (docs/DECISIONS.md §55, §70): every answer carries a strong `ETag` and
 * `Cache-Control: public, max-age=60`. The tag is the organization's content version with the request
 * (`StorefrontReads.contentTag`), known before the read: a request whose `If-None-Match` lists it answers 304 without
 * reading; `*` (which no tag can be checked against) reads first, and answers 304 when there is something to read.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"

export const STOREFRONT_CACHE_CONTROL = "public, max-age=60"

/** Whether an `If-None-Match` value lists `etag` (weak comparison, as RFC 9110 asks for this header) or, unless
 * `exactly`, is `*`. */
export const ifNoneMatchHas = (header: string | undefined, etag: string, exactly = false): boolean => {
  if (header === undefined || header.length > 8_192) return false
  for (const raw of header.split(",")) {
    const tag = raw.trim()
    if (tag === "*" && !exactly) return true
    if ((tag.startsWith("W/") ? tag.slice(2) : tag) === etag) return true
  }
  return false
}

/** Whether an `If-None-Match` names a tag, which can be compared before the read (`*` cannot). */
export const namesATag = (header: string | undefined): boolean => header !== undefined && header.includes("\"")

/**
 * A cacheable read whose tag comes with its body (from the read's first statement, docs/DECISIONS.md §78): the body
 * with its tag, or the 304 when the client holds that tag (or sent `*`).
 */
export const taggedRead = <E, R>(
  ifNoneMatch: string | undefined,
  read: Effect.Effect<{ readonly body: string; readonly etag: string }, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.map(read, ({ body, etag }) => {
    const headers = { etag, "cache-control": STOREFRONT_CACHE_CONTROL }
    return ifNoneMatchHas(ifNoneMatch, etag)
      ? HttpServerResponse.empty({ status: 304, headers })
      : HttpServerResponse.text(body, { status: 200, contentType: "application/json", headers })
  })

/**
 * A cacheable read: the 304 straight from the tag when the client holds it, else the read's body (as JSON text) with
 * the tag, or the 304 for `*` once the read found something. The tag is taken first, so a write landing between the
 * two only makes the answer's tag older than its body: the next revalidation reads again.
 */
export const cacheableRead = <E, R, E2, R2>(
  tag: Effect.Effect<string, E2, R2>,
  ifNoneMatch: string | undefined,
  read: Effect.Effect<string, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | E2, R | R2> =>
  Effect.flatMap(tag, (etag) => {
    const headers = { etag, "cache-control": STOREFRONT_CACHE_CONTROL }
    if (ifNoneMatchHas(ifNoneMatch, etag, true)) {
      return Effect.succeed(HttpServerResponse.empty({ status: 304, headers }))
    }
    return Effect.map(read, (body) =>
      ifNoneMatchHas(ifNoneMatch, etag)
        ? HttpServerResponse.empty({ status: 304, headers })
        : HttpServerResponse.text(body, { status: 200, contentType: "application/json", headers }))
  })

/** Reads about one shopper (a survey, a customer's own reviews): never kept by a shared cache (docs/DECISIONS.md §57). */
export const PERSONAL_CACHE_CONTROL = "private, no-store"

export const personalJson = (body: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, {
    status: 200,
    contentType: "application/json",
    headers: { "cache-control": PERSONAL_CACHE_CONTROL }
  })
