/**
 * In-process HTTP test server: the real routes, middleware and error envelope behind a fetch-style handler, over
 * the memory store (or any store layer). `provision` creates an organization and a key through the operator API.
 */
import { IdGenerator, type Permission, type StoreServices } from "@feedback/core"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { ApiApplication, apiMiddleware, type ApiServerOptions, type ApiServices } from "../src/server/ApiServer.ts"

export const OPERATOR_TOKEN = "test-operator-token"

export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export interface TestServer {
  readonly request: (method: string, path: string, options?: { readonly token?: string | undefined; readonly body?: unknown; readonly rawBody?: string; readonly headers?: Record<string, string> }) => Promise<TestResponse>
  readonly operator: (method: string, path: string, body?: unknown) => Promise<TestResponse>
  /** A fresh organization and a key with the given permissions (all by default). */
  readonly provision: (options?: { readonly permissions?: ReadonlyArray<Permission>; readonly apiRequestsPerMinute?: number }) => Promise<{ readonly organizationId: string; readonly key: string; readonly keyId: string }>
  /** The server as a `fetch` (any origin), e.g. for the typed client through `FetchHttpClient.Fetch`. */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  readonly dispose: () => Promise<void>
}

export const allPermissions: ReadonlyArray<Permission> = [
  "settings:read", "settings:write", "reviews:read", "reviews:write",
  "products:read", "products:write", "customers:read", "customers:write"
]

export interface TestServerOptions extends ApiServerOptions {
  /** The wall clock every request runs with (e.g. a `ManualClock`); the live clock when omitted. */
  readonly clock?: Clock.Clock | undefined
  /** Test-only routes served beside the API's own (e.g. a test HttpApi), over the same services. */
  readonly routes?:
    | Layer.Layer<never, never, HttpRouter.HttpRouter | ApiServices | Layer.Success<typeof HttpServer.layerServices>>
    | undefined
}

/**
 * TEST ONLY: an in-process request has no peer address; the header `x-test-peer` gives it one, as a socket would, so
 * tests can speak for several clients and proxies (`TRUST_PROXY`). Never part of a real server.
 */
export const TEST_PEER_HEADER = "x-test-peer"
const withTestPeer = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const peer = request.headers[TEST_PEER_HEADER]
    return peer === undefined
      ? app
      : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ remoteAddress: Option.some(peer) }))
  })

export const makeTestServer = (
  store: Layer.Layer<StoreServices, unknown> = MemoryStoreLayer,
  testOptions: TestServerOptions = {},
  /** Share the built store with a test's own runtime (e.g. to seed records the API cannot create). */
  memoMap?: Layer.MemoMap
): TestServer => {
  const { clock, routes, ...rest } = testOptions
  const options: ApiServerOptions = { operatorToken: Redacted.make(OPERATOR_TOKEN), ...rest }
  const { dispose, handler: handle } = HttpRouter.toWebHandler(
    Layer.mergeAll(ApiApplication(options), routes ?? Layer.empty).pipe(
      Layer.provide(Layer.merge(store, IdGenerator.uuidV7)),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true, middleware: (app) => apiMiddleware(options)(withTestPeer(app)), ...(memoMap === undefined ? {} : { memoMap }) }
  )
  // Services in the per-request context override the defaults for the request's fiber: how the clock gets in.
  const requestContext = clock === undefined ? undefined : (Context.make(Clock.Clock, clock) as Context.Context<never>)
  const handler = (req: Request) => handle(req, requestContext)
  const request: TestServer["request"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.token !== undefined) headers["authorization"] = `Bearer ${opts.token}`
    let body: string | undefined
    if (opts.rawBody !== undefined) body = opts.rawBody
    else if (opts.body !== undefined) body = JSON.stringify(opts.body)
    if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
    const res = await handler(new Request(`http://test${path}`, { method, headers, ...(body === undefined ? {} : { body }) }))
    const text = await res.text()
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }
  const operator: TestServer["operator"] = (method, path, body) =>
    request(method, `/operator${path}`, { token: OPERATOR_TOKEN, body })
  const provision: TestServer["provision"] = async (opts = {}) => {
    const org = await operator("POST", "/organizations", {
      name: "Test organization",
      ...(opts.apiRequestsPerMinute === undefined ? {} : { apiRequestsPerMinute: opts.apiRequestsPerMinute })
    })
    if (org.status !== 201) throw new Error(`provision failed: ${org.text}`)
    const key = await operator("POST", `/organizations/${org.body.id}/keys`, { permissions: opts.permissions ?? allPermissions })
    if (key.status !== 201) throw new Error(`key failed: ${key.text}`)
    return { organizationId: org.body.id, key: key.body.secretKey, keyId: key.body.id }
  }
  const fetch: TestServer["fetch"] = (input, init) => handler(new Request(input, init))
  return { request, operator, provision, fetch, dispose }
}
