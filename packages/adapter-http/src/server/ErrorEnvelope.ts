/**
 * The outermost HTTP middleware. Whatever escapes the API's own typed errors is answered in the envelope of
 * DECISIONS §1 here: unknown routes (404), a known path with the wrong method (405 with `Allow`), unreadable or
 * oversized bodies (400/413), and defects (500 INTERNAL, logged with the request id the body repeats). It also
 * stamps every response with `x-request-id` and writes the access log line.
 *
 * Effect's HTTP server sends the response before a router middleware sees the outcome, so the rewriting happens in
 * a pre-response handler, which runs on every response just before it is written. Responses the framework makes
 * from its own errors are recognisable: they have no body, while every response of this API has one.
 */
import { errorWire } from "@feedback/core"
import { ByteSize, Cause, Effect } from "effect"
import { HttpEffect, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomBytes } from "node:crypto"
import type { RouteTable } from "./RouteTable.ts"

const processTag = randomBytes(4).toString("hex")
let counter = 0
/** Unique per process and cheap: a random process tag and a counter. */
const nextRequestId = () => `req_${processTag}${(counter++).toString(36)}`

const envelope = (status: number, code: string, message: string, details?: object, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe(
    { error: { code, message, ...(details === undefined ? {} : { details }) } },
    { status, ...(headers === undefined ? {} : { headers }) }
  )

/** Body limits of DECISIONS §1: 1 MiB, and 32 MiB for bulk imports. */
export const DEFAULT_BODY_LIMIT = ByteSize.mebibytes(1)
export const IMPORT_BODY_LIMIT = ByteSize.mebibytes(32)
const isImport = (url: string) => {
  const q = url.indexOf("?")
  return (q === -1 ? url : url.slice(0, q)).endsWith("/import")
}

export interface EnvelopeOptions {
  readonly routes: RouteTable
  readonly log: (line: string) => void
  readonly logRequests: boolean
}

/** The envelope for a body-less response the framework produced from its own error. */
const rewrite = (routes: RouteTable, request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse, requestId: string) => {
  if (response.body._tag !== "Empty" || response.status < 400) return response
  switch (response.status) {
    case 404: {
      const path = new URL(request.url, "http://x").pathname
      const allowed = routes.methodsFor(path)
      return allowed.length > 0
        ? envelope(405, "METHOD_NOT_ALLOWED", `${request.method} is not supported on ${path}; use ${allowed.join(" or ")}.`, undefined, { allow: allowed.join(", ") })
        : envelope(404, errorWire.NotFound.code, `No route ${request.method} ${path}; see /docs for the API reference.`, { resource: "route" })
    }
    case 400:
      return envelope(400, errorWire.InvalidRequest.code, "The request could not be read; send a JSON body with `Content-Type: application/json`.", { issues: [{ path: "body", message: "unreadable body" }] })
    case 413:
      return envelope(413, errorWire.PayloadTooLarge.code, "The request body is larger than this endpoint accepts.")
    default:
      return envelope(500, errorWire.Internal.code, "Something went wrong on our side; retry later, and quote the request id if it persists.", { requestId })
  }
}

export const errorEnvelope = (options: EnvelopeOptions) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const requestId = nextRequestId()
    const started = performance.now()
    let status = 0
    const onResponse: HttpEffect.PreResponseHandler = (req, response) => {
      const final = HttpServerResponse.setHeader(rewrite(options.routes, req, response, requestId), "x-request-id", requestId)
      status = final.status
      if (options.logRequests) {
        options.log(`{"requestId":"${requestId}","method":"${req.method}","url":${JSON.stringify(req.url)},"status":${final.status},"ms":${(performance.now() - started).toFixed(1)}}`)
      }
      return Effect.succeed(final)
    }
    return HttpEffect.withPreResponseHandler(app, onResponse).pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, isImport(request.url) ? IMPORT_BODY_LIMIT : DEFAULT_BODY_LIMIT),
      Effect.tapCause((cause) =>
        status >= 500
          ? Effect.sync(() => options.log(JSON.stringify({ level: "error", requestId, method: request.method, url: request.url, cause: Cause.pretty(cause) })))
          : Effect.void)
    )
  })
