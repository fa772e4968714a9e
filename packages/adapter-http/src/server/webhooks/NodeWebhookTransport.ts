/**
 * The HTTP client and DNS of webhook delivery, on undici and node:dns.
 *
 * - Connects to the address the core checked (a `lookup` that answers only that address), so DNS cannot change
 *   between the SSRF check and the connection; the URL's host name still drives the `Host` header, TLS SNI and
 *   certificate verification.
 * - Never follows redirects (undici's `request` does not), enforces one deadline for the whole exchange (body
 *   included), reads at most `RESPONSE_EXCERPT_BYTES` of any body and then drops the connection, so a receiver that
 *   answers with an endless body holds neither the delivery nor a socket; reports every failure as a value.
 * - Keep-alive: one connection pool per destination (origin and pinned address), owned by the layer and closed
 *   with it; the least recently used pools beyond `MAX_POOLS` are closed. undici rather than node:http: half the
 *   client's CPU per POST (docs/DECISIONS.md §30).
 */
import {
  HostNotResolved,
  HostResolver,
  RESPONSE_EXCERPT_BYTES,
  type TransportResult,
  WebhookTransport
} from "@feedback/core"
import { Effect, Layer } from "effect"
import type { LookupAddress, LookupOptions } from "node:dns"
import { lookup } from "node:dns/promises"
import { isIPv6 } from "node:net"
import { Pool } from "undici"

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void

/** A `lookup` that resolves every name to the one pinned address. */
const pinnedLookup = (address: string) => (_hostname: string, options: LookupOptions, callback: LookupCallback) => {
  const family = isIPv6(address) ? 6 : 4
  if (options.all === true) callback(null, [{ address, family }])
  else callback(null, address, family)
}

const describeNetworkError = (error: unknown): string => {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code
    // undici wraps a socket's failure (say a refused connection) in its own error; the cause names it.
    const cause = (error as { readonly cause?: unknown }).cause
    if (cause instanceof Error && (code === undefined || code.startsWith("UND_"))) return describeNetworkError(cause)
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
  }
  return String(error)
}

/** Destinations with a pool kept open; past this, the least recently used pool is closed. */
const MAX_POOLS = 512

export const NodeWebhookTransport: Layer.Layer<WebhookTransport> = Layer.effect(
  WebhookTransport,
  Effect.gen(function*() {
    const pools = yield* Effect.acquireRelease(
      Effect.sync(() => new Map<string, Pool>()),
      (open) => Effect.promise(() => Promise.allSettled([...open.values()].map((p) => p.destroy())))
    )
    const poolFor = (url: URL, address: string | undefined): Pool => {
      const key = address === undefined ? url.origin : `${url.origin} ${address}`
      const known = pools.get(key)
      if (known !== undefined) {
        // Most recently used last: a Map keeps insertion order.
        pools.delete(key)
        pools.set(key, known)
        return known
      }
      const pool = new Pool(url.origin, {
        connections: 64,
        ...(address === undefined ? {} : { connect: { lookup: pinnedLookup(address) as never } })
      })
      pools.set(key, pool)
      if (pools.size > MAX_POOLS) {
        const [oldestKey, oldest] = pools.entries().next().value!
        pools.delete(oldestKey)
        // Requests under way on it finish first.
        oldest.close().catch(() => undefined)
      }
      return pool
    }
    return WebhookTransport.of({
      post: (request) =>
        Effect.callback<TransportResult>((resume) => {
          let finished = false
          const finish = (result: TransportResult) => {
            if (finished) return
            finished = true
            resume(Effect.succeed(result))
          }
          // The answer so far: once the status is known, a cut body still reports it with what was read.
          let status: number | undefined
          const chunks: Array<Buffer> = []
          let size = 0
          const answer = (): TransportResult =>
            status === undefined
              ? { _tag: "TimedOut" }
              : { _tag: "Response", status, bodyExcerpt: Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8") }
          const abort = new AbortController()
          // One deadline for the whole exchange, body included: an endless or stalled body is cut when it passes.
          const timer = setTimeout(() => {
            finish(answer())
            abort.abort()
          }, request.timeoutMs)
          const settle = () => {
            clearTimeout(timer)
            finish(answer())
          }
          poolFor(request.url, request.address).request({
            origin: request.url.origin,
            path: request.url.pathname + request.url.search,
            method: "POST",
            headers: request.headers,
            body: request.body,
            signal: abort.signal
          }).then(
            ({ body, statusCode }) => {
              status = statusCode
              const success = status >= 200 && status < 300
              // A 2xx is delivered as soon as it is known; its body is not kept, only read (to reuse the connection).
              if (success) finish({ _tag: "Response", status, bodyExcerpt: "" })
              body.on("data", (chunk: Buffer) => {
                if (!success) chunks.push(chunk)
                size += chunk.length
                // Past what the log keeps nothing more is read: the connection is dropped rather than drained.
                if (size >= RESPONSE_EXCERPT_BYTES) {
                  settle()
                  body.destroy()
                }
              })
              body.on("end", settle)
              body.on("error", settle)
              body.on("close", settle)
            },
            (error: unknown) => {
              clearTimeout(timer)
              finish({ _tag: "NetworkError", message: describeNetworkError(error) })
            }
          )
          return Effect.sync(() => {
            clearTimeout(timer)
            abort.abort()
          })
        })
    })
  })
)

/** Every address of a name, as the operating system resolves it; a lookup slower than 5 s counts as a failure. */
export const NodeHostResolver: Layer.Layer<HostResolver> = Layer.succeed(
  HostResolver,
  HostResolver.of({
    resolve: (hostname) =>
      Effect.tryPromise({
        try: () => lookup(hostname, { all: true, verbatim: true }),
        catch: () => new HostNotResolved({ hostname })
      }).pipe(
        Effect.map((addresses) => addresses.map((a) => a.address)),
        Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail(new HostNotResolved({ hostname })) })
      )
  })
)
