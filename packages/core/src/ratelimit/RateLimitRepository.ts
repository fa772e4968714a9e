/**
 * Where bucket levels live. A store runs `TokenBucket.spend` over an organization's buckets as one indivisible
 * check-and-charge, reading the time from Effect's `Clock` (so `TestClock` drives it in tests). The memory store is
 * exact across fibers of one process; the PostgreSQL store is exact across processes sharing the database.
 *
 * The first bucket passed is the organization-wide one (see `RateLimitTable.bucketsFor`): its ceiling and level are
 * what `X-RateLimit-Limit` / `X-RateLimit-Remaining` report.
 */
import { Context, type Effect } from "effect"
import { TooManyRequests, withoutStack } from "../kernel/Errors.ts"
import { type KeyedBucket, ORG_BUCKET_KEY } from "./RateLimitTable.ts"
import type { BucketState, Refused, SpendResult } from "./TokenBucket.ts"

export interface SpendAdmitted {
  readonly _tag: "Admitted"
  readonly cost: number
  /** Ceiling of the organization bucket (`X-RateLimit-Limit`). */
  readonly limit: number
  /** Whole tokens left in the organization bucket after the charge (`X-RateLimit-Remaining`). */
  readonly remaining: number
  /** Whole seconds until the organization bucket is full again (the IETF `RateLimit` field's `t`). */
  readonly fullInSeconds: number | undefined
}

export interface SpendRefused {
  readonly _tag: "Refused"
  readonly cost: number
  readonly limit: number
  /** Whole tokens in the organization bucket now; nothing was charged. */
  readonly remaining: number
  /** Whole seconds until the organization bucket is full again. */
  readonly fullInSeconds: number | undefined
  /** Least whole seconds (≥ 1) until the same request is affordable; `undefined` when it never is (`Retry-After`). */
  readonly retryAfterSeconds: number | undefined
  /** Key of the bucket that refused (the one never affordable, else the one to wait longest for). */
  readonly refusedBy: string
  /** Ceiling of that bucket, for the message. */
  readonly refusedByCeiling: number
  /**
   * The bucket levels the decision was made from, as stored (in request order; `undefined`: a full bucket). Nothing
   * that spends can raise them, so they bound the levels until the next admission (`LocalRefusals`).
   */
  readonly states?: ReadonlyArray<BucketState | undefined> | undefined
}

export type SpendDecision = SpendAdmitted | SpendRefused

/** A spend's decision with the organization's storefront content version read in the same round trip. */
export interface SpendWithStorefrontVersion {
  readonly decision: SpendDecision
  /** The version as the store read it with the spend; undefined when the spend did not reach the store. */
  readonly storefrontVersion: string | undefined
}

export class RateLimitRepository extends Context.Service<RateLimitRepository, {
  /**
   * Charges `cost` to every bucket of the organization, atomically (all or none), at the `Clock`'s current time.
   * Buckets are identified by `key` within the organization; each call passes the current spec, so a plan change
   * takes effect on the next request. `buckets` must be non-empty with distinct keys, organization bucket first.
   * Must not run inside a database transaction of the request (the PostgreSQL store would hold its row locks for it).
   */
  readonly spend: (
    organizationId: string,
    buckets: ReadonlyArray<KeyedBucket>,
    cost: number
  ) => Effect.Effect<SpendDecision>
  /**
   * `spend`, also reading the organization's storefront content version (docs/DECISIONS.md §70) in the same statement,
   * after the request arrived and before anything is read for it. Only a store whose buckets live in the database
   * that keeps the version has it (PostgreSQL); elsewhere the version is a step of its own.
   */
  readonly spendWithStorefrontVersion?: (
    organizationId: string,
    buckets: ReadonlyArray<KeyedBucket>,
    cost: number
  ) => Effect.Effect<SpendWithStorefrontVersion>
  /**
   * True when `spend` decides in this process without waiting on I/O (the memory and embedded stores): a caller need
   * not overlap other work with it.
   */
  readonly decidesInProcess?: boolean
  /**
   * The refusal `spend` would answer at `nowMs`, when this process can tell without I/O and without changing
   * anything (an in-process store's own levels, or `LocalRefusals`' bound); `undefined` when it cannot, and always
   * for a request `spend` would admit. Lets a server refuse before it does any other work for the request (the
   * HTTP adapter's refusal gate). Optional: a store without it is asked by `spend` every time.
   */
  readonly refusalAt?: (
    organizationId: string,
    buckets: ReadonlyArray<KeyedBucket>,
    cost: number,
    nowMs: number
  ) => SpendRefused | undefined
  /**
   * Drops up to `limit` storefront buckets idle long enough to be full again at `nowMs` (`isIdleStorefrontBucket`),
   * answering how many: a missing bucket is full, so no decision changes. Optional: a store whose buckets expire on
   * their own (Redis), or whose missing bucket is not full (the embedded store after a restart), has none.
   */
  readonly purgeIdle?: (nowMs: number, limit: number) => Effect.Effect<number>
}>()("feedback/RateLimitRepository") {}

