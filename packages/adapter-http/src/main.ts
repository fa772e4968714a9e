/**
 * The standalone server (`npm start`). Configuration comes from the environment; see README for the table.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { CoreLayer, Jobs, Organizations, Webhooks } from "@feedback/core"
import { Cause, Config, Effect, Exit, Layer, Option, Redacted, Result, type Runtime, Scheduler } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { ApiApplication, apiMiddleware, ObservabilityLayer } from "./server/ApiServer.ts"
import { JsonLoggerLayer, stdoutSink } from "./server/observability/JsonLogger.ts"
import { OtlpLayer, parseOtlpHeaders } from "./server/observability/OtlpExport.ts"
import { type DemoSlot, demoSeeding, seedDemo } from "./server/organizations/DemoSeed.ts"
import { checkServerLimits, DEFAULT_SERVER_LIMITS, hardenedServer } from "./server/NodeServer.ts"
import { parseTrustProxy } from "./server/storefront/ClientAddress.ts"
import { TurnScheduler } from "./server/TurnScheduler.ts"
import { NodeHostResolver } from "./server/webhooks/NodeWebhookTransport.ts"
import {
  chooseStore,
  describeRateLimitStore,
  describeStore,
  isRateLimitUrl,
  storeLayer
} from "./server/StoreSelection.ts"

const ServerConfig = Config.all({
  port: Config.Int("PORT").pipe(Config.withDefault(3000)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  databaseUrl: Config.String("DATABASE_URL").pipe(Config.option),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./.data")),
  operatorToken: Config.Redacted("OPERATOR_TOKEN").pipe(Config.option),
  demo: Config.Boolean("DEMO").pipe(Config.option),
  cursorSecret: Config.Redacted("CURSOR_SECRET").pipe(Config.option),
  rateLimitUrl: Config.Redacted("RATE_LIMIT_URL").pipe(Config.option),
  workSignals: Config.Literals(["notify", "poll"], "WORK_SIGNALS").pipe(Config.withDefault("notify" as const)),
  demoSecretKey: Config.String("DEMO_SECRET_KEY").pipe(Config.option),
  smtpUrl: Config.Redacted("SMTP_URL").pipe(Config.option),
  mailFrom: Config.String("MAIL_FROM").pipe(Config.option),
  logRequests: Config.Boolean("LOG_REQUESTS").pipe(Config.withDefault(true)),
  stackTraces: Config.Boolean("STACK_TRACES").pipe(Config.option),
  metricsToken: Config.Redacted("METRICS_TOKEN").pipe(Config.option),
  otlp: Config.all({
    endpoint: Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.option),
    protocol: Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
      Config.withDefault("http/protobuf" as const)
    ),
    headers: Config.String("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.option),
    serviceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("feedback-admin-api")),
    traceExportIntervalMs: Config.Int("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5_000)),
    metricExportIntervalMs: Config.Int("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(60_000))
  }),
  embedScriptUrl: Config.String("EMBED_SCRIPT_URL").pipe(Config.option),
  publicApiBaseUrl: Config.String("PUBLIC_API_BASE_URL").pipe(Config.option),
  trustProxy: Config.String("TRUST_PROXY").pipe(Config.withDefault("")),
  surveyRecoveryMs: Config.Int("SURVEY_RECOVERY_MS").pipe(Config.withDefault(600_000)),
  eventRetentionDays: Config.Int("EVENT_RETENTION_DAYS").pipe(Config.withDefault(Webhooks.MIN_EVENT_RETENTION_DAYS)),
  jobs: Config.all({
    leaseMs: Config.Int("JOB_LEASE_MS").pipe(Config.withDefault(30_000)),
    exportRetentionHours: Config.Int("EXPORT_RETENTION_HOURS").pipe(Config.withDefault(168)),
    batchSize: Config.Int("JOB_BATCH_SIZE").pipe(Config.withDefault(Jobs.DEFAULT_JOB_BATCH_SIZE))
  }),
  limits: Config.all({
    requestTimeoutMs: Config.Int("REQUEST_TIMEOUT_MS").pipe(Config.withDefault(DEFAULT_SERVER_LIMITS.requestTimeoutMs)),
    importRequestTimeoutMs: Config.Int("IMPORT_REQUEST_TIMEOUT_MS").pipe(
      Config.withDefault(DEFAULT_SERVER_LIMITS.importRequestTimeoutMs)
    ),
    headersTimeoutMs: Config.Int("HEADERS_TIMEOUT_MS").pipe(Config.withDefault(DEFAULT_SERVER_LIMITS.headersTimeoutMs)),
    keepAliveTimeoutMs: Config.Int("KEEP_ALIVE_TIMEOUT_MS").pipe(
      Config.withDefault(DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs)
    ),
    maxConnections: Config.Int("MAX_CONNECTIONS").pipe(Config.withDefault(DEFAULT_SERVER_LIMITS.maxConnections)),
    maxConnectionsPerAddress: Config.Int("MAX_CONNECTIONS_PER_ADDRESS").pipe(
      Config.withDefault(DEFAULT_SERVER_LIMITS.maxConnectionsPerAddress)
    )
  }),
  webhooks: Config.all({
    allowInsecure: Config.Boolean("WEBHOOK_ALLOW_INSECURE").pipe(Config.withDefault(false)),
    allowPrivate: Config.Boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
    timeoutMs: Config.Int("WEBHOOK_TIMEOUT_MS").pipe(Config.withDefault(10_000))
  })
})

/**
 * The operator token provisions organizations and keys: 32 characters is the hex form of 128 random bits, the least
 * such a token should carry (docs/SECURITY.md).
 */
