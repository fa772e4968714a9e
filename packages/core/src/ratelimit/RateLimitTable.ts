/**
 * The spec's rate-limit tables (spec: Limits) as data: the token cost of each endpoint and the per-endpoint buckets
 * a request spends from in addition to the organization-wide one. Endpoints that are not built yet are listed too,
 * so the table stays a copy of the spec rather than of the router.
 *
 * Endpoints are keyed `"<METHOD> <route template>"` with the spec's `{id}` placeholders, e.g. `"GET /reviews/{id}"`.
 * Lookups also accept a router's `:id` form (`/reviews/:id` is `/reviews/{id}`), a lower-case method and a trailing
 * slash. They take the route template, never a concrete path such as `/reviews/0190…`.
 */
import { type BucketSpec, bucketForPlan } from "./TokenBucket.ts"

/** The plan values the buckets are sized from. `Organization.Plan` satisfies it; the loyalty allowances are optional. */
export interface PlanAllowances {
  readonly apiRequestsPerMinute: number
  readonly loyaltyEventsPerMinute?: number | undefined
  readonly loyaltyStampsPerMinute?: number | undefined
}

/** Cost of every endpoint the cost table does not name (spec: "Everything else"). */
export const DEFAULT_COST = 1

/** Token costs (spec: Limits, token costs; Reviews, rate cost column). Anything absent costs `DEFAULT_COST`. */
export const costTable: Readonly<Record<string, number>> = {
  "POST /customers/import": 10,
  "POST /orders/import": 10,
  "POST /products/import": 10,
  "POST /reviews/import": 10,
  "POST /wishlists/import": 10,
  "POST /loyalty-memberships/import": 10,
  "POST /loyalty-history": 10,
  "POST /import-jobs": 10,
  "POST /export-jobs": 10,

  "POST /analytics/query": 5,
  "PATCH /customers/bulk-update": 5,
  "PATCH /orders/bulk-update": 5,
  "PATCH /products/bulk-update": 5,
  "PATCH /reviews/bulk-update": 5,
  "POST /loyalty-activity/bulk-expire": 5,

  // Stated explicitly by the spec's Reviews table; the same as the default.
  "GET /reviews": 1,
  "GET /reviews/{id}": 1,
  "PATCH /reviews/{id}": 1,
  "DELETE /reviews/{id}": 1,
  "POST /reviews/{id}/response": 1,
  "PATCH /reviews/{id}/response": 1,
  "DELETE /reviews/{id}/response": 1
}

/** The plan value that sizes a per-endpoint bucket, when the spec names one. */
export type AllowanceKey = "loyaltyEventsPerMinute" | "loyaltyStampsPerMinute"

export interface EndpointBucketRule {
  /** Burst ceiling when the plan sets no allowance. */
  readonly burst: number
  /** Refill per second when the plan sets no allowance. */
  readonly refillPerSecond: number
  /**
   * A plan value N that, when set, replaces burst and refill by ceiling N and N/60 per second — the same shape as the
   * organization bucket and `apiRequestsPerMinute` (the defaults, 120 and 2/s, are that shape for N = 120).
   */
  readonly allowance: AllowanceKey | undefined
}

/** Per-endpoint buckets (spec: Limits, separate per-endpoint buckets). The bucket's key is the endpoint key. */
export const endpointBucketTable: Readonly<Record<string, EndpointBucketRule>> = {
  "POST /loyalty-events": { burst: 120, refillPerSecond: 2, allowance: "loyaltyEventsPerMinute" },
  "POST /loyalty-stamps": { burst: 120, refillPerSecond: 2, allowance: "loyaltyStampsPerMinute" },
  "POST /loyalty-history": { burst: 30, refillPerSecond: 1, allowance: undefined }
}

/** Key of the organization-wide bucket, shared by every key of the organization and always spent from first. */
export const ORG_BUCKET_KEY = "org"

export interface KeyedBucket {
  readonly key: string
  readonly spec: BucketSpec
}

/**
 * The canonical `"<METHOD> <template>"` key of an endpoint: method upper-cased, `:name` segments written `{name}`,
 * trailing slash dropped.
 */
export const endpointKey = (method: string, routeTemplate: string): string => {
  const path = routeTemplate
    .split("/")
    .map((segment) => (segment.startsWith(":") ? `{${segment.slice(1)}}` : segment))
    .join("/")
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  return `${method.toUpperCase()} ${trimmed}`
}

/** Token cost of one request to the endpoint (the `x-rate-limit-cost` header). */
export const costOf = (method: string, routeTemplate: string): number => costOfKey(endpointKey(method, routeTemplate))

/** `costOf` by canonical endpoint key (`endpointKey`). */
export const costOfKey = (key: string): number => costTable[key] ?? DEFAULT_COST

const endpointSpec = (rule: EndpointBucketRule, plan: PlanAllowances): BucketSpec => {
  const allowance = rule.allowance === undefined ? undefined : plan[rule.allowance]
  return allowance === undefined
    ? { ceiling: rule.burst, refillPerSecond: rule.refillPerSecond }
    : bucketForPlan(allowance)
}

/**
 * The buckets a request to the endpoint spends from, sized by the organization's plan: the organization bucket
 * (`ORG_BUCKET_KEY`) first, then the endpoint's own bucket if it has one (keyed by `endpointKey`).
 */
export const bucketsFor = (method: string, routeTemplate: string, plan: PlanAllowances): ReadonlyArray<KeyedBucket> =>
  bucketsForKey(endpointKey(method, routeTemplate), plan)

/** `bucketsFor` by canonical endpoint key (`endpointKey`), for a caller that computed the key once per route. */
export const bucketsForKey = (key: string, plan: PlanAllowances): ReadonlyArray<KeyedBucket> => {
  const org: KeyedBucket = { key: ORG_BUCKET_KEY, spec: bucketForPlan(plan.apiRequestsPerMinute) }
  const rule = endpointBucketTable[key]
  return rule === undefined ? [org] : [org, { key, spec: endpointSpec(rule, plan) }]
}
