/** An organization: the tenant every call acts on, with the plan's request allowance. */
import { Schema } from "effect"
import { OrganizationId } from "../kernel/Ids.ts"
import { BoundedText } from "../kernel/Text.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

/** Default `apiRequestsPerMinute` of a plan (spec: Limits, burst ceiling 600). */
export const DEFAULT_API_REQUESTS_PER_MINUTE = 600

export const ApiRequestsPerMinute = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })))

/**
 * The plan: `apiRequestsPerMinute` sizes the organization bucket; the loyalty allowances, present only when set,
 * size the per-endpoint buckets of `POST /loyalty-events` and `/loyalty-stamps` (spec: Limits), which an embedding
 * host's routes spend from through `RateLimits` (docs/DECISIONS.md §13).
 */
export const Plan = Schema.Struct({
  apiRequestsPerMinute: ApiRequestsPerMinute,
  loyaltyEventsPerMinute: Schema.optionalKey(ApiRequestsPerMinute),
  loyaltyStampsPerMinute: Schema.optionalKey(ApiRequestsPerMinute),
  /** Storefront reads per publishable key and client address (docs/DECISIONS.md §55); absent: 600. */
  storefrontReadsPerMinute: Schema.optionalKey(ApiRequestsPerMinute),
  /** Storefront submissions per publishable key and client address; absent: 20 an hour. */
  storefrontSubmissionsPerHour: Schema.optionalKey(ApiRequestsPerMinute)
})
export type Plan = typeof Plan.Type

/** A change of plan: only sent fields change; `null` removes an optional allowance (its bucket's defaults apply). */
export const PlanPatch = Schema.Struct({
  apiRequestsPerMinute: Schema.optionalKey(ApiRequestsPerMinute),
  loyaltyEventsPerMinute: Schema.optionalKey(Schema.NullOr(ApiRequestsPerMinute)),
  loyaltyStampsPerMinute: Schema.optionalKey(Schema.NullOr(ApiRequestsPerMinute)),
  storefrontReadsPerMinute: Schema.optionalKey(Schema.NullOr(ApiRequestsPerMinute)),
  storefrontSubmissionsPerHour: Schema.optionalKey(Schema.NullOr(ApiRequestsPerMinute))
})
export type PlanPatch = typeof PlanPatch.Type

/** The plan values that are absent unless set (`null` in a patch removes one, and its default applies again). */
export const optionalAllowances = [
  "loyaltyEventsPerMinute",
  "loyaltyStampsPerMinute",
  "storefrontReadsPerMinute",
  "storefrontSubmissionsPerHour"
] as const

export const applyPlanPatch = (plan: Plan, patch: PlanPatch): Plan => {
  const next: { -readonly [K in keyof Plan]: Plan[K] } = {
    ...plan,
    apiRequestsPerMinute: patch.apiRequestsPerMinute ?? plan.apiRequestsPerMinute
  }
  for (const key of optionalAllowances) {
    const value = patch[key]
    if (value === null) delete next[key]
    else if (value !== undefined) next[key] = value
  }
  return next
}

/**
 * The embedding host's own id of the tenant (docs/DECISIONS.md §65): unique among organizations, optional, 1..255
 * characters of stored text, so a host maps its tenants without keeping a table of its own.
 */
export const ExternalOrganizationId = BoundedText(255, 1)

export const Organization = Schema.Struct({
  id: OrganizationId,
  name: Schema.String,
  /** Present when the host set one. */
  externalId: Schema.optionalKey(Schema.String),
  plan: Plan,
  createdAt: Timestamp
}).annotate({ identifier: "Organization" })
export type Organization = typeof Organization.Type

/**
 * An operator's change to an organization (`PATCH /operator/organizations/{id}`): the plan's fields as `PlanPatch`,
 * and `externalId` (`null` removes it). Only sent fields change.
 */
export const OrganizationPatch = Schema.Struct({
  ...PlanPatch.fields,
  externalId: Schema.optionalKey(Schema.NullOr(ExternalOrganizationId))
})
export type OrganizationPatch = typeof OrganizationPatch.Type
