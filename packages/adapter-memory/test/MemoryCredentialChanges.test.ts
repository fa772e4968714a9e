/**
 * The memory store hears every change to keys and organizations (`MemoryCredentialChanges`): they are writes to its
 * own tables, undone writes included. So authenticated keys are kept (the refusal gate and the hot path read them
 * without a lookup), and a revocation, a plan change or a rolled-back write drops them at once.
 */
import { assert, it } from "@effect/vitest"
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Layer } from "effect"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"

const Services = Organizations.Organizations.layer.pipe(
  Layer.provideMerge(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7))
)

const setUp = Effect.gen(function*() {
  const organizations = yield* Organizations.Organizations
  const organization = yield* organizations.createOrganization({ name: "Kept", apiRequestsPerMinute: 60 })
  const issued = yield* organizations.issueSecretKey(organization.id, { permissions: ["settings:read"] })
  const kept = () => organizations.keptAuthentication(issued.secretKey, Date.now())
  return { organizations, organizationId: organization.id as Kernel.OrganizationId, issued, kept }
})

it.live("a key is kept once authenticated, and dropped by its revocation", () =>
  Effect.gen(function*() {
    const { issued, kept, organizationId, organizations } = yield* setUp
    assert.isUndefined(kept()) // never authenticated yet
    const authenticated = yield* organizations.authenticateSecretKey(issued.secretKey)
    assert.deepStrictEqual(kept(), authenticated)
    yield* organizations.revokeSecretKey(organizationId, issued.id)
    assert.isUndefined(kept())
    assert.isTrue((yield* Effect.exit(organizations.authenticateSecretKey(issued.secretKey)))._tag === "Failure")
  }).pipe(Effect.provide(Layer.fresh(Services))))

it.live("a plan change, and a write that was rolled back, drop every kept key", () =>
  Effect.gen(function*() {
    const { issued, kept, organizationId, organizations } = yield* setUp
    yield* organizations.authenticateSecretKey(issued.secretKey)
    yield* organizations.setApiRequestsPerMinute(organizationId, 120)
    assert.isUndefined(kept())
    const again = yield* organizations.authenticateSecretKey(issued.secretKey)
    assert.strictEqual(again.organization.plan.apiRequestsPerMinute, 120)
    assert.isDefined(kept())
    // A transaction that brought a revoked key back, authenticated it, and failed: the undo is a change too, so
    // what was kept while the key looked valid is not used after.
    yield* organizations.revokeSecretKey(organizationId, issued.id)
    const db = yield* MemoryDatabase
    const keys = db.table<string, Organizations.SecretKeyRecord>("secret_keys")
    const revoked = keys.get(issued.id)!
    const inside = yield* Effect.exit(db.transaction(Effect.gen(function*() {
      yield* db.mutate(() => keys.set(issued.id, { ...revoked, revokedAt: null }))
      yield* organizations.authenticateSecretKey(issued.secretKey)
      assert.isDefined(kept())
      return yield* Effect.fail("rolled back")
    })))
    assert.strictEqual(inside._tag, "Failure")
    assert.isNotNull(keys.get(issued.id)!.revokedAt)
    assert.isUndefined(kept())
  }).pipe(Effect.provide(Layer.fresh(Services))))
