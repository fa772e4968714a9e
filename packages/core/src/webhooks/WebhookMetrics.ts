/**
 * Webhook deliveries as a metric (docs/DECISIONS.md §19): each attempt's outcome, finer than the delivery log's
 * `delivered`/`failed` so a dashboard tells a receiver answering 500 from one that times out or a URL the SSRF guard
 * refuses. Deliveries failed as `interrupted` by recovery (their dispatcher died) count too.
 */
import { Effect, Metric } from "effect"

export type DeliveryOutcomeLabel = "delivered" | "http_error" | "timeout" | "network_error" | "blocked" | "interrupted"

const description =
  "Webhook delivery attempts by outcome (delivered, http_error, timeout, network_error, blocked, interrupted)"

const labels: ReadonlyArray<DeliveryOutcomeLabel> = [
  "delivered",
  "http_error",
  "timeout",
  "network_error",
  "blocked",
  "interrupted"
]
const series = Object.fromEntries(
  labels.map((
    outcome
  ) => [outcome, Metric.counter("feedback_webhook_deliveries_total", { description, attributes: { outcome } })])
) as Record<DeliveryOutcomeLabel, Metric.Counter<number>>

/** Counts `count` deliveries that ended with `outcome`. */
export const recordWebhookDeliveries = (outcome: DeliveryOutcomeLabel, count = 1): Effect.Effect<void> =>
  count === 0 ? Effect.void : Metric.update(series[outcome], count)

/** Registers every outcome's series at 0, so a scrape shows them before the first delivery (and `rate()` works). */
export const initWebhookMetrics: Effect.Effect<void> = Effect.forEach(
  labels,
  (outcome) => Metric.update(series[outcome], 0),
  { discard: true }
)
