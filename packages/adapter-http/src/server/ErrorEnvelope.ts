/**
 * The outermost HTTP middleware. Whatever escapes the API's own typed errors is answered in the envelope of
 * docs/DECISIONS.md §1 here: unknown routes (404), a known path with the wrong method (405 with `Allow`), undecodable paths,
 * unreadable or oversized bodies (400/413), bodies that are not JSON (415), and defects (500 INTERNAL, logged with
 * the request id the body repeats). It also stamps every response with `x-request-id` and writes the access log line.
 *
 * Effect's HTTP server sends the response before a router middleware sees the outcome, so the rewriting happens in
 * a pre-response handler, which runs on every response just before it is written. Responses the framework makes
 * from its own errors are recognisable: they have no body or a plain-text one, while every error of this API is JSON.
 * What Node's HTTP parser refuses before any request exists (malformed HTTP, oversized headers, timeouts) is
 * answered on the socket by `rawErrorResponse`.
 */
import { withAnswerHeaders } from "./AnswerHeaders.ts"
import { Kernel } from "@feedback/core"
import { ByteSize, Context, Effect, References, Tracer } from "effect"
import { HttpEffect, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { nextRequestId, requestIdOf } from "./RequestIds.ts"
import { recordRequestUnsafe } from "./observability/HttpMetrics.ts"
import { logInfoAnnotated } from "./observability/JsonLogger.ts"
import type { RouteTable } from "./RouteTable.ts"

const envelope = (status: number, code: string, message: string, details?: object, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe(
    { error: { code, message, ...(details === undefined ? {} : { details }) } },
    { status, ...(headers === undefined ? {} : { headers }) }
  )

/** Body limits of docs/DECISIONS.md §1: 1 MiB, and 32 MiB for bulk imports. */
const DEFAULT_BODY_LIMIT = ByteSize.mebibytes(1)
const IMPORT_BODY_LIMIT = ByteSize.mebibytes(32)
/**
 * Import jobs count their own bytes and refuse past 64 MiB with a message naming the limit (docs/DECISIONS.md §20);
 * the framework's cap sits just above it, as a backstop.
 */
const IMPORT_JOB_BODY_LIMIT = ByteSize.mebibytes(65)
export const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}
const isImportJob = (url: string) => pathOf(url) === "/import-jobs"
/** A bulk import, synchronous or queued: a larger body and a longer request allowance. */
export const isImport = (url: string) => pathOf(url).endsWith("/import") || isImportJob(url)
const bodyLimitOf = (url: string) =>
  isImportJob(url) ? IMPORT_JOB_BODY_LIMIT : isImport(url) ? IMPORT_BODY_LIMIT : DEFAULT_BODY_LIMIT

export interface EnvelopeOptions {
  readonly routes: RouteTable
  /** One access-log line per request through Effect's logger (docs/OPERATIONS.md); off: no log work at all. */
  readonly logRequests: boolean
  /** Request counts and latencies (`/metrics`, OTLP). */
  readonly metrics: boolean
}

/** The one body media type of this API; anything else on a body is a 415 that says so. */
const ACCEPTED_MEDIA_TYPE = "application/json"

const invalidRequest = (message: string, path: string, issue: string) =>
  envelope(400, Kernel.errorWire.InvalidRequest.code, message, { issues: [{ path, message: issue }] })

const unsupportedMediaType = (contentType: string | undefined) => {
  const mediaType = (contentType ?? "").split(";")[0]!.trim().slice(0, 100)
  return envelope(
    415,
    Kernel.errorWire.UnsupportedMediaType.code,
    `Send the body as JSON with \`Content-Type: ${ACCEPTED_MEDIA_TYPE}\`${
      mediaType === "" ? "" : `, not ${JSON.stringify(mediaType)}`
    }.`,
    { accepted: [ACCEPTED_MEDIA_TYPE] }
  )
}

const IMPORT_JOB_MEDIA_TYPES = ["text/csv", "application/x-ndjson"]
const unsupportedImportMediaType = (contentType: string | undefined) => {
  const mediaType = (contentType ?? "").split(";")[0]!.trim().slice(0, 100)
  return envelope(
    415,
    Kernel.errorWire.UnsupportedMediaType.code,
    `Send the import file as \`text/csv\` or \`application/x-ndjson\`${
      mediaType === "" ? "" : `, not ${JSON.stringify(mediaType)}`
    }.`,
    { accepted: IMPORT_JOB_MEDIA_TYPES }
  )
}

const isPercentEncoded = (path: string) => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/**
 * A response the framework made from its own error rather than one of this API's: every error of the API is JSON,
 * while the framework's are body-less (404, 400, 413) or plain text (415 "Unsupported content-type").
 */
const isFrameworkError = (response: HttpServerResponse.HttpServerResponse) =>
  response.status >= 400 &&
  (response.body._tag === "Empty" || !isOwnErrorType(response.body.contentType ?? ""))

/** JSON, or HTML: the pages for people (`/u/{token}`) answer their 404 as a page; the framework never makes HTML. */
const isOwnErrorType = (contentType: string) =>
  contentType.startsWith(ACCEPTED_MEDIA_TYPE) || contentType.startsWith("text/html")

/** The envelope for a response the framework produced from its own error. */
const rewrite = (
  routes: RouteTable,
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse,
  requestId: string
) => {
  if (!isFrameworkError(response)) return response
  switch (response.status) {
    case 404: {
      const path = new URL(request.url, "http://x").pathname
      // The router finds no route for a path it cannot decode; that is the client's encoding, not a missing route.
      if (!isPercentEncoded(path)) {
        return invalidRequest(
          "The path is not valid percent-encoding (e.g. `%zz`); encode reserved characters as `%XX`.",
          "path",
          "invalid percent-encoding"
        )
      }
      const allowed = routes.methodsFor(path)
      return allowed.length > 0 && !allowed.includes(request.method)
        ? envelope(
          405,
          "METHOD_NOT_ALLOWED",
          `${request.method} is not supported on ${path}; use ${allowed.join(" or ")}.`,
          undefined,
          { allow: allowed.join(", ") }
        )
        : envelope(
          404,
          Kernel.errorWire.NotFound.code,
          `No route ${request.method} ${path}; see /docs for the API reference.`,
          { resource: "route" }
        )
    }
    case 400:
      return invalidRequest(
        "The request could not be read; send a JSON body with `Content-Type: application/json`.",
        "body",
        "unreadable body"
      )
    case 413:
      // The unread rest of the body is not worth draining: keep the framework's `Connection: close`.
      return HttpServerResponse.setHeaders(
        envelope(413, Kernel.errorWire.PayloadTooLarge.code, "The request body is larger than this endpoint accepts."),
        response.headers["connection"] === undefined ? {} : { connection: response.headers["connection"] }
      )
    case 415:
      return isImportJob(request.url)
        ? unsupportedImportMediaType(request.headers["content-type"])
        : unsupportedMediaType(request.headers["content-type"])
    // Effect's answers to an interrupted request: the client went away (nobody reads this, but the log does), or
    // the server is stopping. Neither is a defect.
    case 499:
      return envelope(499, "CLIENT_CLOSED_REQUEST", "The client closed the connection before the response was ready.")
    case 503:
      return envelope(503, "SERVICE_UNAVAILABLE", "The server is shutting down; retry the request.", undefined, {
        "retry-after": "1"
      })
    default:
      // Any other 4xx the framework may add keeps its status: it is the client's to fix, never a 500.
      return response.status < 500
        ? envelope(
          response.status,
          Kernel.errorWire.InvalidRequest.code,
          "The request could not be handled as sent; see /docs for the API reference."
        )
        : envelope(
          500,
          Kernel.errorWire.Internal.code,
          "Something went wrong on our side; retry later, and quote the request id if it persists.",
          { requestId }
        )
  }
}

/**
 * A request refused before any route runs: a body declared larger than its route's limit (answered before a byte of
 * it is read, and the connection closed so the rest is never taken in), a GET or HEAD that carries a body the API
 * would silently ignore, and an HTTP/1.1 request without `Host` (the standalone server lets those through Node, whose
 * own answer has no body).
 * A body on a path with no route for the method changes nothing: the router's 404 or 405 answers it, as it would
 * the same request without a body.
 */
const refuseEarly = (routes: RouteTable, request: HttpServerRequest.HttpServerRequest) => {
  if (
    request.headers.host === undefined && (request.source as { readonly httpVersion?: unknown }).httpVersion === "1.1"
  ) {
    return invalidRequest("HTTP/1.1 requests must carry a `Host` header.", "headers.host", "missing")
  }
  const length = request.headers["content-length"]
  // Node's parser has already refused a Content-Length that is not a number; six digits are under every limit.
  if (length !== undefined && length.length > 6) {
    const limit = Number(bodyLimitOf(request.url))
    if (Number(length) > limit) {
      return envelope(
        413,
        Kernel.errorWire.PayloadTooLarge.code,
        `The request body is larger than this endpoint accepts (${limit} bytes).`,
        { limitBytes: limit },
        { connection: "close" }
      )
    }
  }
  if (request.method !== "GET" && request.method !== "HEAD") return undefined
  const hasBody = request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0")
  return hasBody && routes.methodsFor(pathOf(request.url)).includes("GET")
    ? invalidRequest(
      `${request.method} requests take no body; pass parameters in the query string.`,
      "body",
      "unexpected body"
    )
    : undefined
}

const MAX_LOGGED_PATH = 256
const loggableName = /^[A-Za-z0-9_.[\]-]{1,32}$/

/** Paths whose segment after the prefix is a credential (an unsubscribe or survey link's token): logged as `…`. */
const tokenPath = /^(\/u\/|\/r\/|\/storefront\/surveys\/)[^/?]+/
const hideTokens = (path: string) => path.replace(tokenPath, "$1…")
/** Whether a request URL carries such a credential: such requests record no server span (its URL attributes). */
export const hasTokenPath = (url: string): boolean => tokenPath.test(url)

/**
 * What the logs say of a URL: the path (truncated) and the query parameter names, never their values, which carry
 * search terms, filters and whatever a client pasted there (docs/SECURITY.md). A name that is not a plausible
 * parameter name (too long for one, or odd characters: maybe a pasted key) is written as `…`.
 */
export const loggedUrl = (url: string): string => {
  const q = url.indexOf("?")
  const path = hideTokens(q === -1 ? url : url.slice(0, q))
  const shown = path.length > MAX_LOGGED_PATH ? path.slice(0, MAX_LOGGED_PATH) + "…" : path
  if (q === -1) return shown
  const names = new Set<string>()
  for (const pair of url.slice(q + 1).split("&")) {
    const eq = pair.indexOf("=")
    const name = eq === -1 ? pair : pair.slice(0, eq)
    if (name !== "") names.add(loggableName.test(name) ? name : "…")
    if (names.size >= 20) break
  }
  return names.size === 0 ? shown : `${shown}?${[...names].join("&")}`
}

/** The fields of a request's access-log line (docs/OPERATIONS.md), wherever the request was answered. */
export const accessLogFields = (
  requestId: string,
  method: string,
  url: string,
  route: string | undefined,
  status: number,
  elapsedMs: number
) => ({ requestId, method, path: loggedUrl(url), route, status, ms: Math.round(elapsedMs * 10) / 10 })

export const accessLogMessage = (fields: ReturnType<typeof accessLogFields>) =>
  `${fields.method} ${fields.path} ${fields.status}`

export const errorEnvelope = (options: EnvelopeOptions) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiber((fiber) => {
    // Everything below runs on every request, so it is done in place rather than as effects of its own: the
    // pre-response handler registered directly, metrics recorded directly, one context update for the body limit
    // and the log annotation (docs/DECISIONS.md §42).
    const context = fiber.context as Context.Context<never>
    const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
    const requestId = requestIdOf(request.headers["x-request-id"])
    const started = performance.now()
    // The server span (Effect's HTTP tracer, present only when a tracer exports spans) carries the request id.
    const span = Context.getOrUndefined(context, Tracer.ParentSpan)
    if (span !== undefined && span._tag === "Span" && span.sampled) span.attribute("http.request.id", requestId)
    let status = 0
    HttpEffect.appendPreResponseHandlerUnsafe(context, (req, response) => {
      const final = HttpServerResponse.setHeader(
        withAnswerHeaders(options.routes, req, rewrite(options.routes, req, response, requestId), pathOf(req.url)),
        "x-request-id",
        requestId
      )
      status = final.status
      const method = req.method
      const route = options.metrics || options.logRequests ? options.routes.routeOf(method, pathOf(req.url)) : undefined
      const elapsedMs = performance.now() - started
      if (options.metrics) recordRequestUnsafe(context, method, route, final.status, elapsedMs / 1000)
      if (!options.logRequests) return Effect.succeed(final)
      const fields = accessLogFields(requestId, method, req.url, route, final.status, elapsedMs)
      return Effect.as(logInfoAnnotated(accessLogMessage(fields), fields), final)
    })
    const early = refuseEarly(options.routes, request)
    return (early === undefined ? app : Effect.succeed(early)).pipe(
      Effect.tapCause((cause) =>
        status >= 500
          ? Effect.logError("request failed", cause).pipe(
            Effect.annotateLogs({ method: request.method, path: loggedUrl(request.url), status })
          )
          : Effect.void
      ),
      // Every line logged while the request runs names it.
      Effect.updateContext((current: Context.Context<R>) =>
        Context.add(
          Context.add(current, HttpIncomingMessage.MaxBodySize, bodyLimitOf(request.url)),
          References.CurrentLogAnnotations,
          { ...Context.get(current, References.CurrentLogAnnotations), requestId }
        ) as Context.Context<R>
      )
    )
  })

const reasons: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Payload Too Large",
  417: "Expectation Failed",
  431: "Request Header Fields Too Large"
}