/** Rejects a bucket list that no correct caller builds; stores call it before touching state. */
export const assertBuckets = (buckets: ReadonlyArray<KeyedBucket>): void => {
  if (buckets.length === 0) throw new RangeError("a rate-limited request spends from at least one bucket")
  if (new Set(buckets.map((b) => b.key)).size !== buckets.length) {
    throw new RangeError(`bucket keys must be distinct: ${buckets.map((b) => b.key).join(", ")}`)
  }
}

/** The store-level decision for the result of `TokenBucket.spend` over `buckets` (same order). */
export function toSpendDecision(buckets: ReadonlyArray<KeyedBucket>, result: Refused, cost: number): SpendRefused
export function toSpendDecision(buckets: ReadonlyArray<KeyedBucket>, result: SpendResult, cost: number): SpendDecision
export function toSpendDecision(buckets: ReadonlyArray<KeyedBucket>, result: SpendResult, cost: number): SpendDecision {
  const limit = buckets[0]?.spec.ceiling ?? 0
  const remaining = result.remaining[0] ?? 0
  const fullInSeconds = result.fullInSeconds[0]
  if (result._tag === "Admitted") return { _tag: "Admitted", cost, limit, remaining, fullInSeconds }
  const refusing = buckets[result.refusedBy]
  return {
    _tag: "Refused",
    cost,
    limit,
    remaining,
    fullInSeconds,
    retryAfterSeconds: result.retryAfterSeconds,
    refusedBy: refusing?.key ?? "",
    refusedByCeiling: refusing?.spec.ceiling ?? 0,
    states: result.states
  }
}

/** What a 429 says (docs/DECISIONS.md §3): whether and when the same request can succeed. */
export const refusalMessage = (decision: SpendRefused): string => {
  const scope = decision.refusedBy === ORG_BUCKET_KEY
    ? "the organization's rate limit"
    : decision.refusedBy.startsWith("storefront-read:")
    ? "the publishable key's read limit for this client address"
    : decision.refusedBy.startsWith("storefront-submission:")
    ? "the publishable key's submission limit for this client address"
    : `the rate limit of ${decision.refusedBy}`
  return decision.retryAfterSeconds === undefined
    ? `This request costs ${decision.cost} tokens but ${scope} holds at most ${decision.refusedByCeiling}, so it can never be accepted; split it into smaller requests or raise the plan's allowance.`
    : `This request costs ${decision.cost} tokens and ${scope} cannot afford it now; retry after ${decision.retryAfterSeconds} second${
      decision.retryAfterSeconds === 1 ? "" : "s"
    }.`
}

/** The 429 for a refusal, as the error a use-case fails with. */
export const tooManyRequests = (decision: SpendRefused): TooManyRequests =>
  withoutStack(() =>
    new TooManyRequests({
      message: refusalMessage(decision),
      ...(decision.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: decision.retryAfterSeconds }),
      cost: decision.cost,
      limit: decision.limit,
      remaining: decision.remaining
    })
  )
