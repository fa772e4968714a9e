/**
 * The secret-key middleware, the whole admission path of an admin API request:
 * 1. authenticate the bearer key (401, one message for every failure);
 * 2. charge the organization's rate-limit buckets (docs/DECISIONS.md §3: after authentication, before validation; 429 with
 *    `Retry-After` and nothing applied when unaffordable);
 * 3. check the endpoint's declared permission (403);
 * 4. measure a JSON body before anything parses it (400 when too deep or too big in values; `JsonBodyShape.ts`);
 * 5. run the endpoint (which then decodes the request) with the caller provided, under the request's
 *    `Idempotency-Key` when a POST, PATCH or DELETE sends one (`idempotency/IdempotentRequests.ts`).
 * Every charged response carries `x-rate-limit-cost`, `X-RateLimit-Limit` and `X-RateLimit-Remaining`.
 */
import { Idempotency, Kernel, Organizations, RateLimits } from "@feedback/core"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { HttpApiEndpoint } from "effect/http-api"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PermissionByInput, RequiredPermission, SecretKeyAuth } from "@feedback/client/effect"
import { idempotently } from "./idempotency/IdempotentRequests.ts"
import { HostAuthentication, runAuthenticate } from "./HostAuthentication.ts"
import { guardJsonBody, hasJsonBody } from "./JsonBodyShape.ts"
import { readsAlongsideSpend, spendThenRead } from "./ReadAlongsideSpend.ts"

/**
 * The rate-limit headers of a decision: the `X-RateLimit-*` pair and `Retry-After` (docs/DECISIONS.md §3), and the
 * IETF fields (draft-ietf-httpapi-ratelimit-headers-11, §15): the policy of the organization bucket, a minute's
 * worth of `q` tokens, and its state, `r` whole tokens left and `t` whole seconds until it is full again. The API's
 * own routes spend from the organization bucket only, so `"org"` is the one list member.
 */
export const rateLimitHeaders = (decision: RateLimits.SpendDecision, policy = "org"): Record<string, string> => ({
  "x-rate-limit-cost": String(decision.cost),
  "x-ratelimit-limit": String(decision.limit),
  "x-ratelimit-remaining": String(decision.remaining),
  // A storefront submission bucket refills its ceiling in an hour (docs/DECISIONS.md §55).
  "ratelimit-policy": `"${policy}";q=${decision.limit};w=${policy === "storefront-submission" ? 3600 : 60}`,
  "ratelimit": `"${policy}";r=${decision.remaining}` +
    (decision.fullInSeconds === undefined ? "" : `;t=${decision.fullInSeconds}`),
  ...(decision._tag === "Refused" && decision.retryAfterSeconds !== undefined
    ? { "retry-after": String(decision.retryAfterSeconds) }
    : {})
})

/**
 * The 429 of a refusal, written here instead of failing with `TooManyRequests` for the framework to encode: a refused
 * request should be the cheapest answer the API gives (a flood of them is what the limiter exists to absorb), and
 * constructing and schema-encoding the error was about a seventh of it. The bytes are exactly the contract's
 * encoding of `tooManyRequests(decision)` (`RefusedResponse.test.ts` compares them on random decisions).
 */
export const refusedResponse = (
  decision: RateLimits.SpendRefused,
  policy = "org"
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(refusalBody(decision), {
    status: Kernel.errorWire.TooManyRequests.status,
    contentType: "application/json",
    headers: rateLimitHeaders(decision, policy)
  })

/** The JSON body of a refusal's 429 (see `refusedResponse`). */
export const refusalBody = (decision: RateLimits.SpendRefused): string =>
  JSON.stringify({
    error: {
      code: Kernel.errorWire.TooManyRequests.code,
      message: RateLimits.refusalMessage(decision),
      details: {
        ...(decision.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: decision.retryAfterSeconds }),
        cost: decision.cost,
        limit: decision.limit,
        remaining: decision.remaining
      }
    }
  })

/**
 * Counts the decision, and answers a refusal's 429 (undefined: admitted, its rate-limit headers set on whatever the
 * request answers). Done in place with the request's context, not as effects of their own: on the memory store this
 * is most of what admission costs beyond the bucket arithmetic (docs/DECISIONS.md §42).
 */
const admitUnsafe = (
  decision: RateLimits.SpendDecision,
  context: Context.Context<never>
): HttpServerResponse.HttpServerResponse | undefined => {
  RateLimits.recordRateLimitDecisionUnsafe(decision, context)
  if (decision._tag === "Refused") return refusedResponse(decision)
  HttpEffect.appendPreResponseHandlerUnsafe(
    context,
    (_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, rateLimitHeaders(decision)))
  )
  return undefined
}

