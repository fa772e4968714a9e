/**
 * Token buckets as pure functions over data (docs/DECISIONS.md §3, spec: Limits). No clock and no storage here: the stores
 * (`RateLimitRepository`) read the time and keep the states; these functions decide.
 *
 * Exact arithmetic. Floating-point token levels drift (10/60 is not a binary fraction), and a drifting level makes
 * "never over-admit" and "Retry-After is the least whole second" true only approximately. So every computation runs
 * on integers:
 * - time is whole milliseconds (a fractional `nowMs` is floored);
 * - a level is counted in units, `UNITS_PER_TOKEN` = 60,000,000 units per token. A refill of r tokens per second is
 *   r·60,000 units per millisecond, an integer whenever the rate is a whole number of thousandths of a token per
 *   minute — which covers every rate of the spec (10/s, 2/s, 1/s) and every plan rate `apiRequestsPerMinute / 60`.
 *   A rate that is not representable is rounded to the nearest one (`rateUnitsPerMs`).
 * - levels stay below 2^51 units (`MAX_CEILING` ≈ 37.5 million tokens), so every sum, product and quotient below is
 *   an exact safe-integer operation, and the mathematical model (continuous refill in real numbers) and the code agree
 *   exactly at every millisecond.
 *
 * A `BucketState` stores `tokens` as a plain token count for readability (in memory and in the database); it is
 * always exactly `units / UNITS_PER_TOKEN` for an integer `units < 2^51`, and `Math.round(tokens * UNITS_PER_TOKEN)`
 * recovers `units` exactly (two correctly rounded operations err by less than u·2^-52 < 0.5).
 */

/** The stored level of one bucket. A missing state is a new (or forgotten idle) bucket, which is full. */
export interface BucketState {
  /** Tokens available at `updatedAtMs`; a multiple of 1/`UNITS_PER_TOKEN`. */
  readonly tokens: number
  /** Unix time in whole milliseconds up to which refill has been credited. Never moves backwards. */
  readonly updatedAtMs: number
}

/** What a bucket holds and how fast it refills. Passed with every request, so a plan change applies at once. */
export interface BucketSpec {
  /** Burst ceiling in tokens: the most a bucket can hold. */
  readonly ceiling: number
  /** Continuous refill rate in tokens per second. */
  readonly refillPerSecond: number
}

export interface BucketRequest {
  readonly state: BucketState | undefined
  readonly spec: BucketSpec
}

export interface Admitted {
  readonly _tag: "Admitted"
  /** The new state of each bucket, in request order: refilled to now, then charged. */
  readonly states: ReadonlyArray<BucketState>
  /** Whole tokens left in each bucket after the charge (floored). */
  readonly remaining: ReadonlyArray<number>
  /** Whole seconds (rounded up) until each bucket is full again with no other spending; undefined if it never refills. */
  readonly fullInSeconds: ReadonlyArray<number | undefined>
}

export interface Refused {
  readonly _tag: "Refused"
  /**
   * The least whole number of seconds s ≥ 1 after which, with no other spending, the same request is admitted.
   * `undefined` when it never can be: the cost exceeds some bucket's ceiling (or a short bucket never refills).
   */
  readonly retryAfterSeconds: number | undefined
  /** Index of the bucket that decides the refusal: the one that is never affordable, else the one waited on longest. */
  readonly refusedBy: number
  /** The input states, unchanged: a refused request has no effect. */
  readonly states: ReadonlyArray<BucketState | undefined>
  /** Whole tokens available in each bucket now (floored), for `X-RateLimit-Remaining` on the 429. */
  readonly remaining: ReadonlyArray<number>
  /** As for `Admitted`, from the unchanged levels. */
  readonly fullInSeconds: ReadonlyArray<number | undefined>
}

export type SpendResult = Admitted | Refused

/** Units per token: see the module comment. 60,000,000 = 60 s·1,000 ms·1,000 (thousandths of a token per minute). */
export const UNITS_PER_TOKEN = 60_000_000

/** Largest supported ceiling, in tokens: keeps every level below 2^51 units. */
const MAX_CEILING = Math.floor(2 ** 51 / UNITS_PER_TOKEN)

