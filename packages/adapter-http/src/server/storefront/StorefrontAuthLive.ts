/**
 * The storefront's admission path (docs/DECISIONS.md §55), the publishable-key counterpart of `SecretKeyAuthLive`:
 * 1. authenticate the publishable key from the header or the query (401, one message for every failure; a secret
 *    key is never one, and revocation is heard across processes like a secret key's);
 * 2. charge the key's bucket for the client address (reads or submissions, never the organization's secret-key
 *    bucket); a refusal is the 429 of docs/DECISIONS.md §3, nothing applied;
 * 3. CORS for the organization's site domains, then the endpoint with the storefront caller provided; a submission
 *    has its JSON body measured first and runs under its `Idempotency-Key` when it sends one.
 */
import { Idempotency, Organizations, RateLimits, Storefront } from "@feedback/core"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { StorefrontAuth } from "@feedback/client/effect"
import { idempotently } from "../idempotency/IdempotentRequests.ts"
import { guardJsonBody } from "../JsonBodyShape.ts"
import { spendAlongsideRead } from "../ReadAlongsideSpend.ts"
import { rateLimitHeaders, refusedResponse } from "../SecretKeyAuthLive.ts"
import { clientAddressOf, parseTrustProxy } from "./ClientAddress.ts"
import { takeAdmission } from "./HandedAdmissions.ts"
import { namesATag } from "./HttpCaching.ts"
import { corsHeaders } from "./StorefrontCors.ts"

export interface StorefrontOptions {
  /** `TRUST_PROXY`: comma-separated addresses and CIDRs of proxies whose `X-Forwarded-For` is believed; none by default. */
  readonly trustProxy?: string | undefined
}

export const StorefrontAuthLive = (options: StorefrontOptions = {}) =>
  Layer.effect(
    StorefrontAuth,
    Effect.gen(function*() {
      const organizations = yield* Organizations.Organizations
      const rateLimits = yield* RateLimits.RateLimitRepository
      const reads = yield* Storefront.StorefrontReads
      const idempotency = yield* Idempotency.Idempotency
      const trusted = parseTrustProxy(options.trustProxy ?? "")
      const spendWithVersion = rateLimits.spendWithStorefrontVersion

      const admit: Parameters<typeof StorefrontAuth.of>[0]["publishableKeyHeader"] = (
        httpEffect,
        { credential, endpoint }
      ) =>
        Effect.withFiber((fiber) => {
          const context = fiber.context as Context.Context<never>
          const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
          return Effect.flatMap(organizations.authenticatePublishableKey(Redacted.value(credential)), (key) => {
            const clientAddress = clientAddressOf(
              Option.getOrUndefined(request.peerAddress),
              request.headers["x-forwarded-for"],
              trusted
            )
            const action = Storefront.storefrontActionOf(request.method)
            const policy = Storefront.storefrontPolicyName(action)
            const bucket = Storefront.storefrontBucket(action, key.keyId, clientAddress, key.organization.plan)
            const spend = rateLimits.spend(key.organization.id, [bucket], 1)
            const origin = request.headers["origin"]
            // Refused: the 429 with CORS headers. Admitted: undefined, the rate-limit and CORS headers set on the answer.
            const admitted = (decision: RateLimits.SpendDecision) => {
              RateLimits.recordRateLimitDecisionUnsafe(decision, context)
              const cors = origin === undefined ? Effect.succeed(corsHeaders(undefined)) : Effect.map(
                reads.allowsOrigin(key.organization.id, origin),
                (allowed) => corsHeaders(allowed ? origin : undefined)
              )
              return Effect.map(cors, (headers) => {
                if (decision._tag === "Refused") {
                  return HttpServerResponse.setHeaders(refusedResponse(decision, policy), headers)
                }
                const answered = { ...rateLimitHeaders(decision, policy), ...headers }
                HttpEffect.appendPreResponseHandlerUnsafe(
                  context,
                  (_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, answered))
                )
                return undefined
              })
            }
            const caller: Storefront.StorefrontCaller = { ...key, clientAddress }
            const run = Effect.provideService(httpEffect, Storefront.CurrentStorefrontCaller, caller)
            // A storefront read is pure: it runs while a spend that waits on I/O is in flight, the decision still first
            // (docs/DECISIONS.md §28). A submission's JSON is measured before it is parsed, and honours Idempotency-Key
            // (docs/DECISIONS.md §18), keyed per organization like the admin API's (a replay needs the same method, path
            // and body as well); it runs only once admitted.
            if (action === "read") {
              // Spent by the revalidation gate, whose tag did not match: its decision and version, never a second spend.
              const handed = takeAdmission(request.source, bucket.key)
              if (handed !== undefined) {
                return Effect.flatMap(admitted(handed.decision), (refusal) =>
                  refusal !== undefined
                    ? Effect.succeed(refusal)
                    : Effect.provideService(httpEffect, Storefront.CurrentStorefrontCaller, {
                      ...caller,
                      storefrontVersion: handed.storefrontVersion
                    }))
              }
              // A store that reads the content version with the spend saves the read's own probe: the read then waits
              // for that statement, so the version is read before the read starts (docs/DECISIONS.md §70). Unless
              // the read takes its tag from its own first statement and has no tag to compare before it: then it
              // runs alongside a plain spend (§78).
              const alongside = reads.tagged !== undefined && !namesATag(request.headers["if-none-match"])
              if (spendWithVersion !== undefined && rateLimits.decidesInProcess !== true && !alongside) {
                return Effect.flatMap(
                  spendWithVersion(key.organization.id, [bucket], 1),
                  ({ decision, storefrontVersion }) =>
                    Effect.flatMap(admitted(decision), (refusal) =>
                      refusal !== undefined
                        ? Effect.succeed(refusal)
                        : Effect.provideService(httpEffect, Storefront.CurrentStorefrontCaller, {
                          ...caller,
                          storefrontVersion
                        }))
                )
              }
              return rateLimits.decidesInProcess === true
                ? Effect.flatMap(spend, (decision) =>
                  Effect.flatMap(
                    admitted(decision),
                    (refusal) => refusal === undefined ? run : Effect.succeed(refusal)
                  ))
                : spendAlongsideRead(spend, admitted, run)
            }
            return Effect.flatMap(spend, (decision) =>
              Effect.flatMap(admitted(decision), (refusal) =>
                refusal === undefined
                  ? Effect.andThen(guardJsonBody, idempotently(idempotency, endpoint, key.organization.id, run))
                  : Effect.succeed(refusal)))
          })
        })

      return StorefrontAuth.of({ publishableKeyHeader: admit, publishableKeyQuery: admit })
    })
  )
