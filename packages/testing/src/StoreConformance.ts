/**
 * The store conformance suite: one set of behavioural tests written against the core's store services, which every
 * store adapter runs against itself (memory, PostgreSQL, PGlite), so all stores behave identically. Capabilities add
 * their own suites to `conformanceSuites`; an adapter calls `runStoreConformance` once.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Effect, Exit, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { CoreLayer, Kernel, Organizations, type StoreServices } from "@feedback/core"
import { recordEvent, transactional } from "./TestTransactions.ts"
import { productQuestionConformance } from "./questions/ProductQuestionConformance.ts"
import { rateLimitConformance } from "./ratelimit/RateLimitConformance.ts"
import { webhookConformance } from "./webhooks/WebhookConformance.ts"
import { reviewWriteConformance } from "./reviews/ReviewWriteConformance.ts"
import { catalogConformance } from "./catalog/CatalogConformance.ts"
import { orderConformance } from "./orders/OrderConformance.ts"
import { syncConformance } from "./kernel/SyncConformance.ts"
import { surveyConformance } from "./surveys/SurveyConformance.ts"
import { unsubscribeConformance } from "./catalog/UnsubscribeConformance.ts"
import { cursorKeyConformance } from "./kernel/CursorKeyConformance.ts"
import { idempotencyConformance } from "./idempotency/IdempotencyConformance.ts"
import { reviewReadConformance } from "./reviews/ReviewReadConformance.ts"
import { jobConformance } from "./jobs/JobConformance.ts"
import { publishableKeyConformance } from "./storefront/PublishableKeyConformance.ts"
import { storefrontConformance } from "./storefront/StorefrontConformance.ts"
import { organizationConformance } from "./organizations/OrganizationConformance.ts"
import { eventStreamConformance } from "./webhooks/EventStreamConformance.ts"
import { storefrontReviewConformance } from "./storefront/StorefrontReviewConformance.ts"

import { setupConformance } from "./setup/SetupConformance.ts"
import { automationConformance } from "./setup/AutomationConformance.ts"
import type { ConformanceSuite, TestSupport } from "./ConformanceSuite.ts"
import { ConformanceDns } from "./ConformanceDns.ts"
export type { StoreServices }

const organizationsSuite: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 60_000 })("organizations and keys", (it) => {
    it.effect("creates, finds and re-plans an organization", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) =>
          o.createOrganization({ name: "Acme", apiRequestsPerMinute: 120 })
        )
        const found = yield* Organizations.Organizations.use((o) => o.findOrganization(org.id))
        assert.deepStrictEqual(found, org)
        const replanned = yield* Organizations.Organizations.use((o) => o.setApiRequestsPerMinute(org.id, 60))
        assert.strictEqual(replanned.plan.apiRequestsPerMinute, 60)
        assert.strictEqual(
          (yield* Organizations.Organizations.use((o) => o.findOrganization(org.id))).plan.apiRequestsPerMinute,
          60
        )
        assert.isFalse(yield* Organizations.OrganizationRepository.use((r) => r.isEmpty))
      }))

    it.effect("a plan beyond the bounds fails at once (a defect) and changes nothing", () =>
      Effect.gen(function*() {
        const tooBig = yield* Effect.exit(
          Organizations.Organizations.use((o) =>
            o.createOrganization({ name: "Huge", apiRequestsPerMinute: 100_000_000 })
          )
        )
        assert.isTrue(Exit.hasDies(tooBig))
        const org = yield* Organizations.Organizations.use((o) =>
          o.createOrganization({ name: "Bounded", apiRequestsPerMinute: 120 })
        )
        for (
          const patch of [{ apiRequestsPerMinute: 0 }, { apiRequestsPerMinute: 1.5 }, {
            loyaltyStampsPerMinute: 2_000_000
          }]
        ) {
          assert.isTrue(
            Exit.hasDies(yield* Effect.exit(Organizations.Organizations.use((o) => o.updatePlan(org.id, patch))))
          )
        }
        assert.deepStrictEqual((yield* Organizations.Organizations.use((o) => o.findOrganization(org.id))).plan, {
          apiRequestsPerMinute: 120
        })
      }))

    it.effect("an unknown organization is NotFound", () =>
      Effect.gen(function*() {
        const missing = "00000000-0000-4000-8000-000000000000" as Kernel.OrganizationId
        const error = yield* Effect.flip(Organizations.Organizations.use((o) => o.findOrganization(missing)))
        assert.strictEqual(error._tag, "NotFound")
        const replan = yield* Effect.flip(
          Organizations.Organizations.use((o) => o.setApiRequestsPerMinute(missing, 10))
        )
        assert.strictEqual(replan._tag, "NotFound")
      }))

    it.effect("a secret key authenticates until revoked, and only its hash is stored", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Keys" }))
        const issued = yield* Organizations.Organizations.use((o) =>
          o.issueSecretKey(org.id, { permissions: ["reviews:read", "reviews:read"] })
        )
        assert.match(issued.secretKey, /^sk_[A-Za-z0-9_-]{43}$/)
        assert.deepStrictEqual(issued.permissions, ["reviews:read"])
        const auth = yield* Organizations.Organizations.use((o) => o.authenticateSecretKey(issued.secretKey))
        assert.strictEqual(auth.caller.organizationId, org.id)
        assert.isTrue(auth.caller.permissions.has("reviews:read"))
        assert.isFalse(auth.caller.permissions.has("reviews:write"))
        const listed = yield* Organizations.Organizations.use((o) => o.listSecretKeys(org.id))
        assert.strictEqual(listed.length, 1)
        assert.notInclude(JSON.stringify(listed), issued.secretKey)
        const revoked = yield* Organizations.Organizations.use((o) => o.revokeSecretKey(org.id, issued.id))
        assert.isNotNull(revoked.revokedAt)
        const again = yield* Organizations.Organizations.use((o) => o.revokeSecretKey(org.id, issued.id))
        assert.strictEqual(again.revokedAt, revoked.revokedAt)
        const denied = yield* Effect.flip(
          Organizations.Organizations.use((o) => o.authenticateSecretKey(issued.secretKey))
        )
        assert.strictEqual(denied._tag, "Unauthorized")
      }))

    it.effect("a kept key is dropped at once by a plan change and by its revocation (on a store that keeps keys)", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) =>
          o.createOrganization({ name: "Kept keys", apiRequestsPerMinute: 60 })
        )
        const issued = yield* Organizations.Organizations.use((o) =>
          o.issueSecretKey(org.id, { permissions: ["settings:read"] })
        )
        const authenticate = Organizations.Organizations.use((o) => o.authenticateSecretKey(issued.secretKey))
        const kept = Effect.flatMap(
          Clock.currentTimeMillis,
          (nowMs) =>
            Organizations.Organizations.use((o) => Effect.succeed(o.keptAuthentication(issued.secretKey, nowMs)))
        )
        assert.isUndefined(yield* kept) // never authenticated yet
        const first = yield* authenticate
        const afterFirst = yield* kept
        if (afterFirst !== undefined) assert.deepStrictEqual(afterFirst, first)
        yield* Organizations.Organizations.use((o) => o.setApiRequestsPerMinute(org.id, 5))
        assert.isUndefined(yield* kept)
        assert.strictEqual((yield* authenticate).organization.plan.apiRequestsPerMinute, 5)
        yield* Organizations.Organizations.use((o) => o.revokeSecretKey(org.id, issued.id))
        assert.isUndefined(yield* kept)
        assert.strictEqual((yield* Effect.flip(authenticate))._tag, "Unauthorized")
      }))

    it.effect("unknown and malformed keys are the same Unauthorized", () =>
      Effect.gen(function*() {
        const a = yield* Effect.flip(
          Organizations.Organizations.use((o) => o.authenticateSecretKey("sk_" + "x".repeat(43)))
        )
        const b = yield* Effect.flip(Organizations.Organizations.use((o) => o.authenticateSecretKey("nonsense")))
        assert.strictEqual(a._tag, "Unauthorized")
        assert.deepStrictEqual(a.message, b.message)
      }))

    it.effect("a key of one organization cannot be revoked through another", () =>
      Effect.gen(function*() {
        const a = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "A" }))
        const b = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "B" }))
        const key = yield* Organizations.Organizations.use((o) => o.issueSecretKey(a.id, { permissions: [] }))
        const error = yield* Effect.flip(Organizations.Organizations.use((o) => o.revokeSecretKey(b.id, key.id)))
        assert.strictEqual(error._tag, "NotFound")
        yield* Organizations.Organizations.use((o) => o.authenticateSecretKey(key.secretKey))
        const missing = yield* Effect.flip(
          Organizations.Organizations.use((o) =>
            o.revokeSecretKey(a.id, "00000000-0000-4000-8000-000000000001" as Kernel.SecretKeyId)
          )
        )
        assert.strictEqual(missing._tag, "NotFound")
      }))

    it.effect("storefront records belong to an existing organization; the newest publishable key wins", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Shop" }))
        const first = yield* Organizations.Organizations.use((o) => o.createPublishableKey(org.id))
        yield* TestClock.adjust("1 second")
        const second = yield* Organizations.Organizations.use((o) => o.createPublishableKey(org.id))
        assert.match(first.key, /^pk_/)
        const newest = yield* Organizations.StorefrontRecordRepository.use((r) => r.newestPublishableKey(org.id))
        assert.deepStrictEqual(Option.getOrNull(newest), {
          id: second.id,
          key: second.key,
          createdAt: second.createdAt,
          revokedAt: null
        })
        const integration = yield* Organizations.Organizations.use((o) => o.createIntegration(org.id, "shopify"))
        assert.strictEqual(integration.platform, "shopify")
        const program = yield* Organizations.Organizations.use((o) =>
          o.createLoyaltyProgram(org.id, { status: "draft" })
        )
        assert.strictEqual(program.siteId, null)
        const wishlist = yield* Organizations.Organizations.use((o) => o.createWishlist(org.id, {}))
        assert.isTrue(yield* Organizations.StorefrontRecordRepository.use((r) => r.deleteWishlist(org.id, wishlist.id)))
        assert.isFalse(
          yield* Organizations.StorefrontRecordRepository.use((r) => r.deleteWishlist(org.id, wishlist.id))
        )
        const missing = "00000000-0000-4000-8000-000000000002" as Kernel.OrganizationId
        const error = yield* Effect.flip(
          Organizations.Organizations.use((o) => o.createIntegration(missing, "shopify"))
        )
        assert.strictEqual(error._tag, "NotFound")
      }))
  })

class Boom {
  readonly _tag = "Boom"
}

const unitOfWorkSuite: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 60_000 })("unit of work and outbox", (it) => {
    it.effect("commits writes and events together", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Outbox" }))
        yield* transactional(Effect.gen(function*() {
          yield* recordEvent(org.id, "review.created", { n: 1 })
          yield* recordEvent(org.id, "review.updated", { n: 2, nested: { ok: true } })
        }))
        const events = yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org.id))
        assert.deepStrictEqual(events.map((e) => e.event), ["review.created", "review.updated"])
        assert.deepStrictEqual(events[1]?.data, { n: 2, nested: { ok: true } })
      }))

    it.effect("a failed unit of work leaves no write and no event", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Rollback" }))
        const exit = yield* Effect.exit(transactional(Effect.gen(function*() {
          yield* Organizations.Organizations.use((o) => o.createPublishableKey(org.id))
          yield* recordEvent(org.id, "review.created", {})
          yield* Organizations.Organizations.use((o) => o.setApiRequestsPerMinute(org.id, 1))
          return yield* Effect.fail(new Boom())
        })))
        assert.isTrue(Exit.isFailure(exit))
        assert.deepStrictEqual(yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org.id)), [])
        assert.isTrue(
          Option.isNone(yield* Organizations.StorefrontRecordRepository.use((r) => r.newestPublishableKey(org.id)))
        )
        assert.strictEqual(
          (yield* Organizations.Organizations.use((o) => o.findOrganization(org.id))).plan.apiRequestsPerMinute,
          600
        )
      }))

    it.effect("a defect inside a unit of work rolls it back too", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Defect" }))
        yield* Effect.exit(transactional(Effect.gen(function*() {
          yield* recordEvent(org.id, "review.created", {})
          return yield* Effect.die("boom")
        })))
        assert.deepStrictEqual(yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org.id)), [])
      }))

    it.effect("concurrent units of work do not lose each other's writes", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Concurrent" }))
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => transactional(recordEvent(org.id, "review.created", { i })),
          { concurrency: 8, discard: true }
        )
        const events = yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org.id))
        assert.deepStrictEqual(
          events.map((e) => (e.data as { i: number }).i).sort((a, b) => a - b),
          Array.from({ length: 20 }, (_, i) => i)
        )
      }))
  })

/** Every capability's suite; a capability appends its own. */
export const conformanceSuites: ReadonlyArray<readonly [string, ConformanceSuite]> = [
  ["organizations", organizationsSuite],
  ["organization external ids", organizationConformance],
  ["product questions", productQuestionConformance],
  ["unit of work", unitOfWorkSuite],
  ["setup", setupConformance],
  ["automation", automationConformance],
  ["unsubscribe", unsubscribeConformance],
  ["webhooks", webhookConformance],
  ["event stream", eventStreamConformance],
  ["review writes", reviewWriteConformance],
  ["catalog", catalogConformance],
  ["orders", orderConformance],
  ["incremental sync", syncConformance],
  ["surveys", surveyConformance],
  ["reviews (read)", reviewReadConformance],
  ["cursor key", cursorKeyConformance],
  ["rate limit", rateLimitConformance],
  ["idempotency keys", idempotencyConformance],
  ["jobs", jobConformance],
  ["publishable keys", publishableKeyConformance],
  ["storefront", storefrontConformance],
  ["storefront reviews", storefrontReviewConformance]
]

/** Runs the whole conformance suite against `store`. */
export const runStoreConformance = (name: string, store: Layer.Layer<StoreServices | TestSupport>) =>
  describe(`store conformance: ${name}`, () => {
    const withIds = Layer.mergeAll(store, Kernel.IdGenerator.uuidV7, ConformanceDns)
    for (const [, suite] of conformanceSuites) suite(withIds)
  })

export { it }
