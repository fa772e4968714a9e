/**
 * `GET /metrics` (docs/DECISIONS.md §13, §19): every metric of the process in the Prometheus text format, read by
 * Effect's `PrometheusMetrics` from the same registry the OTLP exporter reads. With a token configured
 * (`METRICS_TOKEN`) the scrape must send it as a bearer token, else 401 in the error envelope; without one it is
 * open, for a port only the scraper reaches. Pool gauges are measured at each scrape.
 */
import { Kernel, RateLimits, Webhooks } from "@feedback/core"
import { Effect, Layer, Metric, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { createHash, timingSafeEqual } from "node:crypto"

const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const poolDescription =
  "Database connection pool: its size limit (max) and, on a PostgreSQL server, this pool's open and busy connections"
const poolGauges = {
  max: Metric.gauge("feedback_db_pool_connections", { description: poolDescription, attributes: { state: "max" } }),
  open: Metric.gauge("feedback_db_pool_connections", { description: poolDescription, attributes: { state: "open" } }),
  busy: Metric.gauge("feedback_db_pool_connections", { description: poolDescription, attributes: { state: "busy" } })
} as const

const recordPool = (usage: Kernel.PoolUsage | undefined) =>
  usage === undefined ? Effect.void : Effect.all([
    Metric.update(poolGauges.max, usage.max),
    usage.open === undefined ? Effect.void : Metric.update(poolGauges.open, usage.open),
    usage.busy === undefined ? Effect.void : Metric.update(poolGauges.busy, usage.busy)
  ], { discard: true })

const digest = (value: string) => createHash("sha256").update(value).digest()

/** Constant-time comparison of the bearer token with the configured one (both hashed first, so lengths match). */
const bearerMatches = (authorization: string | undefined, expected: Buffer) => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")
  return match !== null && timingSafeEqual(digest(match[1]!), expected)
}

const unauthorized = HttpServerResponse.jsonUnsafe(
  { error: { code: "UNAUTHORIZED", message: "Send the metrics token as `Authorization: Bearer <METRICS_TOKEN>`." } },
  { status: 401, headers: { "www-authenticate": "Bearer realm=\"metrics\"" } }
)

export const MetricsRoute = (token: Redacted.Redacted<string> | undefined) =>
  Layer.unwrap(Effect.gen(function*() {
    const health = yield* Kernel.StoreHealth
    // Series that only move on rare events are shown at 0 from the start, so `rate()` has a baseline.
    yield* RateLimits.initRateLimitMetrics
    yield* Webhooks.initWebhookMetrics
    const expected = token === undefined ? undefined : digest(Redacted.value(token))
    const scrape = Effect.gen(function*() {
      if (expected !== undefined) {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!bearerMatches(request.headers["authorization"], expected)) return unauthorized
      }
      yield* Effect.flatMap(health.poolUsage, recordPool)
      const body = yield* PrometheusMetrics.format()
      return HttpServerResponse.text(body, {
        contentType: PROMETHEUS_CONTENT_TYPE,
        headers: { "cache-control": "no-store" }
      })
    })
    return HttpRouter.add("GET", "/metrics", scrape)
  }))
