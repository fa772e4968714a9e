/**
 * Rate-limit decisions as a metric (docs/DECISIONS.md §19): every spend on the API's own routes and on a host's
 * charged routes counts once, admitted or refused, so an operator sees throttling without reading access logs.
 * Effect's `Metric` keeps the series in the process; `/metrics` and the OTLP exporter read them from there.
 */
import { type Context, Effect, Metric } from "effect"
import type { SpendDecision } from "./RateLimitRepository.ts"

const description = "Rate-limit decisions on charged requests, by decision (admitted or refused)"

// One series per label value, made once: `Metric.withAttributes` per call would re-key the series on every request.
const decisions = {
  Admitted: Metric.counter("feedback_rate_limit_decisions_total", {
    description,
    attributes: { decision: "admitted" }
  }),
  Refused: Metric.counter("feedback_rate_limit_decisions_total", { description, attributes: { decision: "refused" } })
} as const

/** Counts one decision. */
export const recordRateLimitDecision = (decision: SpendDecision): Effect.Effect<void> =>
  Metric.update(decisions[decision._tag], 1)

/** `recordRateLimitDecision` outside any fiber, into the metrics of `context`. */
export const recordRateLimitDecisionUnsafe = (decision: SpendDecision, context: Context.Context<never>): void =>
  decisions[decision._tag].updateUnsafe(1, context)

/** Registers both series at 0, so a scrape shows them before the first request. */
export const initRateLimitMetrics: Effect.Effect<void> = Effect.andThen(
  Metric.update(decisions.Admitted, 0),
  Metric.update(decisions.Refused, 0)
)
