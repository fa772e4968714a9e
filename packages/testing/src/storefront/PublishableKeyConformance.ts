/**
 * Publishable keys on every store (docs/DECISIONS.md §55): issued with a signing secret shown once, listed newest
 * first with revoked ones, revoked once (the first time kept), refused by authentication once revoked, scoped to
 * their organization; the setup state reports the newest key not revoked.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { CoreLayer, type Kernel, Organizations, Setup } from "@feedback/core"
import { asDashboard, asKey } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"

export const publishableKeyConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 60_000 })("publishable keys", (it) => {
    it.effect("issues keys with a signing secret, lists them newest first and revokes them once", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const org = yield* organizations.createOrganization({ name: "Shop" })
        const first = yield* organizations.createOwnPublishableKey().pipe(asDashboard(org.id))
        yield* TestClock.adjust("1 second")
        const second = yield* organizations.createPublishableKey(org.id)
        assert.match(first.key, /^pk_[A-Za-z0-9_-]{32}$/)
        assert.match(first.signingSecret, /^pks_[A-Za-z0-9_-]{43}$/)
        assert.notStrictEqual(first.signingSecret, second.signingSecret)

        const listed = yield* organizations.listOwnPublishableKeys().pipe(asDashboard(org.id))
        assert.deepStrictEqual(listed.map((k) => k.id), [second.id, first.id])
        assert.deepStrictEqual(Object.keys(listed[0]!).sort(), ["createdAt", "id", "key", "revokedAt"])
        assert.isTrue(listed.every((k) => k.revokedAt === null))

        const authenticated = yield* organizations.authenticatePublishableKey(second.key)
        assert.strictEqual(authenticated.organization.id, org.id)
        assert.strictEqual(authenticated.keyId, second.id)
        assert.strictEqual(authenticated.signingSecret, second.signingSecret)

        yield* TestClock.adjust("1 second")
        const revoked = yield* organizations.revokeOwnPublishableKey(second.id).pipe(asDashboard(org.id))
        assert.isNotNull(revoked.revokedAt)
        yield* TestClock.adjust("1 second")
        const again = yield* organizations.revokeOwnPublishableKey(second.id).pipe(asDashboard(org.id))
        assert.strictEqual(again.revokedAt, revoked.revokedAt)
        const refused = yield* Effect.exit(organizations.authenticatePublishableKey(second.key))
        assert.isTrue(Exit.isFailure(refused))

        // The setup state follows the newest key not revoked.
        const newest = yield* Organizations.StorefrontRecordRepository.use((r) => r.newestPublishableKey(org.id))
        assert.strictEqual(Option.getOrNull(newest)?.id, first.id)
        const state = yield* Setup.Setup.use((s) => s.getState()).pipe(asDashboard(org.id))
        assert.strictEqual(state.publishableKey, first.key)
        yield* organizations.revokeOwnPublishableKey(first.id).pipe(asDashboard(org.id))
        const none = yield* Setup.Setup.use((s) => s.getState()).pipe(asDashboard(org.id))
        assert.strictEqual(none.publishableKey, null)
        assert.isFalse(none.signals.hasPublishableKey)
        const after = yield* organizations.listOwnPublishableKeys().pipe(asDashboard(org.id))
        assert.isTrue(after.every((k) => k.revokedAt !== null))
      }))

    it.effect("another organization's key is a 404 and its revocation changes nothing; permissions are checked", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const mine = yield* organizations.createOrganization({ name: "Mine" })
        const theirs = yield* organizations.createOrganization({ name: "Theirs" })
        const key = yield* organizations.createPublishableKey(theirs.id)
        const missing = yield* Effect.flip(organizations.revokeOwnPublishableKey(key.id).pipe(asDashboard(mine.id)))
        assert.strictEqual(missing._tag, "NotFound")
        const unknown = yield* Effect.flip(
          organizations.revokeOwnPublishableKey("00000000-0000-4000-8000-0000000000ff" as Kernel.PublishableKeyId).pipe(
            asDashboard(mine.id)
          )
        )
        assert.strictEqual(unknown._tag, "NotFound")
        assert.deepStrictEqual(yield* organizations.listOwnPublishableKeys().pipe(asDashboard(mine.id)), [])
        assert.strictEqual((yield* organizations.authenticatePublishableKey(key.key)).organization.id, theirs.id)

        const reader = asKey(theirs.id, ["settings:read"])
        assert.lengthOf(yield* organizations.listOwnPublishableKeys().pipe(reader), 1)
        assert.strictEqual((yield* Effect.flip(organizations.createOwnPublishableKey().pipe(reader)))._tag, "Forbidden")
        assert.strictEqual(
          (yield* Effect.flip(organizations.revokeOwnPublishableKey(key.id).pipe(reader)))._tag,
          "Forbidden"
        )
        assert.strictEqual(
          (yield* Effect.flip(organizations.listOwnPublishableKeys().pipe(asKey(theirs.id, []))))._tag,
          "Forbidden"
        )
      }))

    it.effect("malformed, unknown and secret keys are one Unauthorized", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const org = yield* organizations.createOrganization({ name: "Shop" })
        const secret = yield* organizations.issueSecretKey(org.id, { permissions: ["reviews:read"] })
        for (
          const presented of [
            "",
            "pk_",
            "pk_short",
            `pk_${"a".repeat(32)}`,
            secret.secretKey,
            "pk_\u0000" + "a".repeat(31)
          ]
        ) {
          const failure = yield* Effect.flip(organizations.authenticatePublishableKey(presented))
          assert.strictEqual(failure._tag, "Unauthorized")
          assert.match(failure.message, /publishable key/)
        }
        // And a publishable key is no secret key.
        const key = yield* organizations.createPublishableKey(org.id)
        assert.strictEqual((yield* Effect.flip(organizations.authenticateSecretKey(key.key)))._tag, "Unauthorized")
      }))
  })
