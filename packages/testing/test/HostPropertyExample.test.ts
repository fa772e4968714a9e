/**
 * The README's example, run: a host's own property tests in memory, written with `@feedback/testing` (the
 * Schema-derived arbitraries, `TestCoreLayer`, the callers) over the memory store and its test kit.
 */
import { assert, describe, it } from "@effect/vitest"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { MemoryStoreTestKit } from "@feedback/adapter-memory/testing"
import { Catalog, Organizations, Reviews } from "@feedback/core"
import {
  asDashboard,
  reviewFilterArbitrary,
  reviewImportRowArbitrary,
  reviewPatchArbitrary,
  reviewRecordArbitrary,
  schemaArbitrary,
  StoreTestKit,
  TestCoreLayer
} from "@feedback/testing"
import { Effect, Layer, ManagedRuntime, Schema as S } from "effect"
import fc from "fast-check"

// One API in memory for the whole file, as a host's test would build it.
const runtime = ManagedRuntime.make(TestCoreLayer(MemoryStoreTestKit.pipe(Layer.provideMerge(MemoryStoreLayer))))

/** A fresh organization with `count` generated reviews in it; answers its id and the reviews' ids. */
const organizationWithReviews = (count: number, seed: number) =>
  Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Host test" }))
    const [product] = fc.sample(schemaArbitrary(Catalog.Product), { numRuns: 1, seed })
    // Generated reviews of the one product, without a site or a customer (which the store would require to exist).
    const records = fc.sample(reviewRecordArbitrary, { numRuns: count, seed })
      .map((review) => ({ ...review, productId: product!.id, siteId: null, customerId: null }))
    yield* StoreTestKit.use((kit) =>
      Effect.andThen(
        kit.insertProduct(org.id, product!),
        kit.insertReviews(records.map((review) => ({ organizationId: org.id, review })))
      )
    )
    return { organizationId: org.id, ids: new Set(records.map((r) => r.id)) }
  })

describe("a host's property tests in memory", () => {
  it("every generated review filter is valid, and lists only the organization's own reviews", async () => {
    const { ids, organizationId } = await runtime.runPromise(organizationWithReviews(20, 1))
    await fc.assert(
      fc.asyncProperty(reviewFilterArbitrary, async (filter) => {
        const page = await runtime.runPromise(
          Reviews.Reviews.use((r) => r.list({ filter: JSON.stringify(filter), limit: 100 })).pipe(
            asDashboard(organizationId)
          )
        )
        return page.data.every((review) => ids.has(review.id))
      }),
      { numRuns: 60 }
    )
  })

  it("a generated patch's published flag is what the review reads back", async () => {
    const { ids, organizationId } = await runtime.runPromise(organizationWithReviews(3, 2))
    const [id] = [...ids]
    await fc.assert(
      fc.asyncProperty(reviewPatchArbitrary, async (patch) => {
        const read = await runtime.runPromise(
          Effect.gen(function*() {
            const before = yield* Reviews.Reviews.use((r) => r.get(id!, {}))
            yield* Reviews.ReviewWrites.use((w) => w.update(id!, { published: patch.published ?? !before.published }))
            return { before, after: yield* Reviews.Reviews.use((r) => r.get(id!, {})) }
          }).pipe(asDashboard(organizationId))
        )
        return read.after.published === (patch.published ?? !read.before.published)
      }),
      { numRuns: 30 }
    )
  })

  it("generated values are values of the core's Schemas", () => {
    for (const row of fc.sample(reviewImportRowArbitrary, { numRuns: 20, seed: 3 })) {
      assert.isTrue(S.is(S.toType(Reviews.ReviewImportRow))(row))
    }
  })
})
