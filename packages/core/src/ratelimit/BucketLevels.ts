/**
 * Bucket levels held by one process: the state of the memory store, and the authority of the embedded store, whose
 * database no other process can open. A spend reads, decides and writes in one synchronous call, which no other fiber
 * can interleave with, so it is exact across the fibers of the process.
 *
 * A bucket with no entry is at `unknownLevel`: full (the default, a new bucket is full), or the level a store must
 * assume after losing track (e.g. empty as of a restart), which `TokenBucket` refills from like any stored level.
 */
import { assertBuckets, type SpendDecision, type SpendRefused, toSpendDecision } from "./RateLimitRepository.ts"
import type { KeyedBucket } from "./RateLimitTable.ts"
import * as TokenBucket from "./TokenBucket.ts"

export interface BucketLevels {
  /** `TokenBucket.spend` over the organization's buckets at `nowMs`; an admission writes the charged levels. */
  readonly spend: (
    organizationId: string,
    buckets: ReadonlyArray<KeyedBucket>,
    cost: number,
    nowMs: number
  ) => SpendDecision
  /** What `spend` would answer at `nowMs` if it refuses, without writing anything; `undefined` if it would admit. */
  readonly refusal: (
    organizationId: string,
    buckets: ReadonlyArray<KeyedBucket>,
    cost: number,
    nowMs: number
  ) => SpendRefused | undefined
  /** Sets one level (e.g. as read back from where a previous run left it). */
  readonly set: (organizationId: string, key: string, state: TokenBucket.BucketState) => void
  /** Every level held, as `[organization, bucket key, state]`. */
  readonly entries: () => ReadonlyArray<readonly [string, string, TokenBucket.BucketState]>
  /** Forgets up to `limit` levels `drop` names; answers how many. */
  readonly forget: (drop: (key: string, state: TokenBucket.BucketState) => boolean, limit: number) => number
}

export interface BucketLevelsOptions {
  /** The level of a bucket with no entry; `undefined` (the default) is a full bucket. */
  readonly unknownLevel?: TokenBucket.BucketState | undefined
}

export const make = (options: BucketLevelsOptions = {}): BucketLevels => {
  // organization id -> bucket key -> level.
  const levels = new Map<string, Map<string, TokenBucket.BucketState>>()
  const unknownLevel = options.unknownLevel

  const set = (organizationId: string, key: string, state: TokenBucket.BucketState) => {
    let org = levels.get(organizationId)
    if (org === undefined) levels.set(organizationId, org = new Map())
    org.set(key, state)
  }

  const decide = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, cost: number, nowMs: number) => {
    assertBuckets(buckets)
    const org = levels.get(organizationId)
    return TokenBucket.spend(
      buckets.map((b) => ({ state: org?.get(b.key) ?? unknownLevel, spec: b.spec })),
      cost,
      nowMs
    )
  }

  const spend = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, cost: number, nowMs: number) => {
    const result = decide(organizationId, buckets, cost, nowMs)
    if (result._tag === "Admitted") buckets.forEach((b, i) => set(organizationId, b.key, result.states[i]!))
    return toSpendDecision(buckets, result, cost)
  }

  // A refusal writes nothing, so it is the same decision whether asked for here or by `spend`.
  const refusal = (organizationId: string, buckets: ReadonlyArray<KeyedBucket>, cost: number, nowMs: number) => {
    const result = decide(organizationId, buckets, cost, nowMs)
    return result._tag === "Refused" ? toSpendDecision(buckets, result, cost) : undefined
  }

  const entries = () =>
    Array.from(
      levels,
      ([organizationId, org]) => Array.from(org, ([key, state]) => [organizationId, key, state] as const)
    ).flat()

  const forget = (drop: (key: string, state: TokenBucket.BucketState) => boolean, limit: number) => {
    let dropped = 0
    for (const [organizationId, org] of levels) {
      for (const [key, state] of org) {
        if (dropped >= limit) return dropped
        if (drop(key, state)) {
          org.delete(key)
          dropped++
        }
      }
      if (org.size === 0) levels.delete(organizationId)
    }
    return dropped
  }

  return { spend, refusal, set, entries, forget }
}
