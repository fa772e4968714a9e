/**
 * The rate limit store (`docs/DECISIONS.md` §3): one token bucket per organization plus any per-endpoint bucket,
 * spent all-or-nothing at the `Clock`'s time. Every store answers exactly as `TokenBucket` would, whatever the
 * concurrency: concurrent spends admit exactly the ceiling, two buckets are charged together or not at all, and a
 * refusal changes nothing. Time is the test's `TestClock`; each test uses organizations of its own.
 *
 * What only one store can show stays with it (PostgreSQL: its table's key, pools of several connections, separate
 * processes, a database whose default isolation is REPEATABLE READ).
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Exit, Layer } from "effect"
import { Kernel, Organizations, RateLimits, Storefront } from "@feedback/core"
import { TestClock } from "effect/testing"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { withoutStates } from "../RateLimitArbitraries.ts"

const admitted = (ds: ReadonlyArray<RateLimits.SpendDecision>) => ds.filter((d) => d._tag === "Admitted")

const concurrently = <A, E, R>(n: number, f: (i: number) => Effect.Effect<A, E, R>) =>
  Effect.all(Array.from({ length: n }, (_, i) => f(i)), { concurrency: "unbounded" })

/** `GET /reviews` (the organization bucket only) on a plan of `perMinute`. */
const reviews = (perMinute: number) => RateLimits.bucketsFor("GET", "/reviews", { apiRequestsPerMinute: perMinute })

/** The organization bucket of 600 and the endpoint's own 30-token bucket refilling 1 per second; cost 10. */
const history = RateLimits.bucketsFor("POST", "/loyalty-history", { apiRequestsPerMinute: 600 })

const spend = (organizationId: string, buckets: ReturnType<typeof reviews>, cost: number) =>
  RateLimits.RateLimitRepository.use((store) => store.spend(organizationId, buckets, cost))

export const rateLimitConformance: ConformanceSuite = (store) => {
  hostRouteLimits(store)
  storeLimits(store)
}

const keyOf = (organizationId: Kernel.OrganizationId) =>
  new Kernel.SecretKeyCaller({
    organizationId,
    keyId: "00000000-0000-4000-8000-00000000000b" as Kernel.SecretKeyId,
    permissions: new Set()
  })

/**
 * A host's own routes charged through `RateLimits` (docs/DECISIONS.md §13): the endpoint bucket sized by the plan's
 * allowance, spent atomically with the organization bucket, a dashboard user unmetered.
 */
const hostRouteLimits: ConformanceSuite = (store) =>
  layer(
    Layer.mergeAll(RateLimits.RateLimits.layer, Organizations.Organizations.layer).pipe(Layer.provideMerge(store)),
    { timeout: 60_000 }
  )(
    "rate limits of host routes",
    (it) => {
      const charge = (organizationId: Kernel.OrganizationId, route: string) =>
        RateLimits.RateLimits.use((r) => r.charge("POST", route)).pipe(
          Effect.provideService(Kernel.CurrentCaller, keyOf(organizationId))
        )

      it.effect("a plan's loyalty allowance sizes its endpoint's bucket; the organization bucket is charged with it", () =>
        Effect.gen(function*() {
          const org = yield* Organizations.Organizations.use((o) =>
            o.createOrganization({ name: "Loyal", apiRequestsPerMinute: 1_000 })
          )
          yield* Organizations.Organizations.use((o) => o.updatePlan(org.id, { loyaltyStampsPerMinute: 5 }))
          const results = yield* concurrently(8, () => Effect.exit(charge(org.id, "/loyalty-stamps")))
          const ok = results.filter(Exit.isSuccess)
          assert.strictEqual(ok.length, 5)
          // Each admitted stamp also took a token of the organization's 1,000: no refusal charged either bucket.
          const org0 = yield* RateLimits.RateLimitRepository.use((s) =>
            s.spend(org.id, RateLimits.bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 1_000 }), 1)
          )
          assert.deepInclude(org0, { _tag: "Admitted", remaining: 1_000 - 5 - 1 })
          const refused = results.find(Exit.isFailure)
          assert.isTrue(
            refused !== undefined && Exit.isFailure(refused) && JSON.stringify(refused.cause).includes("loyalty-stamps")
          )
          // Events have the spec's default bucket (120) while the plan sets no allowance for them.
          assert.strictEqual(
            (yield* concurrently(130, () => Effect.exit(charge(org.id, "/loyalty-events")))).filter(Exit.isSuccess)
              .length,
            120
          )
          // Removing the allowance restores the default of its bucket; the next minute refills it.
          yield* Organizations.Organizations.use((o) => o.updatePlan(org.id, { loyaltyStampsPerMinute: null }))
          assert.isUndefined(
            (yield* Organizations.Organizations.use((o) => o.findOrganization(org.id))).plan.loyaltyStampsPerMinute
          )
        }))

      it.effect("an empty organization bucket refuses the host route too, and a dashboard user is never charged", () =>
        Effect.gen(function*() {
          const org = yield* Organizations.Organizations.use((o) =>
            o.createOrganization({ name: "Tight", apiRequestsPerMinute: 2 })
          )
          assert.strictEqual(
            (yield* concurrently(3, () => Effect.exit(charge(org.id, "/loyalty-events")))).filter(Exit.isSuccess)
              .length,
            2
          )
          const dashboard = new Kernel.DashboardCaller({
            organizationId: org.id,
            userId: "00000000-0000-4000-8000-00000000000c" as Kernel.UserId,
            name: "Dana"
          })
          const unmetered = yield* RateLimits.RateLimits.use((r) => r.charge("POST", "/loyalty-events")).pipe(
            Effect.provideService(Kernel.CurrentCaller, dashboard)
          )
          assert.deepStrictEqual(unmetered, { _tag: "Unmetered" })
        }))
    }
  )

