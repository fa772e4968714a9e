/**
 * In-process HTTP test server: the real routes, middleware and error envelope behind a fetch-style handler, over
 * the memory store (or any store layer). `provision` creates an organization and a key through the operator API.
 */
import { Kernel, type StoreServices } from "@feedback/core"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, type HttpServerResponse } from "effect/http"
import {
  OPERATOR_TOKEN,
  operatorVia,
  type Provisioned,
  type ProvisionOptions,
  provisionVia,
  requestVia,
  type TestRequest,
  type TestResponse
} from "./Http.ts"
import { ApiApplication, apiMiddleware, type ApiServerOptions, type ApiServices } from "../src/server/ApiServer.ts"

export { allPermissions, OPERATOR_TOKEN, type TestResponse } from "./Http.ts"

export interface TestServer {
  readonly request: TestRequest
  readonly operator: (method: string, path: string, body?: unknown) => Promise<TestResponse>
  /** A fresh organization and a key with the given permissions (all by default). */
  readonly provision: (options?: ProvisionOptions) => Promise<Provisioned>
  /** The server as a `fetch` (any origin), e.g. for the typed client through `FetchHttpClient.Fetch`. */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  readonly dispose: () => Promise<void>
}

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
const withTestPeer = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const peer = request.headers[TEST_PEER_HEADER]
    return peer === undefined
      ? app
      : Effect.provideService(
        app,
        HttpServerRequest.HttpServerRequest,
        request.modify({ remoteAddress: Option.some(peer) })
      )
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
      Layer.provide(Layer.merge(store, Kernel.IdGenerator.uuidV7)),
      Layer.provide(HttpServer.layerServices)
    ),
    {
      disableLogger: true,
      middleware: (app) => apiMiddleware(options)(withTestPeer(app)),
      ...(memoMap === undefined ? {} : { memoMap })
    }
  )
  // Services in the per-request context override the defaults for the request's fiber: how the clock gets in.
  const requestContext = clock === undefined ? undefined : (Context.make(Clock.Clock, clock) as Context.Context<never>)
  const handler = (req: Request) => handle(req, requestContext)
  const request: TestServer["request"] = requestVia(handler)
  const operator: TestServer["operator"] = operatorVia(request)
  const provision: TestServer["provision"] = provisionVia(request)
  const fetch: TestServer["fetch"] = (input, init) => handler(new Request(input, init))
  return { request, operator, provision, fetch, dispose }
}
