/**
 * Wiring of the HTTP adapter: the admin API (with its OpenAPI document and interactive reference), the operator
 * API when an operator token is configured, and the outer error envelope. Store services come from outside, so
 * the same routes run on memory, PGlite or a PostgreSQL server, standalone or inside another Node host.
 */
import {
  Catalog,
  CoreLayer,
  Idempotency,
  type Kernel,
  RateLimits,
  type StoreServices,
  Surveys,
  Webhooks
} from "@feedback/core"
import { Context, Effect, Layer, type Redacted, References, Tracer } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi, OperatorApi } from "@feedback/client/effect"
import { CustomersHandlers, ProductsHandlers, SitesHandlers } from "./catalog/CatalogHandlers.ts"
import { OrdersHandlers } from "./orders/OrdersHandlers.ts"
import { SurveysHandlers } from "./surveys/SurveysHandlers.ts"
import { SurveyWorkerLive } from "./surveys/SurveyWorker.ts"
import { UNSUBSCRIBE_ROUTES, UnsubscribeRoutes } from "./catalog/UnsubscribePage.ts"
import { DocsPage } from "./DocsPage.ts"
import type { DemoSlot } from "./organizations/DemoSeed.ts"
import { DEMO_PAGE_ROUTES, DemoPageRoute } from "./storefront/DemoPage.ts"
import { EMBED_SCRIPT_ROUTES, EmbedScriptRoute } from "./storefront/EmbedScript.ts"
import { SURVEY_PAGE_ROUTES, SurveyPageRoute } from "./surveys/SurveyPage.ts"
import { errorEnvelope, hasTokenPath } from "./ErrorEnvelope.ts"
import { type Authenticate, HostAuthentication } from "./HostAuthentication.ts"
import { JsonLoggerLayer, type LogLevelName, type LogSink, stdoutSink } from "./observability/JsonLogger.ts"
import { MetricsRoute } from "./observability/MetricsRoute.ts"
import { ExportJobsHandlers, ImportJobsHandlers } from "./jobs/JobsHandlers.ts"
import { type JobServerOptions, jobSettingsLayer, JobWorkerLive } from "./jobs/JobWorker.ts"
import { OrganizationHandlers, PublishableKeysHandlers, SystemHandlers } from "./organizations/OrganizationHandlers.ts"
import { OperatorAuthLive } from "./organizations/OperatorAuthLive.ts"
import { OperatorHandlers } from "./organizations/OperatorHandlers.ts"
import { ProductQuestionHandlers } from "./questions/ProductQuestionHandlers.ts"
import { type EmailServerOptions, EmailWorkerFor } from "./questions/SmtpMailer.ts"
import { RequestValidationLive } from "./RequestValidationLive.ts"
import { ReviewWritesHandlers } from "./reviews/ReviewWritesHandlers.ts"
import { ReviewsHandlers } from "./reviews/ReviewsHandlers.ts"
import { type RefusalGateSlot, refusalGateLayer } from "./RefusalGate.ts"
import { routeTableOf } from "./RouteTable.ts"
import { SecretKeyAuthLive } from "./SecretKeyAuthLive.ts"
import { StorefrontAuthLive } from "./storefront/StorefrontAuthLive.ts"
import { STOREFRONT_PREFLIGHT_PATH, StorefrontPreflight } from "./storefront/StorefrontCors.ts"
import { StorefrontHandlers } from "./storefront/StorefrontHandlers.ts"
import { AutomationHandlers } from "./setup/AutomationHandlers.ts"
import { setupConfigLayer, SetupHandlers } from "./setup/SetupHandlers.ts"
import { StoreRejectionResponses } from "./StoreRejections.ts"
import { WebhookDispatcherLive, WebhookRuntime, type WebhookServerOptions } from "./webhooks/WebhookServer.ts"
import { WebhooksHandlers } from "./webhooks/WebhooksHandlers.ts"

