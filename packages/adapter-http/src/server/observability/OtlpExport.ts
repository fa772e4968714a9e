/**
 * OTLP export of traces and metrics with Effect's own exporters (docs/DECISIONS.md §19, docs/OPERATIONS.md), on when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set. Traces: Effect's HTTP server span per request (continuing an incoming
 * `traceparent`, carrying the request id), a span per use-case (`Effect.fn("Service.method")`) and per SQL
 * statement. Metrics: the same registry `/metrics` shows, pushed on an interval.
 *
 * Effect's `Otlp.layerFromConfig` exports only when `OTEL_TRACES_EXPORTER=otlp` is also set; the OpenTelemetry
 * convention (and this server) is that the endpoint alone turns export on, so the layer is built here from the
 * standard variables.
 */
import { Duration, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"

export interface OtlpOptions {
  /** Base URL; `/v1/traces` and `/v1/metrics` are appended (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  readonly endpoint: string
  /** `http/protobuf` (the OpenTelemetry default) or `http/json` (`OTEL_EXPORTER_OTLP_PROTOCOL`). */
  readonly protocol: "http/protobuf" | "http/json"
  /** Sent with every export, e.g. a vendor's API key (`OTEL_EXPORTER_OTLP_HEADERS`, `k=v,k2=v2`). */
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** How often finished spans are sent (`OTEL_BSP_SCHEDULE_DELAY`, ms; 5,000). */
  readonly traceExportIntervalMs: number
  /** How often metrics are sent (`OTEL_METRIC_EXPORT_INTERVAL`, ms; 60,000). */
  readonly metricExportIntervalMs: number
}

/** `k=v,k2=v2` with percent-encoded values, as the OpenTelemetry specification writes headers in the environment. */
export const parseOtlpHeaders = (value: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of (value ?? "").split(",")) {
    const eq = pair.indexOf("=")
    if (eq <= 0) continue
    try {
      headers[pair.slice(0, eq).trim().toLowerCase()] = decodeURIComponent(pair.slice(eq + 1).trim())
    } catch {
      // A value that is not valid percent-encoding is skipped rather than sent mangled.
    }
  }
  return headers
}

const url = (endpoint: string, signal: "traces" | "metrics") => `${endpoint.replace(/\/+$/, "")}/v1/${signal}`

/** The tracer and the metrics exporter; both flush what they hold when the layer's scope closes (shutdown). */
export const OtlpLayer = (options: OtlpOptions) => {
  const resource = { serviceName: options.serviceName, serviceVersion: options.serviceVersion }
  return Layer.mergeAll(
    OtlpTracer.layer({
      url: url(options.endpoint, "traces"),
      resource,
      headers: options.headers,
      exportInterval: Duration.millis(options.traceExportIntervalMs)
    }),
    OtlpMetrics.layer({
      url: url(options.endpoint, "metrics"),
      resource,
      headers: options.headers,
      exportInterval: Duration.millis(options.metricExportIntervalMs)
    })
  ).pipe(
    Layer.provide(options.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
  )
}
