/**
 * Conformance of incremental sync (docs/DECISIONS.md §48) on every store: reviews, product questions and orders are
 * sortable and filterable by `updatedAt`, so `filter={"updatedAt":{"$gte":t}}&sort=updatedAt` walks exactly the
 * records changed since `t`, oldest change first, page by page.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Catalog, CoreLayer, Kernel, Orders, Organizations, Questions, Reviews } from "@feedback/core"
import { asDashboard } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { seedReview } from "../StoreTestKit.ts"

type Listed = { readonly id: string; readonly updatedAt: string }

/** Every page of `list` under `params`, following nextCursor one record at a time. */
const walk = (
  list: (
    params: Kernel.ListParams
  ) => Effect.Effect<{ readonly data: ReadonlyArray<Listed>; readonly nextCursor: string | null }, any, any>,
  params: Kernel.ListParams
) =>
  Effect.gen(function*() {
    const all: Array<Listed> = []
    let cursor: string | null = null
    do {
      const page: { readonly data: ReadonlyArray<Listed>; readonly nextCursor: string | null } = yield* list(
        cursor === null ? { ...params, limit: 1 } : { ...params, limit: 1, cursor }
      )
      all.push(...page.data)
      cursor = page.nextCursor
    } while (cursor !== null)
    return all
  })

export const syncConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("incremental sync", (it) => {
    it.effect("reviews, questions and orders: the records changed since t, in order of change, page by page", () =>
      Effect.gen(function*() {
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Sync" }))
        const as = asDashboard(org.id)
        const mug = yield* as(Catalog.Catalogs.use((c) => c.createProduct({ slug: "mug", title: "Mug" })))
        const reviews: Array<Listed> = []
        const questions: Array<Listed> = []
        const orders: Array<Listed> = []
        for (let i = 0; i < 3; i++) {
          reviews.push(yield* seedReview(org.id, { productId: mug.id, fields: { published: false } }))
          questions.push(
            yield* as(Questions.ProductQuestions.use((q) => q.create({ productId: mug.id, body: `Question ${i}?` })))
          )
          orders.push(
            yield* as(
              Orders.Orders.use((o) =>
                o.create({ customer: { email: `s${i}@example.com` }, lines: [{ productSlug: "mug" }] })
              )
            )
          )
          yield* TestClock.adjust("1 minute")
        }
        const since = yield* Kernel.Timestamp.now
        // Changed in the order 2, 0: each change moves its record to the end of `updatedAt` order.
        for (const i of [2, 0]) {
          yield* as(Reviews.ReviewWrites.use((w) => w.update(reviews[i]!.id as Kernel.ReviewId, { published: true })))
          yield* as(
            Questions.ProductQuestions.use((q) =>
              q.update(questions[i]!.id as Kernel.ProductQuestionId, { published: true })
            )
          )
          yield* as(Orders.Orders.use((o) => o.update(orders[i]!.id as Kernel.OrderId, { status: "fulfilled" })))
          yield* TestClock.adjust("1 second")
        }
        const changed = { filter: JSON.stringify({ updatedAt: { $gte: since } }), sort: "updatedAt" }
        const expected = (records: ReadonlyArray<{ readonly id: string }>) => [records[2]!.id, records[0]!.id]
        const ids = (listed: ReadonlyArray<Listed>) => listed.map((r) => r.id)
        assert.deepStrictEqual(
          ids(yield* walk((p) => as(Reviews.Reviews.use((r) => r.list(p))), changed)),
          expected(reviews)
        )
        assert.deepStrictEqual(
          ids(yield* walk((p) => as(Questions.ProductQuestions.use((q) => q.list(p))), changed)),
          expected(questions)
        )
        assert.deepStrictEqual(
          ids(yield* walk((p) => as(Orders.Orders.use((o) => o.list(p))), changed)),
          expected(orders)
        )
        // Newest change first, over every record; before `since` only the unchanged one remains.
        const newest = { sort: "-updatedAt" }
        assert.strictEqual(
          (yield* walk((p) => as(Reviews.Reviews.use((r) => r.list(p))), newest))[0]?.id,
          reviews[0]!.id
        )
        assert.strictEqual(
          (yield* walk((p) => as(Questions.ProductQuestions.use((q) => q.list(p))), newest))[0]?.id,
          questions[0]!.id
        )
        assert.strictEqual((yield* walk((p) => as(Orders.Orders.use((o) => o.list(p))), newest))[0]?.id, orders[0]!.id)
        const unchanged = { filter: JSON.stringify({ updatedAt: { $lt: since } }) }
        assert.deepStrictEqual(ids(yield* walk((p) => as(Reviews.Reviews.use((r) => r.list(p))), unchanged)), [
          reviews[1]!.id
        ])
        assert.deepStrictEqual(
          ids(yield* walk((p) => as(Questions.ProductQuestions.use((q) => q.list(p))), unchanged)),
          [
            questions[1]!.id
          ]
        )
        assert.deepStrictEqual(ids(yield* walk((p) => as(Orders.Orders.use((o) => o.list(p))), unchanged)), [
          orders[1]!.id
        ])
      }))
  })
