/**
 * Redis `RateLimitRepository` (`RATE_LIMIT_URL=redis://…`): for deployments whose request volume outgrows one PostgreSQL.
 * Exact across every process sharing the Redis server, in one round trip per request.
 *
 * Each spend is one Lua script, which Redis runs atomically: it reads every bucket of the request, refills each to
 * the caller's time with `TokenBucket`'s integer arithmetic (units of 1/60,000,000 token, whole milliseconds; Lua
 * numbers are IEEE doubles like JavaScript's, and every value stays below 2^53), and — only when every bucket can pay
 * — writes the charged levels. It returns the levels it read and its decision. The store then runs
 * `TokenBucket.spend` on those levels (which gives `Retry-After`, `Remaining` and the reset) and checks that it
 * reaches the same decision: a disagreement is a defect, never silently an admission.
 *
 * Keys are `<prefix>{<organization>}:<bucket>`: the hash tag keeps one organization's buckets in one slot, so the
 * multi-key script also runs on Redis Cluster. A bucket left alone expires once it would have refilled (plus a
 * minute), since a missing bucket is a full one. The time is the application's `Clock`, as for the other stores.
 */
import { Clock, Effect, Layer } from "effect"
import * as Redis from "effect/persistence/Redis"
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import { RateLimits } from "@feedback/core"

/**
 * KEYS: one hash per bucket (`u` = level in units, `t` = credited up to, in ms).
 * ARGV: now (ms), cost (units), then per bucket its ceiling (units) and refill (units per ms).
 * Returns `{admitted (0|1), u1, t1, u2, t2, …}` with the levels as read ("" for a missing bucket).
 * `%.0f` writes integers exactly (Lua's `tostring` keeps only 14 digits).
 */
const spendLua = `
local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local n = #KEYS
local out = {1}
local units = {}
local credited = {}
for i = 1, n do
  local cap = tonumber(ARGV[1 + 2 * i])
  local rate = tonumber(ARGV[2 + 2 * i])
  local stored = redis.call('HMGET', KEYS[i], 'u', 't')
  if stored[1] == false or stored[2] == false then
    units[i] = cap
    credited[i] = now
    out[2 * i] = ''
    out[2 * i + 1] = ''
  else
    local level = math.min(tonumber(stored[1]), cap)
    local at = tonumber(stored[2])
    out[2 * i] = stored[1]
    out[2 * i + 1] = stored[2]
    if now <= at then
      units[i] = level
      credited[i] = at
    else
      local gain = (now - at) * rate
      if gain >= cap - level then units[i] = cap else units[i] = level + gain end
      credited[i] = now
    end
  end
  if units[i] < cost then out[1] = 0 end
end
if out[1] == 1 then
  for i = 1, n do
    local cap = tonumber(ARGV[1 + 2 * i])
    local rate = tonumber(ARGV[2 + 2 * i])
    local after = units[i] - cost
    redis.call('HSET', KEYS[i], 'u', string.format('%.0f', after), 't', string.format('%.0f', credited[i]))
    if rate > 0 then
      redis.call('PEXPIRE', KEYS[i], string.format('%.0f', credited[i] - now + math.ceil((cap - after) / rate) + 60000))
    else
      redis.call('PERSIST', KEYS[i])
    end
  end
end
return out
`

/** One spend: the bucket keys and the script's arguments (see `spendLua`). */
const spendScript = Redis.script(
  (keys: ReadonlyArray<string>, args: ReadonlyArray<number>) => [...keys, ...args.map((a) => a.toFixed(0))],
  { lua: spendLua, numberOfKeys: (keys) => keys.length }
).withReturnType<ReadonlyArray<number | string>>()

export interface RedisRateLimitOptions {
  /** Prepended to every key, so several deployments can share one Redis; default `feedback:rl:`. */
  readonly keyPrefix?: string | undefined
}

/** The stored level the script read, as `TokenBucket` keeps it; `undefined` for a missing (full) bucket. */
const readState = (
  units: number | string | undefined,
  at: number | string | undefined
): RateLimits.TokenBucket.BucketState | undefined =>
  units === undefined || units === "" || at === undefined || at === ""
    ? undefined
    : { tokens: Number(units) / RateLimits.TokenBucket.UNITS_PER_TOKEN, updatedAtMs: Number(at) }

const makeRedisRateLimitRepository = (options: RedisRateLimitOptions = {}) =>
  Effect.gen(function*() {
    const redis = yield* Redis.Redis
    const prefix = options.keyPrefix ?? "feedback:rl:"
    const run = redis.eval(spendScript)

    const spend = (organizationId: string, buckets: ReadonlyArray<RateLimits.KeyedBucket>, cost: number) =>
      Effect.gen(function*() {
        RateLimits.assertBuckets(buckets)
        const nowMs = Math.floor(yield* Clock.currentTimeMillis)
        const keys = buckets.map((b) => `${prefix}{${organizationId}}:${b.key}`)
        const args = [nowMs, RateLimits.TokenBucket.tokensToUnits(cost)]
        for (const b of buckets) {
          const { ceilingUnits, rateUnitsPerMs } = RateLimits.TokenBucket.unitsOf(b.spec)
          args.push(ceilingUnits, rateUnitsPerMs)
        }
        const reply = yield* run(keys, args).pipe(
          Effect.retry({ times: 2 }),
          Effect.orDie
        )
        const states = buckets.map((_, i) => readState(reply[1 + 2 * i], reply[2 + 2 * i]))
        const result = RateLimits.TokenBucket.spend(
          buckets.map((b, i) => ({ spec: b.spec, state: states[i] })),
          cost,
          nowMs
        )
        const admittedByRedis = Number(reply[0]) === 1
        if (admittedByRedis !== (result._tag === "Admitted")) {
          return yield* Effect.die(
            new Error(
              `Redis rate-limit script and TokenBucket disagree (Redis ${admittedByRedis ? "admitted" : "refused"})`
            )
          )
        }
        return RateLimits.toSpendDecision(buckets, result, cost)
      }).pipe(Effect.withSpan("RedisRateLimitRepository.spend"))

    return RateLimits.RateLimitRepository.of({ spend })
  })

/** The store over a `Redis` service the host provides (e.g. its own client). */
/** A refusal known from an earlier one costs no round trip (`LocalRefusals`). */
export const layerRedis = (
  options?: RedisRateLimitOptions
): Layer.Layer<RateLimits.RateLimitRepository, never, Redis.Redis> =>
  Layer.effect(
    RateLimits.RateLimitRepository,
    Effect.map(makeRedisRateLimitRepository(options), (store) => RateLimits.LocalRefusals.withLocalRefusals(store))
  )

/** The store over its own node-redis client connected to `url` (`redis://…` or `rediss://…`), closed with the layer. */
export const layer = (
  url: string,
  options?: RedisRateLimitOptions
): Layer.Layer<RateLimits.RateLimitRepository, Redis.RedisError> =>
  layerRedis(options).pipe(Layer.provide(NodeRedis.layer({ url })))
