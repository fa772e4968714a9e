/**
 * Rate limits for an embedding host's own routes (docs/DECISIONS.md §3, §13): a host that serves the spec's loyalty
 * endpoints (`POST /loyalty-events`, `/loyalty-stamps`, `/loyalty-history`) or any other charges each request here,
 * exactly as the API's own routes are charged: the cost from the cost table, the organization bucket and the
 * endpoint's own bucket sized by the plan, spent all-or-nothing in the store, so every process shares one limit.
 */
import { Context, Effect, Layer, Option } from "effect"
import { CurrentCaller } from "../kernel/Caller.ts"
import { NotFound, type TooManyRequests } from "../kernel/Errors.ts"
import { OrganizationRepository } from "../organizations/OrganizationRepository.ts"
import { RateLimitRepository, type SpendAdmitted, tooManyRequests } from "./RateLimitRepository.ts"
import { recordRateLimitDecision } from "./RateLimitMetrics.ts"
import { bucketsForKey, costOfKey, endpointKey } from "./RateLimitTable.ts"

/** What a charge answered: the admitted spend (for the response's rate-limit headers), or a dashboard user's call. */
export type RateLimitCharge = SpendAdmitted | { readonly _tag: "Unmetered" }

export class RateLimits extends Context.Service<RateLimits, {
  /**
   * Charges the current caller for one request to `method routeTemplate` (a route template such as
   * `/loyalty-events`, never a concrete path). A secret key spends; a refusal is `TooManyRequests` (the 429 with
   * its `Retry-After`) and charges nothing. A dashboard user is not rate limited (spec: Authentication).
   */
  readonly charge: (
    method: string,
    routeTemplate: string
  ) => Effect.Effect<RateLimitCharge, TooManyRequests | NotFound, CurrentCaller>
}>()("feedback/RateLimits") {
  static readonly layer = Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const store = yield* RateLimitRepository
      const organizations = yield* OrganizationRepository
      return RateLimits.of({
        charge: Effect.fn("RateLimits.charge")(function*(method: string, routeTemplate: string) {
          const caller = yield* CurrentCaller
          if (caller._tag === "DashboardCaller") return { _tag: "Unmetered" } as const
          const organization = yield* organizations.findById(caller.organizationId)
          if (Option.isNone(organization)) return yield* NotFound.of("organization", caller.organizationId)
          const key = endpointKey(method, routeTemplate)
          const decision = yield* store.spend(
            caller.organizationId,
            bucketsForKey(key, organization.value.plan),
            costOfKey(key)
          )
          yield* recordRateLimitDecision(decision)
          if (decision._tag === "Refused") return yield* tooManyRequests(decision)
          return decision
        })
      })
    })
  )
}
