/**
 * The HTTP client and DNS of webhook delivery, on node:http/https and node:dns.
 *
 * - Connects to the address the core checked (a `lookup` that answers only that address), so DNS cannot change
 *   between the SSRF check and the connection; the URL's host name still drives the `Host` header, TLS SNI and
 *   certificate verification.
 * - Never follows redirects (node's client does not), enforces one deadline for the whole exchange (body included),
 *   reads at most `RESPONSE_EXCERPT_BYTES` of any body and then drops the connection, so a receiver that answers
 *   with an endless body holds neither the delivery nor a socket; reports every failure as a value.
 * - Keep-alive agents, owned by the layer and destroyed with it.
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
import * as http from "node:http"
import * as https from "node:https"
import { isIPv6 } from "node:net"

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
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
  }
  return String(error)
}

export const NodeWebhookTransport: Layer.Layer<WebhookTransport> = Layer.effect(
  WebhookTransport,
  Effect.gen(function*() {
    const agents = yield* Effect.acquireRelease(
      Effect.sync(() => ({
        http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
        https: new https.Agent({ keepAlive: true, maxSockets: 64 })
      })),
      (a) => Effect.sync(() => {
        a.http.destroy()
        a.https.destroy()
      })
    )
    return WebhookTransport.of({
      post: (request) =>
        Effect.callback<TransportResult>((resume) => {
          const secure = request.url.protocol === "https:"
          const body = Buffer.from(request.body, "utf8")
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
          // One deadline for the whole exchange, body included: an endless or stalled body is cut when it passes.
          const timer = setTimeout(() => {
            finish(answer())
            req.destroy()
          }, request.timeoutMs)
          const settle = () => {
            clearTimeout(timer)
            finish(answer())
          }
          const options: http.RequestOptions = {
            method: "POST",
            headers: { ...request.headers, "content-length": String(body.length) },
            agent: secure ? agents.https : agents.http,
            ...(request.address === undefined ? {} : { lookup: pinnedLookup(request.address) as never })
          }
          const req = (secure ? https : http).request(request.url, options, (res) => {
            status = res.statusCode ?? 0
            const success = status >= 200 && status < 300
            // A 2xx is delivered as soon as it is known; its body is not kept, only read (to reuse the connection).
            if (success) finish({ _tag: "Response", status, bodyExcerpt: "" })
            res.on("data", (chunk: Buffer) => {
              if (!success) chunks.push(chunk)
              size += chunk.length
              // Past what the log keeps nothing more is read: the socket is dropped rather than drained.
              if (size >= RESPONSE_EXCERPT_BYTES) {
                settle()
                res.destroy()
              }
            })
            res.on("end", settle)
            res.on("error", settle)
            res.on("close", settle)
          })
          req.on("error", (error) => {
            clearTimeout(timer)
            finish({ _tag: "NetworkError", message: describeNetworkError(error) })
          })
          req.end(body)
          return Effect.sync(() => {
            clearTimeout(timer)
            req.destroy()
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