/** The organization-wide bucket of a plan: ceiling `apiRequestsPerMinute`, refilling the whole ceiling per minute. */
export const bucketForPlan = (apiRequestsPerMinute: number): BucketSpec => ({
  ceiling: apiRequestsPerMinute,
  refillPerSecond: apiRequestsPerMinute / 60
})

// --- integer helpers -------------------------------------------------------------------------------------------

const checkSpec = (spec: BucketSpec): void => {
  if (!(Number.isFinite(spec.ceiling) && spec.ceiling >= 0 && spec.ceiling <= MAX_CEILING)) {
    throw new RangeError(`bucket ceiling must be between 0 and ${MAX_CEILING}, got ${spec.ceiling}`)
  }
  if (!(Number.isFinite(spec.refillPerSecond) && spec.refillPerSecond >= 0)) {
    throw new RangeError(`bucket refill must be a finite rate >= 0, got ${spec.refillPerSecond}`)
  }
}

const toUnits = (tokens: number): number => Math.round(tokens * UNITS_PER_TOKEN)

const ceilingUnits = (spec: BucketSpec): number => toUnits(spec.ceiling)

/** Units added per millisecond; rounding absorbs the float error of rates such as `n / 60`. */
const rateUnitsPerMs = (spec: BucketSpec): number => Math.round(spec.refillPerSecond * (UNITS_PER_TOKEN / 1000))

/** Whole tokens in `units` (floored), by exact integer operations rather than a float division. */
const wholeTokens = (units: number): number => (units - (units % UNITS_PER_TOKEN)) / UNITS_PER_TOKEN

/** ⌈a / b⌉ for safe integers a ≥ 0, b > 0. */
const ceilDiv = (a: number, b: number): number => {
  const r = a % b
  return (a - r) / b + (r === 0 ? 0 : 1)
}

/** Level in units and credit time of a bucket at `nowMs` (whole ms). */
const levelAt = (state: BucketState | undefined, spec: BucketSpec, nowMs: number): { units: number; atMs: number } => {
  const cap = ceilingUnits(spec)
  if (state === undefined) return { units: cap, atMs: nowMs }
  // A lowered ceiling caps the level at once.
  const stored = Math.min(toUnits(state.tokens), cap)
  // Time going backwards (clock skew between processes, a clock set back) adds nothing, and the credit time never
  // moves back either: otherwise the same interval would be credited twice once the clock caught up.
  if (nowMs <= state.updatedAtMs) return { units: stored, atMs: state.updatedAtMs }
  const gain = (nowMs - state.updatedAtMs) * rateUnitsPerMs(spec)
  // `gain` is exact below 2^53; above it, it certainly exceeds the deficit (< 2^51), so the comparison stays right.
  return { units: gain >= cap - stored ? cap : stored + gain, atMs: nowMs }
}

const stateOf = (units: number, atMs: number): BucketState => ({ tokens: units / UNITS_PER_TOKEN, updatedAtMs: atMs })

/**
 * The integers this module computes with, for a store that runs the same arithmetic elsewhere (the PostgreSQL store
 * runs it in the database, in one round trip): the ceiling in units and the refill in units per millisecond.
 * Throws like `spend` on an invalid spec.
 */
export const unitsOf = (spec: BucketSpec): { readonly ceilingUnits: number; readonly rateUnitsPerMs: number } => {
  checkSpec(spec)
  return { ceilingUnits: ceilingUnits(spec), rateUnitsPerMs: rateUnitsPerMs(spec) }
}

/** A token count (a cost, a level) in units; exact for every multiple of 1/`UNITS_PER_TOKEN` token below 2^51 units. */
export const tokensToUnits = (tokens: number): number => toUnits(tokens)

// --- the rules ---------------------------------------------------------------------------------------------------

/**
 * The bucket's level at `nowMs`: continuous refill since `updatedAtMs`, capped at the (current) ceiling.
 * A missing state is full. If `nowMs` is before `updatedAtMs`, the level is not raised and `updatedAtMs` is kept.
 */
