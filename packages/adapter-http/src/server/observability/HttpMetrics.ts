/**
 * Request metrics (docs/DECISIONS.md §19, docs/OPERATIONS.md): a count and a latency histogram per method, route
 * pattern and status, recorded by the outermost middleware for every response, the framework's own included. The
 * route is the pattern (`/reviews/:id`), `unmatched` for unknown paths, and methods outside HTTP's usual set are
 * `other`, so no client can grow the label set.
 */
import { type Context, Metric } from "effect"

/** Seconds; the spread of an API whose calls take milliseconds and whose imports take seconds. */
const LATENCY_BOUNDARIES: ReadonlyArray<number> = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

interface Series {
  readonly requests: Metric.Counter<number>
  readonly duration: Metric.Histogram<number>
}

// One pair of metric objects per label set, made on first use: the set is bounded (methods × routes × statuses).
const series = new Map<string, Series>()

const seriesOf = (method: string, route: string, status: number): Series => {
  const key = `${method} ${route} ${status}`
  let found = series.get(key)
  if (found === undefined) {
    const attributes = { method, route, status: String(status) }
    found = {
      requests: Metric.counter("http_server_requests_total", {
        description: "HTTP requests answered, by method, route and status",
        attributes
      }),
      duration: Metric.histogram("http_server_request_duration_seconds", {
        description: "Time from a request's arrival to its response, by method, route and status",
        boundaries: LATENCY_BOUNDARIES,
        attributes
      })
    }
    series.set(key, found)
  }
  return found
}

const seriesFor = (method: string, route: string | undefined, status: number) =>
  seriesOf(KNOWN_METHODS.has(method) ? method : "other", route ?? "unmatched", status)

/** Records one answered request outside any fiber, into the metrics of `context` (for a request answered before Effect runs). */
export const recordRequestUnsafe = (
  context: Context.Context<never>,
  method: string,
  route: string | undefined,
  status: number,
  seconds: number
): void => {
  const { duration, requests } = seriesFor(method, route, status)
  requests.updateUnsafe(1, context)
  duration.updateUnsafe(seconds, context)
}
