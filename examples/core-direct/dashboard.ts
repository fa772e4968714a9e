/**
 * A host calling the core's use-cases directly, as its signed-in dashboard does: no HTTP, no secret key and no rate
 * limit (spec, Authentication: dashboard users are not rate limited), every permission, and the same rules, events
 * and webhooks as the API. The caller is a `DashboardCaller`, provided per call like a request's user.
 *
 *   node examples/core-direct/dashboard.ts
 */
import { NodeHostResolver } from "@feedback/adapter-http/server"
import { Catalog, CoreLayer, Kernel, Reviews } from "@feedback/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { openHostStore } from "../shared/HostStore.ts"

export const openDashboard = async () => {
  const store = openHostStore()
  // The use-case services over the host's store; webhook destinations are resolved with Node's DNS.
  const core = ManagedRuntime.make(CoreLayer.pipe(Layer.provideMerge(Layer.merge(store.services, NodeHostResolver))), {
    memoMap: store.runtime.memoMap
  })
  const { organizationId } = await store.provisionTenant("Dashboard shop")
  const user = new Kernel.DashboardCaller({
    organizationId: organizationId as Kernel.OrganizationId,
    userId: randomUUID() as Kernel.UserId,
    name: "Dana (support)"
  })

  /** Runs a use-case as the signed-in user. */
  const asUser = <A, E>(
    effect: Effect.Effect<A, E, Kernel.CurrentCaller | Catalog.Catalogs | Reviews.Reviews | Reviews.ReviewWrites>
  ) => core.runPromise(effect.pipe(Effect.provideService(Kernel.CurrentCaller, user)))

  return {
    organizationId,
    /** A product, a few imported reviews, and the user's reply to the lowest-rated one. */
    answerWorstReview: () =>
      asUser(Effect.gen(function*() {
        const product = yield* Catalog.Catalogs.use((c) =>
          c.createProduct({ title: "Dashboard mug", slug: "dashboard-mug" })
        )
        yield* Reviews.ReviewWrites.use((w) =>
          w.import({
            data: [5, 2, 4].map((rating, i) => ({
              product: product.slug,
              customer: `buyer${i}@example.com`,
              rating,
              title: `Rated ${rating}`
            }))
          })
        )
        const worst = (yield* Reviews.Reviews.use((r) => r.list({ sort: "rating", limit: 1 }))).data[0]
        if (worst === undefined) return yield* Effect.die(new Error("no reviews"))
        const reply = yield* Reviews.ReviewWrites.use((w) =>
          w.createReply(worst.id, { body: "Sorry to hear that — we'll make it right.", published: true })
        )
        return { worst, reply }
      })),
    /** One page of reviews: the dashboard's list view. */
    listReviews: () => asUser(Reviews.Reviews.use((r) => r.list({ limit: 10 }))),
    close: async () => {
      await core.dispose()
      await store.runtime.dispose()
    }
  }
}

if (import.meta.main) {
  const dashboard = await openDashboard()
  const { worst, reply } = await dashboard.answerWorstReview()
  console.log(`replied to the ${worst.rating}★ review "${worst.title}" as ${reply.responderName}`)
  await dashboard.close()
}