export const refill = (state: BucketState | undefined, spec: BucketSpec, nowMs: number): BucketState => {
  checkSpec(spec)
  const { atMs, units } = levelAt(state, spec, Math.floor(nowMs))
  return stateOf(units, atMs)
}

/** Whole tokens (floored) in a bucket at `nowMs`. */
export const remainingAt = (state: BucketState | undefined, spec: BucketSpec, nowMs: number): number => {
  checkSpec(spec)
  return wholeTokens(levelAt(state, spec, Math.floor(nowMs)).units)
}

/**
 * Charges `cost` tokens to every bucket, atomically: admitted only if each bucket can afford the cost at `nowMs`,
 * and then each is charged; otherwise nothing changes. `cost` is a token count ≥ 0 (a whole number in practice).
 */
export const spend = (requests: ReadonlyArray<BucketRequest>, cost: number, nowMs: number): SpendResult => {
  if (!(Number.isFinite(cost) && cost >= 0)) throw new RangeError(`cost must be a finite number >= 0, got ${cost}`)
  const now = Math.floor(nowMs)
  const costUnits = toUnits(cost)
  const levels = requests.map(({ spec, state }) => {
    checkSpec(spec)
    return levelAt(state, spec, now)
  })
  const remainingNow = levels.map((l) => wholeTokens(l.units))
  // Whole seconds from `now` until a level of `units` (credited up to `atMs`) reaches the ceiling.
  const fullIn = (spec: BucketSpec, units: number, atMs: number): number | undefined => {
    const missing = ceilingUnits(spec) - units
    if (missing <= 0) return 0
    const rate = rateUnitsPerMs(spec)
    return rate === 0 ? undefined : ceilDiv(Math.max(0, atMs - now) + ceilDiv(missing, rate), 1000)
  }
  const fullNow = () => levels.map((l, i) => fullIn(requests[i]!.spec, l.units, l.atMs))

  if (levels.every((l) => l.units >= costUnits)) {
    const after = levels.map((l) => l.units - costUnits)
    return {
      _tag: "Admitted",
      states: levels.map((l, i) => stateOf(after[i]!, l.atMs)),
      remaining: after.map(wholeTokens),
      fullInSeconds: levels.map((l, i) => fullIn(requests[i]!.spec, after[i]!, l.atMs))
    }
  }

  const states = requests.map((r) => r.state)
  // The longest wait, in ms from `now`, until a bucket holds `cost`. Some bucket has a deficit, so its wait (≥ 1 ms)
  // replaces the initial 0.
  let longestWait = 0
  let refusedBy = -1
  for (let i = 0; i < requests.length; i++) {
    const { spec } = requests[i]!
    const level = levels[i]!
    if (costUnits > ceilingUnits(spec)) {
      return {
        _tag: "Refused",
        retryAfterSeconds: undefined,
        refusedBy: i,
        states,
        remaining: remainingNow,
        fullInSeconds: fullNow()
      }
    }
    const deficit = costUnits - level.units
    if (deficit <= 0) continue // affordable now, and refill only ever raises it further
    const rate = rateUnitsPerMs(spec)
    if (rate === 0) {
      return {
        _tag: "Refused",
        retryAfterSeconds: undefined,
        refusedBy: i,
        states,
        remaining: remainingNow,
        fullInSeconds: fullNow()
      }
    }
    // The level stays put until `atMs` (credit already given up to then), then gains `rate` per ms; it reaches the
    // cost after exactly ⌈deficit / rate⌉ more ms. The cap cannot get in the way since cost ≤ ceiling.
    const wait = level.atMs - now + ceilDiv(deficit, rate)
    if (wait > longestWait) {
      longestWait = wait
      refusedBy = i
    }
  }
  // Admitted at now + 1000·s iff 1000·s ≥ every bucket's wait: the least such s ≥ 1 is ⌈longestWait / 1000⌉.
  return {
    _tag: "Refused",
    retryAfterSeconds: Math.max(1, ceilDiv(longestWait, 1000)),
    refusedBy,
    states,
    remaining: remainingNow,
    fullInSeconds: fullNow()
  }
}