/** What the middleware needs to know about a route, computed on its first request rather than on every one. */
interface RouteFacts {
  readonly key: string
  readonly cost: number
  readonly permission: Option.Option<RequiredPermission["Service"]>
  /** The use-case checks a permission that depends on the input (`PermissionByInput`). */
  readonly permissionByInput: boolean
}
const routeFacts = new WeakMap<HttpApiEndpoint.Top, RouteFacts>()
const factsOf = (endpoint: HttpApiEndpoint.Top): RouteFacts => {
  let facts = routeFacts.get(endpoint)
  if (facts === undefined) {
    const key = RateLimits.endpointKey(endpoint.method, endpoint.path)
    facts = {
      key,
      cost: RateLimits.costOfKey(key),
      permission: Context.getOption(endpoint.annotations, RequiredPermission),
      permissionByInput: Option.isSome(Context.getOption(endpoint.annotations, PermissionByInput))
    }
    routeFacts.set(endpoint, facts)
  }
  return facts
}

export const SecretKeyAuthLive = Layer.effect(
  SecretKeyAuth,
  Effect.gen(function*() {
    // Captured once: a request's effect needs nothing but what it is given (never `Effect.provide(context)`, which
    // copies every service of the application into each request's context; docs/ARCHITECTURE.md).
    const organizations = yield* Organizations.Organizations
    const rateLimits = yield* RateLimits.RateLimitRepository
    const idempotency = yield* Idempotency.Idempotency
    const authenticate = yield* HostAuthentication
    const readsAlongside = (key: string) => rateLimits.decidesInProcess !== true && readsAlongsideSpend.has(key)
    return SecretKeyAuth.of({
      // Plain continuations rather than generators: each step of this middleware runs on every authenticated request.
      bearer: (httpEffect, { credential, endpoint }) =>
        Effect.withFiber((fiber) => {
          const context = fiber.context as Context.Context<never>
          const { cost, key, permission, permissionByInput } = factsOf(endpoint)
          const guarded = (caller: Kernel.Caller) =>
            Effect.andThen(
              guardJsonBody,
              Effect.provideService(
                idempotently(idempotency, endpoint, caller.organizationId, httpEffect),
                Kernel.CurrentCaller,
                caller
              )
            )
          const proceed = (caller: Kernel.Caller): Effect.Effect<
            HttpServerResponse.HttpServerResponse,
            Effect.Error<ReturnType<typeof guarded>> | Kernel.Forbidden,
            Effect.Services<ReturnType<typeof guarded>>
          > => {
            // Every secured endpoint declares its permission; one that does not is a contract bug, never open access.
            if (Option.isNone(permission)) {
              if (!permissionByInput) {
                return Effect.die(new Error(`endpoint ${endpoint.name} declares no permission`))
              }
            } else if (!Kernel.hasPermission(caller, permission.value)) {
              return Effect.fail(Kernel.Forbidden.missing(permission.value))
            }
            // A request with no JSON body to measure and no Idempotency-Key to honour (every GET) runs as it is.
            const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
            return !Idempotency.idempotentMethods.has(request.method) && !hasJsonBody(request)
              ? Effect.provideService(httpEffect, Kernel.CurrentCaller, caller)
              : guarded(caller)
          }
          // An organization's caller spends from its buckets first (docs/DECISIONS.md §3).
          const charged = (caller: Kernel.Caller, organization: Organizations.Organization) => {
            const spend = rateLimits.spend(organization.id, RateLimits.bucketsForKey(key, organization.plan), cost)
            // A pure read runs while a spend that waits on I/O is in flight; the decision still comes first
            // (ReadAlongsideSpend.ts). Everything else, and every spend decided in this process, in sequence.
            if (readsAlongside(key)) {
              return spendThenRead(
                key,
                spend,
                (decision) => Effect.succeed(admitUnsafe(decision, context)),
                Effect.suspend(() => proceed(caller))
              )
            }
            return Effect.flatMap(spend, (decision) => {
              const refusal = admitUnsafe(decision, context)
              return refusal === undefined ? proceed(caller) : Effect.succeed(refusal)
            })
          }
          const bySecretKey = () =>
            Effect.flatMap(
              organizations.authenticateSecretKey(Redacted.value(credential)),
              ({ caller, organization }) => charged(caller, organization)
            )
          if (authenticate === undefined) return bySecretKey()
          // The host's authentication first (HostAuthentication.ts): a dashboard user is never rate limited (spec:
          // Authentication 4); an organization's caller it makes is charged like a key; none: the bearer key decides.
          const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
          return Effect.flatMap(runAuthenticate(authenticate, request), (caller) =>
            caller === undefined
              ? bySecretKey()
              : caller._tag === "DashboardCaller"
              ? proceed(caller)
              : Effect.flatMap(
                organizations.findOrganization(caller.organizationId).pipe(
                  Effect.catchTag("NotFound", () => Effect.fail(Kernel.Unauthorized.default()))
                ),
                (organization) => charged(caller, organization)
              ))
        })
    })
  })
)