export interface ApiServerOptions {
  /** Enables `/operator/…` when set. */
  readonly operatorToken?: Redacted.Redacted<string> | undefined
  /** One access-log line per request (request id, method, path, route, status, duration). */
  readonly logRequests?: boolean | undefined
  /** Where the API's JSON log lines go (docs/OPERATIONS.md); defaults to stdout. */
  readonly log?: ((line: string) => void) | undefined
  /** Request metrics and `GET /metrics` (true by default). */
  readonly metrics?: boolean | undefined
  /** When set, `GET /metrics` requires it as a bearer token (`METRICS_TOKEN`). */
  readonly metricsToken?: Redacted.Redacted<string> | undefined
  /** Setup state `embedScriptUrl` (EMBED_SCRIPT_URL); unset, the API's own `GET /storefront/embed.js`. */
  readonly embedScriptUrl?: string | undefined
  /**
   * Setup state `apiBaseUrl` (PUBLIC_API_BASE_URL). Unset: the origin each request was addressed to. Set it behind a
   * proxy, or when the API is mounted under a path prefix.
   */
  readonly publicApiBaseUrl?: string | undefined
  /**
   * The server's own URL (the standalone server: `http://HOST:PORT`): where email links point when
   * `publicApiBaseUrl` is unset and no request names an origin (docs/EMAILS.md).
   */
  readonly serverUrl?: string | undefined
  /** Webhook settings and the delivery dispatcher (on by default). */
  readonly webhooks?: WebhookServerOptions | undefined
  /** The asker-notice email worker (on by default; without `smtp` notices are logged and marked `logged`). */
  readonly email?: EmailServerOptions | undefined
  /**
   * The survey worker's settings (it runs with the email worker, over the same transport): e.g. `interruptedAfterMs`,
   * after which a dead worker's claims are recovered (`SURVEY_RECOVERY_MS`, default 10 minutes).
   */
  readonly surveys?: Partial<Surveys.SurveyWorkerSettings> | undefined
  /**
   * Run the background workers (webhook dispatcher, email notice worker) with the routes: true by default. A host
   * that serves requests from a short-lived process (a serverless function) sets `false` and runs
   * `BackgroundWorkers` in a long-lived one; events and notices wait in the store's outboxes until then.
   */
  readonly workers?: boolean | undefined
  /**
   * Catalog event names the embedding host records for its own records with `HostEvents` (loyalty, wishlists…);
   * `GET /webhook-events` reports them as emitted. None by default.
   */
  readonly hostEvents?: ReadonlyArray<Webhooks.EventName> | undefined
  /** Import and export jobs: the worker (on by default), its lease, batch size and export retention. */
  readonly jobs?: JobServerOptions | undefined
  /** Days the event feed keeps events (`EVENT_RETENTION_DAYS`; at least and by default 30); purged hourly by a worker. */
  readonly eventRetentionDays?: number | undefined
  /**
   * Filled with the refusal gate while the routes live (`RefusalGate.ts`): a Node server reading it (`gateRequests`,
   * `makeNodeHandler`) answers known refusals before the framework. Only for a server whose requests record no
   * spans: a request the gate answers never reaches the tracer.
   */
  readonly refusalGate?: RefusalGateSlot | undefined
  /**
   * `TRUST_PROXY`: comma-separated addresses and CIDRs of reverse proxies whose `X-Forwarded-For` names the client of a
   * storefront request (its rate-limit bucket); empty by default, when the peer's own address counts.
   */
  readonly trustProxy?: string | undefined
  /**
   * The demo organization, once the host seeded or found it (`seedDemo`): `GET /demo` shows its storefront, and is a
   * 404 page while this is empty or absent.
   */
  readonly demo?: DemoSlot | undefined
  /**
   * The embedding host's own authentication (`HostAuthentication.ts`): maps its sessions or OAuth tokens to callers,
   * tried before the bearer secret key on every admin API request. Dashboard callers are never rate limited.
   */
  readonly authenticate?: Authenticate | undefined
  /**
   * A tracer for the embedded handler's requests (a span per request, use-case and SQL statement), e.g. the host's
   * OpenTelemetry tracer from `@effect/opentelemetry`. Unset: an embedded handler's requests record no spans.
   */
  readonly tracer?: Tracer.Tracer | undefined
  /**
   * Structured logging: each log record as an object (`{time, level, message, …fields}`, the fields of the JSON
   * lines, docs/OPERATIONS.md) instead of a line, e.g. `(r) => pino[r.level](r, r.message)`. Takes precedence over `log`.
   */
  readonly logRecord?: ((record: LogRecord) => void) | undefined
}