const MIN_OPERATOR_TOKEN_LENGTH = 32

const isHttpUrl = (value: string) => {
  try {
    return ["http:", "https:"].includes(new URL(value).protocol)
  } catch {
    return false
  }
}

/**
 * The server's own URL from HOST and PORT, for email links when PUBLIC_API_BASE_URL is unset (docs/EMAILS.md): a
 * wildcard address is reached as localhost, an IPv6 one in brackets.
 */
export const ownUrl = (host: string, port: number): string => {
  const name = host === "0.0.0.0" || host === "::" || host === ""
    ? "localhost"
    : host.includes(":")
    ? `[${host}]`
    : host
  return `http://${name}:${port}`
}

/**
 * The standalone server, configured from the environment: `npm start` and `feedback-admin-api serve`. Everything it
 * writes to stdout is a JSON line (docs/OPERATIONS.md), the start-up summary and a refusal to start included.
 */
export const serve = Effect.suspend(() => run).pipe(
  Effect.tapCause((cause) =>
    Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logFatal("the server stopped", cause)
  ),
  Effect.provide(JsonLoggerLayer(stdoutSink))
)

const run = Effect.gen(function*() {
  const config = yield* ServerConfig
  const demoKey = Option.getOrUndefined(config.demoSecretKey)
  if (demoKey !== undefined && !Organizations.isWellFormedSecretKey(demoKey)) {
    return yield* Effect.die(
      new Error("DEMO_SECRET_KEY must look like sk_ followed by at least 32 URL-safe characters")
    )
  }
  for (
    const [name, value] of [["EMBED_SCRIPT_URL", Option.getOrUndefined(config.embedScriptUrl)], [
      "PUBLIC_API_BASE_URL",
      Option.getOrUndefined(config.publicApiBaseUrl)
    ]] as const
  ) {
    if (value !== undefined && !isHttpUrl(value)) {
      return yield* Effect.die(new Error(`${name} must be an absolute http(s) URL`))
    }
  }
  if (
    Option.isSome(config.operatorToken) && Redacted.value(config.operatorToken.value).length < MIN_OPERATOR_TOKEN_LENGTH
  ) {
    return yield* Effect.die(
      new Error(`OPERATOR_TOKEN must be at least ${MIN_OPERATOR_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`)
    )
  }
  const trustProblem = Result.try(() => parseTrustProxy(config.trustProxy))
  if (Result.isFailure(trustProblem)) return yield* Effect.die(trustProblem.failure)
  const limitsProblem = checkServerLimits(config.limits)
  if (limitsProblem !== undefined) return yield* Effect.die(new Error(`Server limits: ${limitsProblem}`))
  if (Option.isSome(config.smtpUrl) && Option.isNone(config.mailFrom)) {
    return yield* Effect.die(
      new Error("MAIL_FROM must be set when SMTP_URL is, e.g. MAIL_FROM='Shop <answers@shop.example>'")
    )
  }
  const smtp = Option.isSome(config.smtpUrl) && Option.isSome(config.mailFrom)
    ? { url: config.smtpUrl.value, from: config.mailFrom.value }
    : undefined
  const chosen = chooseStore(Option.getOrUndefined(config.databaseUrl), config.dataDir)
  const store = chosen._tag === "Server" ? { ...chosen, workSignals: config.workSignals } : chosen
  const rateLimitUrl = Option.getOrUndefined(Option.map(config.rateLimitUrl, Redacted.value))
  if (rateLimitUrl !== undefined && !isRateLimitUrl(rateLimitUrl)) {
    return yield* Effect.die(new Error("RATE_LIMIT_URL must be a redis:// or rediss:// URL"))
  }
  if (config.eventRetentionDays < Webhooks.MIN_EVENT_RETENTION_DAYS) {
    return yield* Effect.die(
      new Error(
        `EVENT_RETENTION_DAYS must be at least ${Webhooks.MIN_EVENT_RETENTION_DAYS} (the feed keeps events at least that long)`
      )
    )
  }
  if (config.jobs.leaseMs < 100) return yield* Effect.die(new Error("JOB_LEASE_MS must be at least 100 milliseconds"))
  if (config.jobs.batchSize < 1 || config.jobs.batchSize > 10_000) {
    return yield* Effect.die(new Error("JOB_BATCH_SIZE must be between 1 and 10000"))
  }
  if (config.jobs.exportRetentionHours < 1) {
    return yield* Effect.die(new Error("EXPORT_RETENTION_HOURS must be at least 1"))
  }
  if (config.webhooks.timeoutMs < 1) {
    return yield* Effect.die(new Error("WEBHOOK_TIMEOUT_MS must be a positive number of milliseconds"))
  }
  const otlpEndpoint = Option.getOrUndefined(config.otlp.endpoint)
  if (otlpEndpoint !== undefined && !isHttpUrl(otlpEndpoint)) {
    return yield* Effect.die(
      new Error("OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL, e.g. http://collector:4318")
    )
  }
  // Every `Effect.fn` use-case call captures its call site for its span, tracer or not; with nothing exporting
  // spans nobody reads them, so the server captures no stacks unless asked (docs/DECISIONS.md §27).
  const stackTraces = Option.getOrElse(config.stackTraces, () => otlpEndpoint !== undefined)
  if (!stackTraces) Error.stackTraceLimit = 0
  for (
    const [name, value] of [["OTEL_BSP_SCHEDULE_DELAY", config.otlp.traceExportIntervalMs], [
      "OTEL_METRIC_EXPORT_INTERVAL",
      config.otlp.metricExportIntervalMs
    ]] as const
  ) {
    if (value < 1) return yield* Effect.die(new Error(`${name} must be a positive number of milliseconds`))
  }
  const demo = demoSeeding(Option.getOrUndefined(config.demo), store)
  const options = {
    operatorToken: Option.getOrUndefined(config.operatorToken),
    logRequests: config.logRequests,
    metricsToken: Option.getOrUndefined(config.metricsToken),
    embedScriptUrl: Option.getOrUndefined(config.embedScriptUrl),
    publicApiBaseUrl: Option.getOrUndefined(config.publicApiBaseUrl),
    trustProxy: config.trustProxy,
    serverUrl: ownUrl(config.host, config.port),
    email: { smtp },
    surveys: { interruptedAfterMs: config.surveyRecoveryMs },
    webhooks: config.webhooks,
    eventRetentionDays: config.eventRetentionDays,
    jobs: config.jobs,
    // Refusals known in advance are answered before the framework, unless spans are exported (they would have none).
    refusalGate: otlpEndpoint === undefined ? { current: undefined } : undefined,
    // Filled once the demo organization is seeded or found, below: `/demo` shows its storefront.
    demo: { current: undefined } as DemoSlot
  }

  const Announce = Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const url = HttpServer.formatAddress(server.address)
    const seeded = demo._tag === "Off"
      ? demo
      : yield* seedDemo(demoKey, new URL(options.publicApiBaseUrl ?? options.serverUrl).hostname)
    options.demo.current = seeded._tag === "Created" || seeded._tag === "Existing" ? seeded.organizationId : undefined
    // One JSON line per fact; the message reads as the old start-up text did, the fields are for machines.
    const lines: ReadonlyArray<readonly [string, Record<string, unknown>?]> = [
      [`Admin API listening on ${url}`, { url, docs: `${url}/docs`, openapi: `${url}/openapi.json` }],
      [`API reference: ${url}/docs (OpenAPI: ${url}/openapi.json)`],
      [`Store: ${describeStore(store)}`],
      [`Rate limits: ${describeRateLimitStore(rateLimitUrl)}`],
      [`Email: ${
        smtp === undefined ? "not sent, logged (set SMTP_URL and MAIL_FROM to send)" : `SMTP, from ${smtp.from}`
      }`],
      [`Email links: ${
        options.publicApiBaseUrl ?? `${options.serverUrl} (set PUBLIC_API_BASE_URL to the address customers reach)`
      }`],
      [
        options.operatorToken === undefined
          ? "Operator API: off (set OPERATOR_TOKEN to enable /operator)"
          : `Operator API: ${url}/operator (bearer OPERATOR_TOKEN)`
      ],
      [`Webhooks: ${options.webhooks.allowInsecure ? "http and https" : "https only"}, ${
        options.webhooks.allowPrivate ? "private hosts ALLOWED" : "public hosts only"
      }, timeout ${options.webhooks.timeoutMs} ms`],
      [`Limits: request ${config.limits.requestTimeoutMs} ms (imports ${config.limits.importRequestTimeoutMs} ms), headers ${config.limits.headersTimeoutMs} ms, keep-alive ${config.limits.keepAliveTimeoutMs} ms, ${config.limits.maxConnections} connections (${config.limits.maxConnectionsPerAddress} per address)`],
      [
        `Metrics: ${url}/metrics (${
          options.metricsToken === undefined
            ? "open; set METRICS_TOKEN to require a bearer token"
            : "bearer METRICS_TOKEN"
        })`,
        { metrics: `${url}/metrics` }
      ],
      [
        otlpEndpoint === undefined
          ? "Tracing: off (set OTEL_EXPORTER_OTLP_ENDPOINT to export OTLP traces and metrics)"
          : `Tracing: OTLP (${config.otlp.protocol}) to ${otlpEndpoint} as ${config.otlp.serviceName}`
      ],
      [stackTraces ? "Stack traces: on" : "Stack traces: off (set STACK_TRACES=true to log where errors were raised)"],
      seeded._tag === "Off"
        ? [`Demo: off (${seeded.reason})`]
        : seeded._tag === "Revoked"
        ? ["Demo key: the DEMO_SECRET_KEY key was revoked and is not issued again; choose another DEMO_SECRET_KEY"]
        : seeded._tag === "Created"
        ? [`Demo key (shown once; keep it): ${seeded.secretKey}`, { demoKey: seeded.secretKey }]
        : seeded.secretKey !== undefined
        ? [`Demo key: ${seeded.secretKey} (from DEMO_SECRET_KEY)`, { demoKey: seeded.secretKey }]
        : ["Demo key: printed at first start (only its hash is stored); set DEMO_SECRET_KEY to choose one"],
      ...(options.demo.current === undefined
        ? []
        : [[`Demo storefront: ${url}/demo (the widget on a product page)`, { demo: `${url}/demo` }] as const]),
      [`Try: curl -H "Authorization: Bearer <${
        seeded._tag === "Off" || seeded._tag === "Revoked" ? "secret key" : "demo key"
      }>" ${url}/organization`]
    ]
    for (const [message, fields] of lines) yield* Effect.logInfo(message).pipe(Effect.annotateLogs(fields ?? {}))
  })).pipe(Layer.provide(CoreLayer), Layer.provide(NodeHostResolver))

  const Services = storeLayer(store, {
    cursorSecret: Option.getOrUndefined(config.cursorSecret),
    rateLimitUrl: Option.getOrUndefined(config.rateLimitUrl)
  })
  // The store is built once, first, and given to the routes and the announcement only, not put around the server:
  // request fibers run in the server's context, which HttpApi copies into each request (docs/DECISIONS.md §42), and
  // nothing on a request's path reads a store service from it (the use-cases captured theirs when built).
  const App = Layer.unwrap(Effect.map(Layer.build(Services), (store) => {
    const Store = Layer.succeedContext(store)
    return HttpRouter.serve(ApiApplication(options).pipe(Layer.provide(Store)), {
      disableLogger: true,
      disableListenLog: true,
      middleware: apiMiddleware(options)
    }).pipe(
      Layer.merge(Announce.pipe(Layer.provide(Store))),
      Layer.provide(
        NodeHttpServer.layer(
          hardenedServer(config.limits, config.logRequests ? stdoutSink : () => {}, options.refusalGate),
          { port: config.port, host: config.host }
        )
      )
    )
  })).pipe(
    // Request fibers run in the context the server is given, so the logger and span names are provided around it.
    Layer.provide(ObservabilityLayer(options))
  )
  if (otlpEndpoint === undefined) {
    // Nothing exports spans, so the server records none: a span per use-case call then costs a no-op span, not a
    // live one (docs/DECISIONS.md §19).
    return yield* Layer.launch(App).pipe(Effect.withTracerEnabled(false))
  }
  const otlp = OtlpLayer({
    endpoint: otlpEndpoint,
    protocol: config.otlp.protocol,
    headers: parseOtlpHeaders(Option.getOrUndefined(config.otlp.headers)),
    serviceName: config.otlp.serviceName,
    traceExportIntervalMs: config.otlp.traceExportIntervalMs,
    metricExportIntervalMs: config.otlp.metricExportIntervalMs
  })
  // The exporters are outermost: they start first and, on shutdown, flush after the server has finished.
  return yield* Layer.launch(App.pipe(Layer.provide(otlp)))
})

// SIGTERM/SIGINT interrupt the server: it stops accepting, finishes in-flight requests, closes the pool, and a
// shutdown asked for is a success (exit 0), not an error.
export const teardown: Runtime.Teardown = (exit, onExit) =>
  onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)

// `serve` logs its own failure as a JSON line; the runtime's report would be a second line in another format.
// Every fiber of the process (requests, workers) yields into one queue bounded per turn of the event loop.
if (import.meta.main) {
  NodeRuntime.runMain(Effect.provideService(serve, Scheduler.Scheduler, new TurnScheduler()), {
    teardown,
    disableErrorReporting: true
  })
}
