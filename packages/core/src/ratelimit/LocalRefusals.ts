/**
 * Cheap refusals (docs/DECISIONS.md §3): once the store has refused an organization, its buckets are known to hold at
 * most what they held then plus their refill since — spending only lowers a level, and nothing else raises it. Until
 * that bound can pay for a request, this process refuses it itself, with `TokenBucket`'s own answer for the bound
 * (the same decision, `Retry-After` and headers the store would give if nobody else spent meanwhile), and no store
 * round trip or write. It never admits on its own, so it can never admit more than the store would, in any process.
 *
 * The bound is dropped when the store admits for the organization (its levels moved), and at most `maxOrganizations`
 * bounds are kept (the oldest goes first). A request whose buckets are not all bounded goes to the store.
 */
import { Clock, Effect, Layer } from "effect"
import { RateLimitRepository, type SpendDecision, type SpendRefused, toSpendDecision } from "./RateLimitRepository.ts"
import type { KeyedBucket } from "./RateLimitTable.ts"
import * as TokenBucket from "./TokenBucket.ts"

export interface LocalRefusalsOptions {
  /** Organizations whose bound is kept at most; default 10,000. */
  readonly maxOrganizations?: number | undefined
}

/** `store`, refusing locally while a known bound cannot pay (see the module comment). */
export const withLocalRefusals = (
  store: RateLimitRepository["Service"],
  options: LocalRefusalsOptions = {}
): RateLimitRepository["Service"] => {
  const maxOrganizations = options.maxOrganizations ?? 10_000
  // organization -> bucket key -> the level the store last refused from (`undefined`: full).
  const bounds = new Map<string, Map<string, TokenBucket.BucketState | undefined>>()

  const localDecision = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, cost: number, nowMs: number) => {
    const known = bounds.get(organizationId)
    if (known === undefined || !buckets.every((b) => known.has(b.key))) return undefined
    const result = TokenBucket.spend(buckets.map((b) => ({ spec: b.spec, state: known.get(b.key) })), cost, nowMs)
    return result._tag === "Refused" ? toSpendDecision(buckets, result, cost) : undefined
  }

  const remember = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, decision: SpendDecision) => {
    if (decision._tag === "Admitted" || decision.states === undefined) {
      bounds.delete(organizationId)
      return
    }
    const known = bounds.get(organizationId) ?? new Map<string, TokenBucket.BucketState | undefined>()
    buckets.forEach((b, i) => known.set(b.key, decision.states![i]))
    bounds.delete(organizationId) // re-inserted last: the Map's order is the eviction order
    bounds.set(organizationId, known)
    while (bounds.size > maxOrganizations) bounds.delete(bounds.keys().next().value!)
  }

  return RateLimitRepository.of({
    ...(store.purgeIdle === undefined ? {} : { purgeIdle: store.purgeIdle }),
    refusalAt: (organizationId, buckets, cost, nowMs) =>
      localDecision(organizationId, buckets, cost, nowMs) ?? store.refusalAt?.(organizationId, buckets, cost, nowMs),
    spend: (organizationId, buckets, cost) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
        const local = localDecision(organizationId, buckets, cost, nowMs)
        if (local !== undefined) return Effect.succeed(local)
        return Effect.tap(store.spend(organizationId, buckets, cost), (decision) =>
          Effect.sync(() => remember(organizationId, buckets, decision)))
      }),
    ...(store.spendWithStorefrontVersion === undefined ? {} : {
      spendWithStorefrontVersion: (organizationId, buckets, cost) =>
        Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
          const local = localDecision(organizationId, buckets, cost, nowMs)
          if (local !== undefined) return Effect.succeed({ decision: local, storefrontVersion: undefined })
          return Effect.tap(
            store.spendWithStorefrontVersion!(organizationId, buckets, cost),
            ({ decision }) => Effect.sync(() => remember(organizationId, buckets, decision))
          )
        })
    })
  })
}

/** Wraps the `RateLimitRepository` below it (e.g. `LocalRefusals.layer.pipe(Layer.provide(PgRateLimitRepository))`). */
export const layer = (options?: LocalRefusalsOptions): Layer.Layer<RateLimitRepository, never, RateLimitRepository> =>
  Layer.effect(
    RateLimitRepository,
    Effect.map(RateLimitRepository, (store: RateLimitRepository["Service"]) => withLocalRefusals(store, options))
  )
