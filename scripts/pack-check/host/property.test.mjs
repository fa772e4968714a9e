// A host's own property tests, written against the packed @feedback/testing (its Schema-derived arbitraries,
// TestCoreLayer and callers) over the memory store, run by the host's vitest.
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { MemoryStoreTestKit } from "@feedback/adapter-memory/testing"
import { Catalog, Organizations, Reviews } from "@feedback/core"
import {
  asDashboard,
  reviewFilterArbitrary,
  reviewRecordArbitrary,
  schemaArbitrary,
  StoreTestKit,
  TestCoreLayer
} from "@feedback/testing"
import { Effect, Layer, ManagedRuntime } from "effect"
import fc from "fast-check"
import { afterAll, expect, it } from "vitest"

const runtime = ManagedRuntime.make(TestCoreLayer(MemoryStoreTestKit.pipe(Layer.provideMerge(MemoryStoreLayer))))
afterAll(() => runtime.dispose())

it("every generated review filter lists only the organization's own reviews", async () => {
  const { organizationId, ids } = await runtime.runPromise(Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Host test" }))
    const [product] = fc.sample(schemaArbitrary(Catalog.Product), { numRuns: 1, seed: 1 })
    const records = fc.sample(reviewRecordArbitrary, { numRuns: 15, seed: 1 })
      .map((review) => ({ ...review, productId: product.id, siteId: null, customerId: null }))
    yield* StoreTestKit.use((kit) =>
      Effect.andThen(
        kit.insertProduct(org.id, product),
        kit.insertReviews(records.map((review) => ({ organizationId: org.id, review })))
      )
    )
    return { organizationId: org.id, ids: new Set(records.map((r) => r.id)) }
  }))
  let seen = 0
  await fc.assert(
    fc.asyncProperty(reviewFilterArbitrary, async (filter) => {
      const page = await runtime.runPromise(
        Reviews.Reviews.use((r) => r.list({ filter: JSON.stringify(filter), limit: 100 })).pipe(
          asDashboard(organizationId)
        )
      )
      seen += page.data.length
      return page.data.every((review) => ids.has(review.id))
    }),
    { numRuns: 40 }
  )
  expect(seen).toBeGreaterThan(0)
})