/** A structured log record, as `logRecord` receives it. */
export interface LogRecord {
  readonly time: string
  readonly level: LogLevelName
  readonly message: string
  readonly [field: string]: unknown
}

/** Where the API's log lines go: the host's structured logger, its line sink, or stdout. */
export const logSinkOf = (options: Pick<ApiServerOptions, "log" | "logRecord">): LogSink => {
  const logRecord = options.logRecord
  if (logRecord !== undefined) return (line) => logRecord(JSON.parse(line) as LogRecord)
  return options.log ?? stdoutSink
}

const AdminRoutes = (options: ApiServerOptions) =>
  HttpApiBuilder.layer(AdminApi, { openapiPath: "/openapi.json" }).pipe(
    Layer.provide([SystemHandlers, OrganizationHandlers, SetupHandlers, WebhooksHandlers, ReviewWritesHandlers]),
    Layer.provide([ProductQuestionHandlers, AutomationHandlers]),
    Layer.provide([
      SitesHandlers,
      ProductsHandlers,
      CustomersHandlers,
      OrdersHandlers,
      SurveysHandlers,
      ReviewsHandlers
    ]),
    Layer.provide([ImportJobsHandlers, ExportJobsHandlers, PublishableKeysHandlers, StorefrontHandlers]),
    Layer.provide([SecretKeyAuthLive, StorefrontAuthLive({ trustProxy: options.trustProxy }), RequestValidationLive])
  )

const DocsRoute = DocsPage(AdminApi, { path: "/docs", scalar: { defaultOpenAllTags: true } })

const OperatorRoutes = (token: Redacted.Redacted<string>) =>
  HttpApiBuilder.layer(OperatorApi, { openapiPath: "/operator/openapi.json" }).pipe(
    Layer.provide(OperatorHandlers),
    Layer.provide([OperatorAuthLive(token), RequestValidationLive])
  )

/**
 * Every route and nothing else, needing the store services and an id generator. The use-case services
 * (`CoreLayer`) are built once here, over the store, with the server's setup and webhook settings; handlers capture
 * them at group build.
 */
export const ApiRoutes = (options: ApiServerOptions) =>
  Layer.mergeAll(
    AdminRoutes(options),
    StorefrontPreflight,
    DocsRoute,
    UnsubscribeRoutes,
    EmbedScriptRoute,
    SurveyPageRoute({ trustProxy: options.trustProxy }),
    DemoPageRoute(options.demo ?? { current: undefined }),
    options.metrics === false ? Layer.empty : MetricsRoute(options.metricsToken),
    options.operatorToken === undefined ? Layer.empty : OperatorRoutes(options.operatorToken),
    StoreRejectionResponses,
    // Over the same `Organizations` as the routes: the gate reads the keys the routes' authentications kept.
    options.refusalGate === undefined ? Layer.empty : refusalGateLayer(options.refusalGate, {
      routes: routesOf(options),
      logRequests: options.logRequests ?? false,
      metrics: options.metrics !== false,
      log: logSinkOf(options),
      trustProxy: options.trustProxy
    })
  ).pipe(
    Layer.provide(CoreLayer),
    Layer.provide([
      setupConfigLayer(options),
      WebhookRuntime(options.webhooks),
      Layer.succeed(Webhooks.HostEventNames, options.hostEvents ?? []),
      Layer.succeed(HostAuthentication, options.authenticate),
      jobSettingsLayer(options.jobs),
      // Survey links (`/r/{token}`) point at PUBLIC_API_BASE_URL, else the server's own URL (docs/DECISIONS.md §48).
      (options.publicApiBaseUrl ?? options.serverUrl) === undefined
        ? Layer.empty
        : Layer.succeed(Surveys.SurveyLinks, { baseUrl: (options.publicApiBaseUrl ?? options.serverUrl)! })
    ])
  )

