/**
 * Organizations' external ids on every store (docs/DECISIONS.md §65): optional, set on creation or by the operator's
 * change, removed with null, unique among organizations (a clash is a Conflict and changes nothing, concurrent
 * claims included), and the lookup by one finds exactly its organization.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { CoreLayer, Organizations } from "@feedback/core"
import type { ConformanceSuite } from "../ConformanceSuite.ts"

/** An id no other test of the (shared) store uses. */
const freshExternalId = (label: string) => `${label}-${crypto.randomUUID()}`

export const organizationConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 60_000 })("organization external ids", (it) => {
    it.effect("creates with an external id, finds by it, and keeps it through plan changes", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const externalId = freshExternalId("tenant")
        const org = yield* organizations.createOrganization({ name: "Mapped", externalId })
        assert.strictEqual(org.externalId, externalId)
        assert.deepStrictEqual(yield* organizations.findByExternalId(externalId), org)
        assert.deepStrictEqual(yield* organizations.findOrganization(org.id), org)
        const replanned = yield* organizations.updateOrganization(org.id, { apiRequestsPerMinute: 60 })
        assert.strictEqual(replanned.externalId, externalId)
        assert.strictEqual((yield* organizations.findByExternalId(externalId)).plan.apiRequestsPerMinute, 60)
        // Compared exactly: no case folding or trimming.
        const near = yield* Effect.flip(organizations.findByExternalId(externalId.toUpperCase()))
        assert.strictEqual(near._tag, "NotFound")
      }))

    it.effect("an organization without one has no externalId field, and none matches a lookup", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const org = yield* organizations.createOrganization({ name: "Unmapped" })
        assert.isFalse("externalId" in org)
        assert.isFalse("externalId" in (yield* organizations.findOrganization(org.id)))
        assert.strictEqual(
          (yield* Effect.flip(organizations.findByExternalId(freshExternalId("none"))))._tag,
          "NotFound"
        )
      }))

    it.effect("a taken external id is a Conflict on creation and on change, and changes nothing", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const externalId = freshExternalId("taken")
        const first = yield* organizations.createOrganization({ name: "First", externalId })
        const clash = yield* Effect.flip(organizations.createOrganization({ name: "Second", externalId }))
        assert.strictEqual(clash._tag, "Conflict")
        const other = yield* organizations.createOrganization({ name: "Other" })
        const moved = yield* Effect.flip(
          organizations.updateOrganization(other.id, { externalId, apiRequestsPerMinute: 7 })
        )
        assert.strictEqual(moved._tag, "Conflict")
        // All or nothing: the plan sent with the clashing id was not applied either.
        const after = yield* organizations.findOrganization(other.id)
        assert.isFalse("externalId" in after)
        assert.strictEqual(after.plan.apiRequestsPerMinute, other.plan.apiRequestsPerMinute)
        assert.strictEqual((yield* organizations.findByExternalId(externalId)).id, first.id)
        // Setting an organization's own id again is no clash.
        assert.strictEqual((yield* organizations.updateOrganization(first.id, { externalId })).externalId, externalId)
      }))

    it.effect("changes and removes an external id, freeing the old one", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const before = freshExternalId("before")
        const after = freshExternalId("after")
        const org = yield* organizations.createOrganization({ name: "Renamed", externalId: before })
        assert.strictEqual((yield* organizations.updateOrganization(org.id, { externalId: after })).externalId, after)
        assert.strictEqual((yield* Effect.flip(organizations.findByExternalId(before)))._tag, "NotFound")
        const reused = yield* organizations.createOrganization({ name: "Reuser", externalId: before })
        assert.strictEqual((yield* organizations.findByExternalId(before)).id, reused.id)
        const removed = yield* organizations.updateOrganization(org.id, { externalId: null })
        assert.isFalse("externalId" in removed)
        assert.strictEqual((yield* Effect.flip(organizations.findByExternalId(after)))._tag, "NotFound")
        const missing = yield* Effect.flip(
          organizations.updateOrganization("00000000-0000-4000-8000-000000000000" as typeof org.id, {
            externalId: after
          })
        )
        assert.strictEqual(missing._tag, "NotFound")
      }))

    it.effect("of concurrent claims on one external id exactly one wins", () =>
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        const externalId = freshExternalId("race")
        const exits = yield* Effect.forEach(
          Array.from({ length: 6 }, (_, i) => i),
          (i) => Effect.exit(organizations.createOrganization({ name: `Racer ${i}`, externalId })),
          { concurrency: 6 }
        )
        const won = exits.filter(Exit.isSuccess)
        assert.strictEqual(won.length, 1)
        assert.strictEqual((yield* organizations.findByExternalId(externalId)).id, won[0]!.value.id)
      }))
  })
