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
 * A storefront read (docs/DECISIONS.md §55) qualifies the same way with its publishable key (header, or query when no
 * header), its key-and-address bucket and no `Origin` (an allowed origin's CORS headers need the store).
 * The 429 has the full path's bytes (`refusedResponse`), request id, access-log line and metrics. Node servers ask it
 * from the request event (`gateRequests`); an embedded web handler before its own stack (`refuseWeb`).
 * It also revalidates: a cacheable storefront read qualifying the same way, with an `If-None-Match`, is admitted here
 * (one spend) and answered 304 when the tag matches, else handed on spent (`storefront/RevalidationGate.ts`).
 */
import { Catalog, Organizations, RateLimits, Storefront } from "@feedback/core"
import { Context, Effect, Exit, Layer, References } from "effect"
import { HttpApi } from "effect/http-api"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { AdminApi, SecretKeyAuth, StorefrontAuth } from "@feedback/client/effect"
import { accessLogFields, accessLogMessage, pathOf } from "./ErrorEnvelope.ts"
import { formatLogLine, type LogSink } from "./observability/JsonLogger.ts"
import { recordRequestUnsafe } from "./observability/HttpMetrics.ts"
import { requestIdOf } from "./RequestIds.ts"
import type { RouteTable } from "./RouteTable.ts"
import { rateLimitHeaders, refusalBody } from "./SecretKeyAuthLive.ts"
import { clientAddressOf, parseTrustProxy } from "./storefront/ClientAddress.ts"
import { corsHeaders, keyInQuery } from "./storefront/StorefrontCors.ts"
import { handAdmission } from "./storefront/HandedAdmissions.ts"
import { namesATag } from "./storefront/HttpCaching.ts"
import { makeRevalidationGate, type Revalidation, type Settled } from "./storefront/RevalidationGate.ts"

export interface RefusalGate {
  /** Writes the 429 of `req` and returns true when its refusal is known; returns false, having done nothing, else. */
  readonly refuse: (req: IncomingMessage, res: ServerResponse) => boolean
  /** The 429 of a web request whose refusal is known; undefined, having done nothing, else. */
  readonly refuseWeb: (request: Request) => Response | undefined
  /**
   * Takes a storefront revalidation (returns true): writes its 304 when the tag matches, else calls `next` once the
   * request is admitted (spent, the admission handed on with `req`); returns false, having done nothing, else.
   */
  readonly revalidate: (req: IncomingMessage, res: ServerResponse, next: () => void) => boolean
  /** The web counterpart: the 304, or what `next` answers for the request handed on; undefined when not taken. */
  readonly revalidateWeb: (request: Request, next: () => Promise<Response>) => Promise<Response> | undefined
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
  /** `TRUST_PROXY`, as the storefront's admission reads it. */
  readonly trustProxy?: string | undefined
}

// Unreserved characters only: what the router and the route table read alike, with no decoding in between.
const PLAIN_PATH = /^(?:\/[A-Za-z0-9._~-]+)+$/
const BEARER = "Bearer "

/**
 * `METHOD /pattern` of every admin endpoint behind the secret key, with its rate-limit key and cost, and of every
 * storefront read (`storefront: true`: its bucket is the publishable key's for the client address, cost 1).
 */
const chargedRoutes = (): ReadonlyMap<
  string,
  { readonly key: string; readonly cost: number; readonly storefront: boolean }
> => {
  const routes = new Map<string, { key: string; cost: number; storefront: boolean }>()
  HttpApi.reflect(AdminApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if (middleware.has(StorefrontAuth as never) && endpoint.method === "GET") {
        routes.set(`GET ${endpoint.path}`, { key: "", cost: 1, storefront: true })
      }
      if (!middleware.has(SecretKeyAuth as never)) return
      const key = RateLimits.endpointKey(endpoint.method, endpoint.path)
      routes.set(`${endpoint.method} ${endpoint.path}`, { key, cost: RateLimits.costOfKey(key), storefront: false })
    }
  })
  return routes
}

/** What the gate reads of a request, from Node's or a web request alike. */
interface GateRequest {
  readonly method: string | undefined
  readonly url: string
  readonly header: (name: string) => string | undefined
  readonly peer: string | undefined
  /** Declares no body (Node: neither `Content-Length` nor `Transfer-Encoding`; web: no body stream). */
  readonly bodiless: boolean
}

const nodeView = (req: IncomingMessage): GateRequest => {
  const { headers } = req
  return {
    method: req.method,
    url: req.url ?? "",
    header: (name) => headers[name] as string | undefined,
    peer: req.socket.remoteAddress,
    bodiless: headers["content-length"] === undefined && headers["transfer-encoding"] === undefined
  }
}