/**
 * The background work of a server process, needing the store services and an id generator: the webhook dispatcher
 * (docs/DECISIONS.md §7) and the asker-notice email worker (§6), each off when its own option says so, and the
 * hourly purges of expired events (§17) and idempotency keys (§18). Both workers stop gracefully with the layer
 * (in-flight deliveries and sends finish first).
 */
export const BackgroundWorkers = (
  options: Pick<
    ApiServerOptions,
    | "webhooks"
    | "email"
    | "eventRetentionDays"
    | "jobs"
    | "hostEvents"
    | "embedScriptUrl"
    | "publicApiBaseUrl"
    | "serverUrl"
    | "surveys"
  >
) =>
  Layer.mergeAll(
    WebhookDispatcherLive(options.webhooks),
    EmailWorkerFor(options.email),
    // Survey flows send through the same transport, and stop with it (`email.worker: false`).
    // Its emails' unsubscribe links point where the routes' do (PUBLIC_API_BASE_URL, else the server's own URL).
    options.email?.worker === false ? Layer.empty : SurveyWorkerLive(options.email?.smtp, options.surveys).pipe(
      Layer.provide(Catalog.Unsubscribes.layer),
      Layer.provide(setupConfigLayer(options))
    ),
    Layer.effectDiscard(
      Effect.forkScoped(Webhooks.eventRetentionJob(options.eventRetentionDays ?? Webhooks.MIN_EVENT_RETENTION_DAYS))
    ),
    Layer.effectDiscard(Effect.forkScoped(Idempotency.idempotencyRetentionJob())),
    Layer.effectDiscard(Effect.forkScoped(RateLimits.rateLimitPurgeJob())),
    JobWorkerLive(options.jobs).pipe(
      Layer.provide(CoreLayer),
      Layer.provide([
        jobSettingsLayer(options.jobs),
        Layer.succeed(Webhooks.HostEventNames, options.hostEvents ?? []),
        // The links a worker renders into emails point where the routes' do.
        setupConfigLayer(options)
      ])
    )
  ).pipe(
    Layer.provide(WebhookRuntime(options.webhooks)),
    // Untraced: the dispatcher polls several times a second, and spans of empty polls would bury the requests'.
    Layer.provide(Layer.succeed(References.TracerEnabled, false))
  )

/** The routes, and the background workers unless `workers: false`, logging through `ObservabilityLayer`. */
export const ApiApplication = (options: ApiServerOptions) =>
  (options.workers === false ? ApiRoutes(options) : Layer.merge(ApiRoutes(options), BackgroundWorkers(options))).pipe(
    Layer.provideMerge(ObservabilityLayer(options))
  )

export type ApiServices = StoreServices | Kernel.IdGenerator

/** Every route served with these options, for 405s, metrics labels and span names. */
const routesOf = (options: ApiServerOptions) =>
  routeTableOf(
    options.operatorToken === undefined ? [AdminApi] : [AdminApi, OperatorApi],
    [
      ["GET", "/docs"],
      ["GET", "/openapi.json"],
      ["OPTIONS", STOREFRONT_PREFLIGHT_PATH],
      ...UNSUBSCRIBE_ROUTES,
      ...EMBED_SCRIPT_ROUTES,
      ...SURVEY_PAGE_ROUTES,
      ...DEMO_PAGE_ROUTES,
      ...(options.metrics === false ? [] : [["GET", "/metrics"] as const]),
      ...(options.operatorToken === undefined ? [] : [["GET", "/operator/openapi.json"] as const])
    ]
  )

