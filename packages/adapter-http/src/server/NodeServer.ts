/**
 * The standalone server's `node:http` server, with the limits a public endpoint needs (docs/SECURITY.md): how long
 * a client may take to send its headers and its whole request, how long an idle keep-alive connection is kept, and
 * how many connections are open at once. Node's defaults (5 minutes per request, 1 minute for headers, no
 * connection cap) let a few slow clients hold the process's sockets for minutes.
 *
 * Node has one request timeout per server, but a 32 MiB import needs far longer than an ordinary call: Node's own
 * timeout is the import allowance, and a per-request deadline holds every other request to the shorter one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { isImport, rawErrorResponse } from "./ErrorEnvelope.ts"
import { formatLogLine } from "./observability/JsonLogger.ts"
import { gateRequests, type RefusalGateSlot } from "./RefusalGate.ts"

export interface ServerLimits {
  /** Receiving a whole request, headers and body (`REQUEST_TIMEOUT_MS`). */
  readonly requestTimeoutMs: number
  /** The same for bulk imports (paths ending in `/import`, bodies up to 32 MiB) (`IMPORT_REQUEST_TIMEOUT_MS`). */
  readonly importRequestTimeoutMs: number
  /** Receiving the request line and headers (`HEADERS_TIMEOUT_MS`); at most the request timeout. */
  readonly headersTimeoutMs: number
  /** An idle keep-alive connection is closed after this (`KEEP_ALIVE_TIMEOUT_MS`). */
  readonly keepAliveTimeoutMs: number
  /** Connections over this are closed as they arrive (`MAX_CONNECTIONS`). */
  readonly maxConnections: number
  /**
   * Connections from one address over this are closed as they arrive (`MAX_CONNECTIONS_PER_ADDRESS`), so clients
   * of one address that hold sockets with slow headers cannot take the whole connection cap (docs/FAIRNESS.md).
   * Behind a proxy every client has the proxy's address: set it to `maxConnections` there.
   */
  readonly maxConnectionsPerAddress: number
}

/**
 * 30 s for a request; 5 minutes for an import (32 MiB at about 1 Mbit/s); 10 s for headers, which a real client
 * sends in one packet; Node's 5 s keep-alive; 1,000 connections, far above what one process serves well, and a
 * tenth of them per address (a browser opens six; a busy integration a few dozen).
 */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  requestTimeoutMs: 30_000,
  importRequestTimeoutMs: 300_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  maxConnectionsPerAddress: 100
}

/** Why the limits cannot be used, or undefined when they can. */
export const checkServerLimits = (limits: ServerLimits): string | undefined => {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) return `${name} must be a positive whole number (got ${value})`
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) return "HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS"
  return undefined
}

/**
 * Closes a connection as it arrives when its address already has `max` open, before a byte of it is parsed. The
 * count is per process, by the socket's remote address (an IPv4 client seen as `::ffff:a.b.c.d` is the same key).
 */
const limitPerAddress = (server: Server, max: number) => {
  const open = new Map<string, number>()
  server.on("connection", (socket: Duplex & { remoteAddress?: string | undefined }) => {
    const address = socket.remoteAddress
    if (address === undefined) return
    const n = open.get(address) ?? 0
    if (n >= max) {
      socket.destroy()
      return
    }
    open.set(address, n + 1)
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

const requestTimeout = Object.assign(new Error("request timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" })

/**
 * A `createServer` for `NodeHttpServer.layer` with the limits applied; refused requests are logged through `log` as
 * lines of the server's one format (there is no Effect request yet to log them with). With `gate`, requests whose
 * 429 is known are answered before the framework sees them (`RefusalGate.ts`).
 */
export const hardenedServer =
  (limits: ServerLimits, log: (line: string) => void, gate?: RefusalGateSlot) => (): Server => {
    const server = createServer({
      requestTimeout: Math.max(limits.requestTimeoutMs, limits.importRequestTimeoutMs),
      headersTimeout: limits.headersTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node refuses a missing Host with a body-less 400; the error envelope answers it instead.
      requireHostHeader: false,
      // Node checks the timeouts on this interval (30 s by default), which would stretch a 10 s limit to 40 s.
      connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(limits.headersTimeoutMs / 10)))
    })
    server.maxConnections = limits.maxConnections
    limitPerAddress(server, limits.maxConnectionsPerAddress)

    // Node's own answer to what its parser refuses is a body-less 400/408/431; answer in the envelope instead. Only
    // while nothing of a response is on the wire: bytes after a started response would corrupt it.
    const onClientError = (error: Error & { code?: string }, socket: Duplex) => {
      const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
      if (error.code !== "ECONNRESET" && socket.writable && (inFlight == null || !inFlight.headersSent)) {
        const response = rawErrorResponse(error.code)
        socket.end(response.bytes)
        log(
          formatLogLine("info", `request refused by the HTTP parser: ${response.status}`, {
            requestId: response.requestId,
            status: response.status,
            clientError: error.code ?? "unknown"
          })
        )
      }
      socket.destroy()
    }
    server.on("clientError", onClientError)
    // Any `Expect` but `100-continue`: Node's answer is a body-less 417.
    server.on("checkExpectation", (_request: IncomingMessage, response: ServerResponse) => {
      const refused = rawErrorResponse("EXPECTATION_FAILED")
      response.writeHead(refused.status, { ...refused.headers, connection: "close" }).end(refused.body)
      log(
        formatLogLine("info", `request refused: ${refused.status}`, {
          requestId: refused.requestId,
          status: refused.status,
          clientError: "EXPECTATION_FAILED"
        })
      )
    })

    // The shorter deadline for every request but imports; Node's own timeout (the longer one) backs both.
    const importAllowance = Math.max(limits.requestTimeoutMs, limits.importRequestTimeoutMs)
    const guard = (request: IncomingMessage, response: ServerResponse) => {
      // A request without a body is whole once its headers are (the headers timeout covered those): no timer.
      if (
        request.complete ||
        (request.headers["content-length"] === undefined && request.headers["transfer-encoding"] === undefined)
      ) return
      const deadline = isImport(request.url ?? "") ? importAllowance : limits.requestTimeoutMs
      if (deadline >= importAllowance) return
      const timer = setTimeout(() => {
        if (request.complete) return
        // Answered already (e.g. a 401 before the body was read) and still receiving the body: just hang up.
        if (response.headersSent) request.socket.destroy()
        else onClientError(requestTimeout, request.socket)
      }, deadline)
      timer.unref()
      const clear = () => clearTimeout(timer)
      request.once("end", clear)
      request.once("close", clear)
    }
    server.on("request", guard)
    server.on("checkContinue", guard)
    if (gate !== undefined) gateRequests(server, gate)
    return server
  }