const webView = (request: Request): GateRequest => {
  const at = request.url.indexOf("/", request.url.indexOf("//") + 2)
  return {
    method: request.method,
    url: at === -1 ? "/" : request.url.slice(at),
    header: (name) => name === "host" ? "web" : request.headers.get(name) ?? undefined,
    peer: undefined,
    bodiless: request.body === null && !request.headers.has("content-length")
  }
}

/** A known refusal, ready to write. */
interface Refusal {
  readonly route: string
  readonly requestId: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly decision: RateLimits.SpendRefused
}

/** The gate over the process's `Organizations` and `RateLimitRepository`; `undefined` when the store cannot tell. */
type GateServices = Organizations.Organizations | RateLimits.RateLimitRepository | Catalog.CatalogRepository

const makeRefusalGate = (
  options: RefusalGateOptions
): Effect.Effect<RefusalGate | undefined, never, GateServices> =>
  Effect.gen(function*() {
    const organizations = yield* Organizations.Organizations
    const { refusalAt } = yield* RateLimits.RateLimitRepository
    if (refusalAt === undefined) return undefined
    // Metrics are recorded into the registry the request fibers use (the default one unless a host provides its own).
    const context: Context.Context<never> = yield* Effect.context<never>()
    // A revalidation's spend runs untraced, as the requests of a gated server do (`untracedRequests`).
    const settleWith = Effect.runCallbackWith(Context.add(context, References.TracerEnabled, false))
    const revalidation = yield* makeRevalidationGate
    const charged = chargedRoutes()
    const trusted = parseTrustProxy(options.trustProxy ?? "")
    /** The route of a request the gate may answer: bodiless, with a `Host`, a plain path and a charged route. */
    const chargedRouteOf = (req: GateRequest) => {
      const { header, method, url } = req
      if (method === undefined || header("host") === undefined || !req.bodiless) return undefined
      const path = pathOf(url)
      if (!PLAIN_PATH.test(path)) return undefined
      const route = options.routes.routeOf(method, path)
      const facts = route === undefined ? undefined : charged.get(`${method} ${route}`)
      return facts === undefined || route === undefined ? undefined : { route, facts }
    }
    /** A storefront request's kept key and client address: no `Origin` (CORS needs the store), a key already kept. */
    const storefrontCallerOf = (req: GateRequest, nowMs: number, presented: string | undefined) => {
      if (req.header("origin") !== undefined || presented === undefined) return undefined
      const key = organizations.keptPublishableKey(presented, nowMs)
      return key === undefined
        ? undefined
        : { key, clientAddress: clientAddressOf(req.peer, req.header("x-forwarded-for"), trusted) }
    }
    const refusalOf = (req: GateRequest): Refusal | undefined => {
      const { header, url } = req
      const charge = chargedRouteOf(req)
      if (charge === undefined) return undefined
      const { facts, route } = charge
      const nowMs = Date.now()
      let decision: RateLimits.SpendRefused | undefined
      let policy: string | undefined
      if (facts.storefront) {
        const caller = storefrontCallerOf(req, nowMs, header("x-publishable-key") ?? keyInQuery(url))
        if (caller === undefined) return undefined
        const { clientAddress, key } = caller
        const bucket = Storefront.storefrontBucket("read", key.keyId, clientAddress, key.organization.plan)
        decision = refusalAt(key.organization.id, [bucket], facts.cost, nowMs)
        policy = Storefront.storefrontPolicyName("read")
      } else {
        const authorization = header("authorization")
        if (authorization === undefined || !authorization.startsWith(BEARER)) return undefined
        const authenticated = organizations.keptAuthentication(authorization.slice(BEARER.length), nowMs)
        if (authenticated === undefined) return undefined
        const { organization } = authenticated
        decision = refusalAt(
          organization.id,
          RateLimits.bucketsForKey(facts.key, organization.plan),
          facts.cost,
          nowMs
        )
      }
      if (decision === undefined) return undefined
      const body = refusalBody(decision)
      const requestId = requestIdOf(header("x-request-id"))
      return {
        route,
        requestId,
        body,
        decision,
        headers: {
          ...rateLimitHeaders(decision, policy),
          ...(facts.storefront ? corsHeaders(undefined) : {}),
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "x-request-id": requestId
        }
      }
    }
    const recorded = (
      method: string,
      url: string,
      answer: { readonly route: string; readonly requestId: string; readonly decision: RateLimits.SpendDecision },
      status: number,
      started: number
    ): void => {
      RateLimits.recordRateLimitDecisionUnsafe(answer.decision, context)
      const elapsedMs = performance.now() - started
      if (options.metrics) recordRequestUnsafe(context, method, answer.route, status, elapsedMs / 1000)
      if (options.logRequests) {
        const fields = accessLogFields(answer.requestId, method, url, answer.route, status, elapsedMs)
        options.log(formatLogLine("info", accessLogMessage(fields), fields))
      }
    }
    /** A storefront read with `If-None-Match` the gate may settle: its route and what to spend and compare. */
    const revalidationOf = (req: GateRequest): { route: string; revalidation: Revalidation } | undefined => {
      // Only a tag can match before the read (`*` reads first, docs/DECISIONS.md §70).
      const ifNoneMatch = req.header("if-none-match")
      if (ifNoneMatch === undefined || !namesATag(ifNoneMatch) || req.method !== "GET") return undefined
      const charge = chargedRouteOf(req)
      if (charge === undefined || !charge.facts.storefront) return undefined
      // A key in both places leaves the full path to choose which one counts.
      const inHeader = req.header("x-publishable-key")
      const inQuery = keyInQuery(req.url)
      if (inHeader !== undefined && inQuery !== undefined) return undefined
      const caller = storefrontCallerOf(req, Date.now(), inHeader ?? inQuery)
      if (caller === undefined) return undefined
      const found = revalidation.revalidationOf(req.url, ifNoneMatch, caller.key, caller.clientAddress)
      return found === undefined ? undefined : { route: charge.route, revalidation: found }
    }
    /** Settles a revalidation: `answer` with the 304's headers and request id, or `pass` on (spent, or not at all). */
    const settle = (
      req: GateRequest,
      taken: { route: string; revalidation: Revalidation },
      started: number,
      answer: (headers: Record<string, string>) => void,
      pass: (admission: Extract<Settled, { _tag: "Pass" }>["admission"]) => void
    ) => {
      settleWith(revalidation.settle(taken.revalidation), {
        onExit: (exit) => {
          // A spend that failed is the full path's to fail again and answer (nothing was handed on).
          if (Exit.isFailure(exit)) return pass(undefined)
          const settled = exit.value
          if (settled._tag === "Pass") return pass(settled.admission)
          const requestId = requestIdOf(req.header("x-request-id"))
          answer({ ...settled.headers, "x-request-id": requestId })
          recorded(req.method!, req.url, { route: taken.route, requestId, decision: settled.decision }, 304, started)
        }
      })
    }
    const refuse = (req: IncomingMessage, res: ServerResponse): boolean => {
      const started = performance.now()
      const view = nodeView(req)
      const refusal = refusalOf(view)
      if (refusal === undefined) return false
      res.writeHead(429, refusal.headers)
      res.end(refusal.body)
      recorded(req.method!, view.url, refusal, 429, started)
      return true
    }
    const refuseWeb = (request: Request): Response | undefined => {
      const started = performance.now()
      const view = webView(request)
      const refusal = refusalOf(view)
      if (refusal === undefined) return undefined
      recorded(request.method, view.url, refusal, 429, started)
      return new Response(refusal.body, { status: 429, headers: refusal.headers })
    }
    const revalidate = (req: IncomingMessage, res: ServerResponse, next: () => void): boolean => {
      const started = performance.now()
      const view = nodeView(req)
      const taken = revalidationOf(view)
      if (taken === undefined) return false
      settle(view, taken, started, (headers) => {
        res.writeHead(304, headers)
        res.end()
      }, (admission) => {
        if (admission !== undefined) handAdmission(req, admission)
        next()
      })
      return true
    }
    const revalidateWeb = (request: Request, next: () => Promise<Response>): Promise<Response> | undefined => {
      const started = performance.now()
      const view = webView(request)
      const taken = revalidationOf(view)
      if (taken === undefined) return undefined
      return new Promise<Response>((resolve, reject) =>
        settle(
          view,
          taken,
          started,
          (headers) => resolve(new Response(null, { status: 304, headers })),
          (admission) => {
            if (admission !== undefined) handAdmission(request, admission)
            next().then(resolve, reject)
          }
        )
      )
    }
    return { refuse, refuseWeb, revalidate, revalidateWeb }
  })

/** Fills `slot` with the gate while the layer's scope is open. */
export const refusalGateLayer = (
  slot: RefusalGateSlot,
  options: RefusalGateOptions
): Layer.Layer<never, never, GateServices> =>
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
    const gate = event === "request" ? slot.current : undefined
    if (gate !== undefined) {
      const req = args[0] as IncomingMessage
      const res = args[1] as ServerResponse
      // A revalidation handed on reaches the listeners once admitted.
      if (gate.refuse(req, res) || gate.revalidate(req, res, () => emit.call(this, event, ...args))) return true
    }
    return emit.call(this, event, ...args)
  } as Server["emit"]
}
