/**
 * Wiring of the HTTP adapter: the admin API (with its OpenAPI document and interactive reference), the operator
 * API when an operator token is configured, and the outer error envelope. Store services come from outside, so
 * the same routes run on memory, PGlite or a PostgreSQL server, standalone or inside another Node host.
 */
import { CoreLayer, type IdGenerator, type StoreServices } from "@feedback/core"
import { Effect, Layer, type Redacted } from "effect"
import { HttpRouter, HttpServer, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { AdminApi } from "../api/Api.ts"
import { OperatorApi } from "../api/organizations/OperatorApi.ts"
import { CustomersHandlers, ProductsHandlers, SitesHandlers } from "./catalog/CatalogHandlers.ts"
import { errorEnvelope } from "./ErrorEnvelope.ts"
import { OrganizationHandlers, SystemHandlers } from "./organizations/OrganizationHandlers.ts"
import { OperatorAuthLive } from "./organizations/OperatorAuthLive.ts"
import { OperatorHandlers } from "./organizations/OperatorHandlers.ts"
import { ProductQuestionHandlers } from "./questions/ProductQuestionHandlers.ts"
import { type EmailServerOptions, EmailWorkerFor } from "./questions/SmtpMailer.ts"
import { RequestValidationLive } from "./RequestValidationLive.ts"
import { ReviewWritesHandlers } from "./reviews/ReviewWritesHandlers.ts"
import { ReviewsReadHandlers } from "./reviews/ReviewsReadHandlers.ts"
import { routeTableOf } from "./RouteTable.ts"
import { SecretKeyAuthLive } from "./SecretKeyAuthLive.ts"
import { SetupHandlers, SetupUrls } from "./setup/SetupHandlers.ts"
import { StoreRejectionResponses } from "./StoreRejections.ts"
import { WebhookDispatcherLive, WebhookRuntime, type WebhookServerOptions } from "./webhooks/WebhookServer.ts"
import { WebhooksHandlers } from "./webhooks/WebhooksHandlers.ts"

export interface ApiServerOptions {
  /** Enables `/operator/…` when set. */
  readonly operatorToken?: Redacted.Redacted<string> | undefined
  /** One access-log line per request (request id, method, URL, status, duration). */
  readonly logRequests?: boolean | undefined
  /** Where log lines go; defaults to stdout. */
  readonly log?: ((line: string) => void) | undefined
  /** Setup state `embedScriptUrl` (EMBED_SCRIPT_URL); defaults to the placeholder `DEFAULT_EMBED_SCRIPT_URL`. */
  readonly embedScriptUrl?: string | undefined
  /**
   * Setup state `apiBaseUrl` (PUBLIC_API_BASE_URL). Unset: the origin each request was addressed to. Set it behind a
   * proxy, or when the API is mounted under a path prefix.
   */
  readonly publicApiBaseUrl?: string | undefined
  /** Webhook settings and the delivery dispatcher (on by default). */
  readonly webhooks?: WebhookServerOptions | undefined
  /** The asker-notice email worker (on by default; without `smtp` notices are logged and marked `logged`). */
  readonly email?: EmailServerOptions | undefined
}

const AdminRoutes = HttpApiBuilder.layer(AdminApi, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([SystemHandlers, OrganizationHandlers, SetupHandlers, WebhooksHandlers, ReviewWritesHandlers]),
  Layer.provide(ProductQuestionHandlers),
  Layer.provide([SitesHandlers, ProductsHandlers, CustomersHandlers, ReviewsReadHandlers]),
  Layer.provide([SecretKeyAuthLive, RequestValidationLive]),
  // The use-case services are built once here, over the store; handlers capture them at group build.
  Layer.provide(CoreLayer)
)

const DocsRoute = HttpApiScalar.layer(AdminApi, { path: "/docs" })

const OperatorRoutes = (token: Redacted.Redacted<string>) =>
  HttpApiBuilder.layer(OperatorApi, { openapiPath: "/operator/openapi.json" }).pipe(
    Layer.provide(OperatorHandlers),
    Layer.provide([OperatorAuthLive(token), RequestValidationLive])
  )

/** Every route, needing the store services and an id generator. */
export const ApiRoutes = (options: ApiServerOptions) =>
  Layer.mergeAll(
    AdminRoutes.pipe(Layer.provide(SetupUrls.layer(options))),
    DocsRoute,
    options.operatorToken === undefined ? Layer.empty : OperatorRoutes(options.operatorToken),
    WebhookDispatcherLive(options.webhooks),
    EmailWorkerFor(options.email),
    StoreRejectionResponses
  ).pipe(Layer.provide(WebhookRuntime(options.webhooks)))

export type ApiServices = StoreServices | IdGenerator

/** The outer middleware for `HttpRouter.serve` / `HttpRouter.toWebHandler`. */
export const apiMiddleware = (options: ApiServerOptions) => {
  const routes = routeTableOf(
    options.operatorToken === undefined ? [AdminApi] : [AdminApi, OperatorApi],
    [["GET", "/docs"], ["GET", "/openapi.json"], ...(options.operatorToken === undefined ? [] : [["GET", "/operator/openapi.json"] as const])]
  )
  const log = options.log ?? ((line: string) => process.stdout.write(line + "\n"))
  return errorEnvelope({ routes, log, logRequests: options.logRequests ?? false }) as <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>
}

/**
 * A fetch-style handler (`Request → Promise<Response>`) over the given services: the seam for embedding the API in
 * another Node host or a serverless runtime, and for in-process tests.
 */
export const makeWebHandler = <E>(
  services: Layer.Layer<ApiServices, E>,
  options: ApiServerOptions = {},
  /** Pass a host runtime's memo map to share the layers (and so the store) it already built. */
  memoMap?: Layer.MemoMap
) =>
  HttpRouter.toWebHandler(
    ApiRoutes(options).pipe(Layer.provide(services), Layer.provide(HttpServer.layerServices)),
    { disableLogger: true, middleware: apiMiddleware(options), ...(memoMap === undefined ? {} : { memoMap }) }
  )

export { Effect }
