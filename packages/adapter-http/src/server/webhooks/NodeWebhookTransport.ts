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
 *   with it; the least recently used pools beyond `MAX_POOLS` are closed. undici rather than node:http: it costs
 *   the client less per POST and is the client of Node's own `fetch` (docs/DECISIONS.md §30).
 */
import { Webhooks } from "@feedback/core"
import { Effect, Layer } from "effect"
import type { LookupAddress, LookupOptions } from "node:dns"
import { lookup } from "node:dns/promises"
import { isIPv6 } from "node:net"
import { type Dispatcher, Pool } from "undici"

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | Array<LookupAddress>,
  family?: number
) => void

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

export const NodeWebhookTransport: Layer.Layer<Webhooks.WebhookTransport> = Layer.effect(
  Webhooks.WebhookTransport,
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
        // The exchange's own deadline covers headers and body (`Exchange`): undici's timers (300 s each) would only
        // be cleared and set again on every request.
        headersTimeout: 0,
        bodyTimeout: 0,
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
    return Webhooks.WebhookTransport.of({
      post: (request) =>
        Effect.callback<Webhooks.TransportResult>((resume) => {
          const exchange = new Exchange(request.timeoutMs, (result) => resume(Effect.succeed(result)))
          poolFor(request.url, request.address).dispatch({
            origin: request.url.origin,
            path: request.url.pathname + request.url.search,
            method: "POST",
            headers: request.headers,
            body: request.body
          }, exchange)
          return Effect.sync(() => exchange.cancel())
        })
    })
  })
)

/**
 * One POST as an undici dispatch handler: its callbacks read the answer directly, with no response stream, promise
 * or abort signal per request (docs/DECISIONS.md §34). One deadline covers the whole exchange, body included; at
 * most `RESPONSE_EXCERPT_BYTES` of a body are read before the connection is dropped; every failure is a value.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private finished = false
  /** Set once the exchange is over for the caller (answered, timed out or cancelled): a late start is aborted. */
  private cancelled = false
  private controller: Dispatcher.DispatchController | undefined = undefined
  private status: number | undefined = undefined
  private success = false
  private chunks: Array<Buffer> | undefined = undefined
  private size = 0
  private readonly timer: ReturnType<typeof setTimeout>
  private readonly done: (result: Webhooks.TransportResult) => void

  constructor(timeoutMs: number, done: (result: Webhooks.TransportResult) => void) {
    this.done = done
    this.timer = setTimeout(() => {
      this.finish(this.answer())
      this.cancel()
    }, timeoutMs)
  }

  /** Stops the exchange: the connection is dropped if it started, else the request is aborted when it would. */
  cancel() {
    clearTimeout(this.timer)
    this.cancelled = true
    this.controller?.abort(new Error("webhook delivery cancelled"))
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller
    if (this.cancelled) controller.abort(new Error("webhook delivery cancelled"))
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number) {
    this.status = statusCode
    this.success = statusCode >= 200 && statusCode < 300
    // A 2xx is delivered as soon as it is known; its body is only read (to reuse the connection), not kept.
    if (this.success) this.finish({ _tag: "Response", status: statusCode, bodyExcerpt: "" })
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (!this.success) (this.chunks ??= []).push(chunk)
    this.size += chunk.length
    // Past what the log keeps nothing more is read: the connection is dropped rather than drained.
    if (this.size >= Webhooks.RESPONSE_EXCERPT_BYTES) {
      this.settle()
      this.cancelled = true
      controller.abort(new Error("webhook answer cut"))
    }
  }

  onResponseEnd() {
    this.settle()
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error) {
    clearTimeout(this.timer)
    this.finish(
      this.status === undefined ? { _tag: "NetworkError", message: describeNetworkError(error) } : this.answer()
    )
  }

  /** The answer so far: once the status is known, a cut body still reports it with what was read. */
  private answer(): Webhooks.TransportResult {
    return this.status === undefined
      ? { _tag: "TimedOut" }
      : {
        _tag: "Response",
        status: this.status,
        bodyExcerpt: this.chunks === undefined
          ? ""
          : Buffer.concat(this.chunks).subarray(0, Webhooks.RESPONSE_EXCERPT_BYTES).toString("utf8")
      }
  }

  private settle() {
    clearTimeout(this.timer)
    this.finish(this.answer())
  }

  private finish(result: Webhooks.TransportResult) {
    if (this.finished) return
    this.finished = true
    this.done(result)
  }
}

/** Every address of a name, as the operating system resolves it; a lookup slower than 5 s counts as a failure. */
export const NodeHostResolver: Layer.Layer<Webhooks.HostResolver> = Layer.succeed(
  Webhooks.HostResolver,
  Webhooks.HostResolver.of({
    resolve: (hostname) =>
      Effect.tryPromise({
        try: () => lookup(hostname, { all: true, verbatim: true }),
        catch: () => new Webhooks.HostNotResolved({ hostname })
      }).pipe(
        Effect.map((addresses) => addresses.map((a) => a.address)),
        Effect.timeoutOrElse({
          duration: "5 seconds",
          orElse: () => Effect.fail(new Webhooks.HostNotResolved({ hostname }))
        })
      )
  })
)
