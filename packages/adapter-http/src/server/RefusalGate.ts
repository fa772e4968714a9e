/**
 * The refusal gate (docs/DECISIONS.md §31): a request this process already knows it must refuse with a 429 is
 * answered from Node's request event, before the Effect HTTP stack is entered at all. A flood of refused requests is
 * what the limiter exists to absorb, and through the stack a 429 cost most of what an admitted request costs.
 *
 * It answers only when everything the full path would do is known without I/O, and then gives the same answer:
 * - a bodiless request with a `Host`, a plain path (no encoding, empty segment or trailing slash) and a method the
 *   route table serves with the secret-key security (every other request, and every doubt, goes the full path);
 * - a well-formed bearer key that `Organizations` keeps (known, not revoked, under the current `CredentialChanges`
 *   version: a revocation or plan change is heard at once, as for the full path);
 * - a refusal the rate-limit store can tell without I/O (`RateLimitRepository.refusalAt`: an in-process store's own
 *   levels, or `LocalRefusals`' bound), which is exactly what its `spend` would answer, and changes nothing.
 * The 429 has the full path's bytes (`refusedResponse`), request id, access-log line and metrics.
 */
import { Organizations, RateLimits } from "@feedback/core"
import { Effect, Layer, type Context } from "effect"
import { HttpApi } from "effect/http-api"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { AdminApi, SecretKeyAuth } from "@feedback/client/effect"
import { accessLogFields, accessLogMessage, pathOf } from "./ErrorEnvelope.ts"
import { formatLogLine, type LogSink } from "./observability/JsonLogger.ts"
import { recordRequestUnsafe } from "./observability/HttpMetrics.ts"
import { requestIdOf } from "./RequestIds.ts"
import type { RouteTable } from "./RouteTable.ts"
import { rateLimitHeaders, refusalBody } from "./SecretKeyAuthLive.ts"

export interface RefusalGate {
  /** Writes the 429 of `req` and returns true when its refusal is known; returns false, having done nothing, else. */
  readonly refuse: (req: IncomingMessage, res: ServerResponse) => boolean
}

/** Where a server finds the gate once the services it needs are built (and loses it when they are released). */
export interface RefusalGateSlot {
  current: RefusalGate | undefined
}

export interface RefusalGateOptions {
  readonly routes: RouteTable
  readonly logRequests: boolean
  readonly metrics: boolean
  readonly log: LogSink
}

// Unreserved characters only: what the router and the route table read alike, with no decoding in between.
const PLAIN_PATH = /^(?:\/[A-Za-z0-9._~-]+)+$/
const BEARER = "Bearer "

/** `METHOD /pattern` of every admin endpoint behind the secret key, with its rate-limit key and cost. */
const chargedRoutes = (): ReadonlyMap<string, { readonly key: string; readonly cost: number }> => {
  const routes = new Map<string, { key: string; cost: number }>()
  HttpApi.reflect(AdminApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if (!middleware.has(SecretKeyAuth as never)) return
      const key = RateLimits.endpointKey(endpoint.method, endpoint.path)
      routes.set(`${endpoint.method} ${endpoint.path}`, { key, cost: RateLimits.costOfKey(key) })
    }
  })
  return routes
}

/** The gate over the process's `Organizations` and `RateLimitRepository`; `undefined` when the store cannot tell. */
const makeRefusalGate = (
  options: RefusalGateOptions
): Effect.Effect<RefusalGate | undefined, never, Organizations.Organizations | RateLimits.RateLimitRepository> =>
  Effect.gen(function*() {
    const organizations = yield* Organizations.Organizations
    const { refusalAt } = yield* RateLimits.RateLimitRepository
    if (refusalAt === undefined) return undefined
    // Metrics are recorded into the registry the request fibers use (the default one unless a host provides its own).
    const context: Context.Context<never> = yield* Effect.context<never>()
    const charged = chargedRoutes()
    const refuse = (req: IncomingMessage, res: ServerResponse): boolean => {
      const started = performance.now()
      const { headers, method } = req
      const authorization = headers.authorization
      if (
        method === undefined || authorization === undefined || !authorization.startsWith(BEARER) ||
        headers.host === undefined || headers["content-length"] !== undefined ||
        headers["transfer-encoding"] !== undefined
      ) return false
      const url = req.url ?? ""
      const path = pathOf(url)
      if (!PLAIN_PATH.test(path)) return false
      const route = options.routes.routeOf(method, path)
      const facts = route === undefined ? undefined : charged.get(`${method} ${route}`)
      if (facts === undefined) return false
      const nowMs = Date.now()
      const authenticated = organizations.keptAuthentication(authorization.slice(BEARER.length), nowMs)
      if (authenticated === undefined) return false
      const { organization } = authenticated
      const decision = refusalAt(
        organization.id,
        RateLimits.bucketsForKey(facts.key, organization.plan),
        facts.cost,
        nowMs
      )
      if (decision === undefined) return false

      const requestId = requestIdOf(headers["x-request-id"])
      const body = refusalBody(decision)
      res.writeHead(429, {
        ...rateLimitHeaders(decision),
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "x-request-id": requestId
      })
      res.end(body)
      RateLimits.recordRateLimitDecisionUnsafe(decision, context)
      const elapsedMs = performance.now() - started
      if (options.metrics) recordRequestUnsafe(context, method, route, 429, elapsedMs / 1000)
      if (options.logRequests) {
        const fields = accessLogFields(requestId, method, url, route, 429, elapsedMs)
        options.log(formatLogLine("info", accessLogMessage(fields), fields))
      }
      return true
    }
    return { refuse }
  })

/** Fills `slot` with the gate while the layer's scope is open. */
export const refusalGateLayer = (
  slot: RefusalGateSlot,
  options: RefusalGateOptions
): Layer.Layer<never, never, Organizations.Organizations | RateLimits.RateLimitRepository> =>
  Layer.effectDiscard(Effect.acquireRelease(
    Effect.map(makeRefusalGate(options), (gate) => {
      slot.current = gate
    }),
    () =>
      Effect.sync(() => {
        slot.current = undefined
      })
  ))

/**
 * Puts the gate in front of every other `request` listener of `server` (the framework's included): an answered
 * request is not emitted to them. Node emits `request` through `emit`, and listeners cannot stop one another.
 */
export const gateRequests = (server: Server, slot: RefusalGateSlot): void => {
  const emit = server.emit as (this: Server, event: string | symbol, ...args: Array<unknown>) => boolean
  server.emit = function(this: Server, event: string | symbol, ...args: Array<unknown>) {
    if (event === "request" && slot.current?.refuse(args[0] as IncomingMessage, args[1] as ServerResponse) === true) {
      return true
    }
    return emit.call(this, event, ...args)
  } as Server["emit"]
}