/**
 * What the API's fibers log and trace with (docs/DECISIONS.md §19): the JSON logger writing to `options.log`, and
 * server spans named `METHOD /route/:pattern`. `ApiApplication` provides it to its own layers; a server built with
 * `HttpRouter.serve` (whose request fibers run in the context it is given) provides it around the server too.
 */
export const ObservabilityLayer = (
  options: Pick<ApiServerOptions, "log" | "logRecord" | "operatorToken" | "metrics">
) => {
  const routes = routesOf(options)
  return Layer.mergeAll(
    JsonLoggerLayer(logSinkOf(options)),
    Layer.succeed(HttpMiddleware.SpanNameGenerator)((request) => {
      const q = request.url.indexOf("?")
      const route = routes.routeOf(request.method, q === -1 ? request.url : request.url.slice(0, q))
      return route === undefined ? request.method : `${request.method} ${route}`
    }),
    // A server span records the request's URL: none for the unsubscribe pages, whose path is a credential.
    Layer.succeed(HttpMiddleware.TracerDisabledWhen)((request) => hasTokenPath(request.url))
  )
}

/** The outer middleware for `HttpRouter.serve` / `HttpRouter.toWebHandler`. */
export const apiMiddleware = (options: ApiServerOptions) =>
  errorEnvelope({
    routes: routesOf(options),
    logRequests: options.logRequests ?? false,
    metrics: options.metrics !== false
  })

/**
 * A fetch-style handler (`Request → Promise<Response>`) over the given services: the seam for embedding the API in
 * another Node host or a serverless runtime, and for in-process tests. Runs the background workers too unless
 * `options.workers` is false.
 */
export const makeWebHandler = <E>(
  services: Layer.Layer<ApiServices, E>,
  options: ApiServerOptions = {},
  /** Pass a host runtime's memo map to share the layers (and so the store) it already built. */
  memoMap?: Layer.MemoMap
): {
  /** Serves one request; a context passed with it is added to the request's (and keeps its spans, see `untracedRequests`). */
  readonly handler: (request: Request, context?: Context.Context<never> | undefined) => Promise<Response>
  readonly dispose: () => Promise<void>
} => {
  // Known refusals are answered before the stack, as a Node server's are (`RefusalGate.ts`), with the same exceptions:
  // a traced handler or one with the host's own `authenticate` has no gate, and a host's own slot is the host's to ask.
  const gate: RefusalGateSlot = { current: undefined }
  const gated = options.tracer === undefined && options.authenticate === undefined && options.refusalGate === undefined
  const web = HttpRouter.toWebHandler(
    ApiApplication(gated ? { ...options, refusalGate: gate } : options).pipe(
      Layer.provide(services),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true, middleware: apiMiddleware(options), ...(memoMap === undefined ? {} : { memoMap }) }
  )
  const defaults = requestContext(options)
  return {
    handler: (request, context) => {
      const current = context === undefined ? gate.current : undefined
      if (current === undefined) return web.handler(request, context ?? defaults)
      const refused = current.refuseWeb(request)
      if (refused !== undefined) return Promise.resolve(refused)
      return current.revalidateWeb(request, () => web.handler(request, defaults)) ?? web.handler(request, defaults)
    },
    dispose: web.dispose
  }
}

/** What an embedded handler's requests run with: the host's tracer when it gave one, else `untracedRequests`. */
export const requestContext = (options: Pick<ApiServerOptions, "tracer">): Context.Context<never> =>
  options.tracer === undefined
    ? untracedRequests
    : Context.make(Tracer.Tracer, options.tracer) as Context.Context<never>

/**
 * What an embedded handler's requests run with when their caller gives nothing. Their fibers see only what the
 * handler's layer outputs, which holds no tracer, so a span there goes to Effect's native tracer, which nothing
 * exports or reads; as the standalone server does when nothing exports (docs/DECISIONS.md §19, §37), they record
 * none, so no request pays for spans nobody reads.
 * A web handler's caller that passes a context with a request (which may carry its own tracer) traces as before.
 */
export const untracedRequests: Context.Context<never> = Context.make(
  References.TracerEnabled,
  false
) as Context.Context<never>