const storeLimits: ConformanceSuite = (store) =>
  layer(store, { timeout: 60_000 })("rate limit store", (it) => {
    it.effect("concurrent spends at one instant admit exactly the ceiling; refill is continuous up to the ceiling", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        const buckets = reviews(120) // 2 tokens per second
        const ds = yield* concurrently(300, () => spend(org, buckets, 1))
        const ok = admitted(ds)
        assert.strictEqual(ok.length, 120)
        // Each admission saw its own level: the remaining counts are exactly 119..0, once each.
        assert.deepStrictEqual(
          ok.map((d) => d.remaining).sort((a, b) => a - b),
          Array.from({ length: 120 }, (_, i) => i)
        )
        for (const d of ds) {
          assert.strictEqual(d.limit, 120)
          if (d._tag === "Refused") {
            assert.deepInclude(d, {
              remaining: 0,
              retryAfterSeconds: 1,
              refusedBy: RateLimits.ORG_BUCKET_KEY,
              refusedByCeiling: 120
            })
          }
        }
        // Emptied, the bucket refills 2 tokens a second: full again in 60 s, which every store reports.
        const last = yield* spend(org, buckets, 1)
        assert.deepInclude(last, { _tag: "Refused", remaining: 0, fullInSeconds: 60 })
        yield* TestClock.adjust("1 second")
        assert.strictEqual(admitted(yield* concurrently(20, () => spend(org, buckets, 1))).length, 2)
        // Ten minutes refill the whole ceiling, and no more.
        yield* TestClock.adjust("10 minutes")
        assert.strictEqual(admitted(yield* concurrently(200, () => spend(org, buckets, 1))).length, 120)
      }))

    it.effect("two buckets are charged atomically under concurrency: a refusal charges neither", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        const ds = yield* concurrently(60, (i) => i % 3 === 0 ? spend(org, reviews(600), 1) : spend(org, history, 10))
        const historyDecisions = ds.filter((_, i) => i % 3 !== 0)
        // The 30-token endpoint bucket admits 3 requests of cost 10; every organization-only request passes.
        assert.strictEqual(admitted(historyDecisions).length, 3)
        assert.strictEqual(admitted(ds.filter((_, i) => i % 3 === 0)).length, 20)
        for (const d of historyDecisions) {
          if (d._tag === "Refused") {
            assert.deepInclude(d, { refusedBy: "POST /loyalty-history", refusedByCeiling: 30, retryAfterSeconds: 10 })
          }
        }
        // The organization bucket paid 3 × 10 and 20 × 1, nothing for the 37 refusals.
        assert.deepInclude(yield* spend(org, reviews(600), 0), { _tag: "Admitted", remaining: 600 - 30 - 20 })
        // The endpoint bucket affords one more after exactly 10 s.
        yield* TestClock.adjust("9999 millis")
        assert.strictEqual((yield* spend(org, history, 10))._tag, "Refused")
        yield* TestClock.adjust("1 millis")
        assert.strictEqual((yield* spend(org, history, 10))._tag, "Admitted")
      }))

    it.effect("storefront buckets are per publishable key and client address, apart from the organization's", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        const plan = { storefrontReadsPerMinute: 2, storefrontSubmissionsPerHour: 1 }
        const read = (key: string, address: string) =>
          spend(org, [Storefront.storefrontBucket("read", key, address, plan)], 1)
        assert.strictEqual((yield* read("k1", "203.0.113.1"))._tag, "Admitted")
        assert.strictEqual((yield* read("k1", "203.0.113.1"))._tag, "Admitted")
        const refused = yield* read("k1", "203.0.113.1")
        assert.strictEqual(refused._tag, "Refused")
        assert.include(RateLimits.tooManyRequests(refused as never).message, "read limit for this client address")
        assert.strictEqual((yield* read("k1", "2001:db8::1"))._tag, "Admitted")
        assert.strictEqual((yield* read("k2", "203.0.113.1"))._tag, "Admitted")
        // Submissions have their own bucket, refilling in an hour.
        const submit = () => spend(org, [Storefront.storefrontBucket("submission", "k1", "203.0.113.1", plan)], 1)
        assert.strictEqual((yield* submit())._tag, "Admitted")
        const later = yield* submit()
        assert.strictEqual(later._tag, "Refused")
        assert.isAtLeast((later as { retryAfterSeconds: number }).retryAfterSeconds, 3500)
        // None of it touched the organization bucket.
        assert.deepInclude(yield* spend(org, reviews(60), 1), { _tag: "Admitted", remaining: 59 })
      }))

    it.effect("idle storefront buckets are dropped once full again; busy ones and the organization's stay", () =>
      Effect.gen(function*() {
        const store = yield* RateLimits.RateLimitRepository
        // Stores whose buckets expire on their own (Redis) or whose missing bucket is not full (embedded) keep none.
        if (store.purgeIdle === undefined) return
        const purge = (afterMs: number) =>
          Effect.flatMap(Clock.currentTimeMillis, (t) => store.purgeIdle!(t + afterMs, 1e6))
        // Every storefront bucket the suite left is idle ten years on: dropping them changes no decision.
        yield* purge(10 * 365 * 86_400_000)
        const org = yield* Kernel.nextId()
        const plan = { storefrontReadsPerMinute: 2, storefrontSubmissionsPerHour: 1 }
        const read = () => spend(org, [Storefront.storefrontBucket("read", "k1", "203.0.113.9", plan)], 1)
        assert.strictEqual((yield* read())._tag, "Admitted")
        assert.strictEqual((yield* read())._tag, "Admitted")
        assert.strictEqual(
          (yield* spend(org, [Storefront.storefrontBucket("submission", "k1", "203.0.113.9", plan)], 1))._tag,
          "Admitted"
        )
        assert.strictEqual((yield* spend(org, reviews(60), 1))._tag, "Admitted")
        // The empty read bucket refills in a minute; it is dropped only after twice that, the submission's after two hours.
        assert.strictEqual(yield* purge(119_999), 0)
        assert.strictEqual(yield* purge(120_000), 1)
        yield* TestClock.adjust("120 seconds")
        assert.deepInclude(yield* read(), { _tag: "Admitted", remaining: 1 })
        assert.strictEqual(yield* purge(119_999), 0)
        // Two hours after the submission: the read bucket (idle since now) long since, then the submission's.
        assert.strictEqual(yield* purge(2 * 3_600_000 - 120_001), 1)
        assert.strictEqual(yield* purge(2 * 3_600_000 - 120_000), 1)
      }))

    it.effect("organizations have separate buckets", () =>
      Effect.gen(function*() {
        const a = yield* Kernel.nextId()
        const b = yield* Kernel.nextId()
        yield* concurrently(60, () => spend(a, reviews(60), 1))
        assert.strictEqual((yield* spend(a, reviews(60), 1))._tag, "Refused")
        assert.deepInclude(yield* spend(b, reviews(60), 1), { _tag: "Admitted", remaining: 59 })
      }))

    it.effect("a cost above the ceiling is refused without Retry-After and charges nothing", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        const d = yield* spend(org, reviews(5), 10)
        const { states: _states, ...decision } = d._tag === "Refused" ? d : { ...d, states: undefined }
        assert.deepStrictEqual(decision, {
          _tag: "Refused",
          cost: 10,
          limit: 5,
          remaining: 5,
          fullInSeconds: 0,
          retryAfterSeconds: undefined,
          refusedBy: RateLimits.ORG_BUCKET_KEY,
          refusedByCeiling: 5
        })
        if (d._tag !== "Refused") return
        const error = RateLimits.tooManyRequests(d)
        assert.strictEqual(error.retryAfterSeconds, undefined)
        assert.match(
          error.message,
          /costs 10 tokens but the organization's rate limit holds at most 5, so it can never be accepted/
        )
        assert.deepInclude(yield* spend(org, reviews(5), 1), { _tag: "Admitted", remaining: 4 })
      }))

    it.effect("a plan change takes effect on the next request", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        assert.deepInclude(yield* spend(org, reviews(600), 1), { limit: 600, remaining: 599 })
        // Lowered: the level is capped at the new ceiling.
        assert.deepInclude(yield* spend(org, reviews(100), 1), { _tag: "Admitted", limit: 100, remaining: 99 })
        // Raised: the level is not topped up, but refills at the new rate (20 per second).
        assert.deepInclude(yield* spend(org, reviews(1200), 1), { _tag: "Admitted", limit: 1200, remaining: 98 })
        yield* TestClock.adjust("1 second")
        assert.deepInclude(yield* spend(org, reviews(1200), 1), { _tag: "Admitted", remaining: 117 })
      }))

    it.effect("the 429 error carries the decision and names the bucket that refused", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        yield* concurrently(60, () => spend(org, reviews(60), 1))
        const d = yield* spend(org, reviews(60), 5)
        assert.strictEqual(d._tag, "Refused")
        if (d._tag !== "Refused") return
        const error = RateLimits.tooManyRequests(d)
        assert.strictEqual(error._tag, "TooManyRequests")
        assert.deepInclude(error, { retryAfterSeconds: 5, cost: 5, limit: 60, remaining: 0 }) // 5 tokens at 1 per second
        assert.match(error.message, /the organization's rate limit cannot afford it now; retry after 5 seconds\./)
        const other = yield* Kernel.nextId()
        yield* concurrently(3, () => spend(other, history, 10))
        const endpoint = yield* spend(other, history, 10)
        assert.deepInclude(endpoint, { _tag: "Refused", limit: 600, remaining: 570 })
        if (endpoint._tag !== "Refused") return
        assert.match(
          RateLimits.tooManyRequests(endpoint).message,
          /the rate limit of POST \/loyalty-history .* retry after 10 seconds\./
        )
      }))

    it.effect("a refusal writes nothing: the level and its refill go on as if it had not been asked", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        const buckets = reviews(10) // one token every 6 seconds
        assert.strictEqual(admitted(yield* concurrently(10, () => spend(org, buckets, 1))).length, 10)
        // 1/6 token credited after a second; the other 5/6 take 5 s more. Asking again changes neither.
        yield* TestClock.adjust("1 second")
        assert.deepInclude(yield* spend(org, buckets, 1), { _tag: "Refused", remaining: 0, retryAfterSeconds: 5 })
        assert.deepInclude(yield* spend(org, buckets, 11), { _tag: "Refused", retryAfterSeconds: undefined })
        yield* TestClock.adjust("2 seconds")
        assert.deepInclude(yield* spend(org, buckets, 1), { _tag: "Refused", remaining: 0, retryAfterSeconds: 3 })
        yield* TestClock.adjust("2999 millis")
        assert.deepInclude(yield* spend(org, buckets, 1), { _tag: "Refused", retryAfterSeconds: 1 })
        yield* TestClock.adjust("1 millis")
        assert.deepInclude(yield* spend(org, buckets, 1), { _tag: "Admitted", remaining: 0 })
      }))

    it.effect("a refusal the store can tell in advance (`refusalAt`) is the one spend answers, and changes nothing", () =>
      Effect.gen(function*() {
        const { refusalAt } = yield* RateLimits.RateLimitRepository
        const org = yield* Kernel.nextId()
        const buckets = reviews(10) // one token every 6 seconds
        const told = (cost: number) =>
          Effect.map(Clock.currentTimeMillis, (nowMs) => refusalAt?.(org, buckets, cost, nowMs))
        assert.isUndefined(yield* told(1)) // a full bucket refuses nothing
        assert.strictEqual(admitted(yield* concurrently(10, () => spend(org, buckets, 1))).length, 10)
        yield* spend(org, buckets, 1) // the store's own refusal (where a bound is learned)
        yield* TestClock.adjust("1 second")
        for (const cost of [1, 11]) {
          const early = yield* told(cost)
          // A store that can tell at all (in-process levels, or a bound from its last refusal) tells here.
          if (refusalAt !== undefined) assert.isDefined(early)
          const answered = yield* spend(org, buckets, cost)
          assert.strictEqual(answered._tag, "Refused")
          if (early !== undefined) assert.deepStrictEqual(withoutStates(early), withoutStates(answered))
        }
        // Asking changed nothing: the refill goes on, and once affordable nothing is told in advance.
        yield* TestClock.adjust("5 seconds")
        assert.isUndefined(yield* told(1))
        assert.deepInclude(yield* spend(org, buckets, 1), { _tag: "Admitted", remaining: 0 })
      }))

    it.effect("a bucket list no caller builds (empty, or a key twice) is a defect, and changes nothing", () =>
      Effect.gen(function*() {
        const org = yield* Kernel.nextId()
        const buckets = reviews(60)
        assert.isTrue(Exit.hasDies(yield* Effect.exit(spend(org, [], 1))))
        assert.isTrue(Exit.hasDies(yield* Effect.exit(spend(org, [buckets[0]!, buckets[0]!], 1))))
        assert.deepInclude(yield* spend(org, buckets, 1), { _tag: "Admitted", remaining: 59 })
      }))
  })
