/** An organization: the tenant every call acts on, with the plan's request allowance. */
import { Schema } from "effect"
import { OrganizationId } from "../kernel/Ids.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

/** Default `apiRequestsPerMinute` of a plan (spec: Limits, burst ceiling 600). */
export const DEFAULT_API_REQUESTS_PER_MINUTE = 600

export const ApiRequestsPerMinute = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })))

export const Plan = Schema.Struct({ apiRequestsPerMinute: ApiRequestsPerMinute })
export type Plan = typeof Plan.Type

export const Organization = Schema.Struct({
  id: OrganizationId,
  name: Schema.String,
  plan: Plan,
  createdAt: Timestamp
})
export type Organization = typeof Organization.Type