/** What Node's HTTP parser reports (`clientError` codes), as the status, code and message a client sees. */
const clientErrorOf = (nodeCode: string | undefined): { status: number; code: string; message: string } => {
  switch (nodeCode) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        code: "REQUEST_TIMEOUT",
        message: "The request was not received in time; send the headers and body without pausing."
      }
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        code: "HEADERS_TOO_LARGE",
        message: "The request line and headers are too large; shorten the URL or the headers."
      }
    case "EXPECTATION_FAILED":
      return {
        status: 417,
        code: "EXPECTATION_FAILED",
        message: "Only `Expect: 100-continue` is supported; drop the Expect header."
      }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return {
        status: 413,
        code: Kernel.errorWire.PayloadTooLarge.code,
        message: "The chunk extensions of the request body are too large."
      }
    default:
      return {
        status: 400,
        code: Kernel.errorWire.InvalidRequest.code,
        message:
          "The request is not valid HTTP/1.1; check the method, the request line, the headers and the body framing."
      }
  }
}

/**
 * A complete HTTP/1.1 response, in the envelope, for a request Node's parser refused (its `clientError`): there is
 * no request object then, so it is written to the socket as bytes, and the connection closes after it.
 */
export const rawErrorResponse = (nodeCode: string | undefined) => {
  const { code, message, status } = clientErrorOf(nodeCode)
  const requestId = nextRequestId()
  const body = JSON.stringify({ error: { code, message } })
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-request-id": requestId
  }
  const head = Object.entries({ ...headers, connection: "close" }).map(([name, value]) => `${name}: ${value}\r\n`).join(
    ""
  )
  return { status, requestId, headers, body, bytes: `HTTP/1.1 ${status} ${reasons[status]}\r\n${head}\r\n${body}` }
}
