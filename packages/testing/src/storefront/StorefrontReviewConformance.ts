/**
 * Shopper reviews on every store (shared §18, docs/DECISIONS.md §57): a submission stores its provenance, finds or
 * creates the customer, raises the arrival rules' flags from the store's real data, publishes only what the review
 * settings allow, keeps the product's stats and fires `review.created` in the same unit of work; signed calls verify
 * buyers against their orders; a survey's reviews are verified, carry its id, complete it and stop its reminders.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Catalog, CoreLayer, Kernel, Orders, Organizations, Reviews, Setup, Storefront, Surveys } from "@feedback/core"
import { asDashboard } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { makeRecordingMailer } from "../questions/RecordingMailer.ts"

const DAY = 86_400_000

/** A shop with two products and a publishable key; `shopper(address)` is that key calling from an address. */
const shop = (name: string) =>
  Effect.gen(function*() {
    const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name }))).id
    const as = asDashboard(org)
    const mug = yield* as(Catalog.Catalogs.use((c) => c.createProduct({ slug: "mug", title: "Mug" })))
    const cup = yield* as(Catalog.Catalogs.use((c) => c.createProduct({ slug: "cup", title: "Cup" })))
    const issued = yield* Organizations.Organizations.use((o) => o.createPublishableKey(org))
    const key = yield* Organizations.Organizations.use((o) => o.authenticatePublishableKey(issued.key))
    const from = (clientAddress: string) =>
      Effect.provideService(Storefront.CurrentStorefrontCaller, { ...key, clientAddress })
    const review = (id: string) =>
      as(Reviews.Reviews.use((r) => r.get(id as Kernel.ReviewId, { include: ["collisions"] })))
    const signed = (email: string, seconds: number) => {
      const timestamp = String(Math.floor(seconds))
      return {
        customerEmail: email,
        timestamp,
        signature: Storefront.signCustomer(issued.signingSecret, issued.key, email, timestamp)
      }
    }
    return { org, as, mug, cup, from, review, signed }
  })

const context = { userAgent: "Shopper/1.0", signed: {} }
/** The organization's events about customers and reviews (its shop's products announce themselves too). */
const eventsOf = (org: Kernel.OrganizationId) =>
  Effect.map(
    Kernel.EventOutbox.use((o) => o.listForOrganization(org)),
    (es) => es.map((e) => e.event).filter((e) => e.startsWith("customer.") || e.startsWith("review."))
  )

export const storefrontReviewConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("storefront reviews", (it) => {
    it.effect("a submission stores its provenance and customer, waits in the queue, keeps the stats, fires its event", () =>
      Effect.gen(function*() {
        const { org, as, mug, from, review } = yield* shop("Submitted")
        const reviews = yield* Storefront.StorefrontReviews
        const at = yield* Effect.clockWith((c) => c.currentTimeMillis)
        const submitted = yield* reviews.submitReview({
          productSlug: "mug",
          rating: 4,
          title: "Good",
          body: "A good mug.",
          authorName: "Ada Lovelace",
          email: "ADA@example.com",
          fingerprint: "fp-a",
          formRenderedAt: new Date(at - 30_000).toISOString()
        }, context).pipe(from("203.0.113.1"))
        assert.isFalse(submitted.published)
        const stored = yield* review(submitted.id)
        assert.deepInclude(stored, {
          productId: mug.id,
          published: false,
          moderatedAt: null,
          flagged: false,
          verifiedBuyer: false,
          surveyId: null,
          ipAddress: "203.0.113.1",
          userAgent: "Shopper/1.0",
          browserFingerprint: "fp-a",
          submitSeconds: 30
        })
        const customer = yield* as(Catalog.Catalogs.use((c) => c.getCustomer(stored.customerId!)))
        assert.deepInclude(customer, { email: "ada@example.com", firstName: "Ada", lastName: "Lovelace" })
        assert.deepStrictEqual(yield* eventsOf(org), ["customer.updated", "review.created"])
        const product = yield* as(Catalog.Catalogs.use((c) => c.getProduct(mug.id)))
        assert.deepInclude(product, { reviewCount: 1, publishedReviewCount: 0 })
        // The same email again: the same customer, no second creation.
        const again = yield* reviews.submitReview(
          { productId: mug.id, rating: 2, authorName: "Someone Else", email: "ada@example.com" },
          context
        ).pipe(from("203.0.113.2"))
        assert.strictEqual((yield* review(again.id)).customerId, stored.customerId)
        assert.deepStrictEqual(yield* eventsOf(org), ["customer.updated", "review.created", "review.created"])
      }))

    it.effect("arrival rules: collisions and duplicates from the store's data, auto-publish from the settings", () =>
      Effect.gen(function*() {
        const { as, mug, from, review } = yield* shop("Rules")
        yield* as(
          Setup.ReviewAutomation.use((a) => a.updateReviewSettings({ autoPublish: true, autoPublishMinRating: 4 }))
        )
        const reviews = yield* Storefront.StorefrontReviews
        const submit = (email: string, address: string, extra: object = {}) =>
          reviews.submitReview({ productSlug: "mug", rating: 5, authorName: "Sam", email, ...extra }, context).pipe(
            from(address)
          )
        const results = []
        for (const n of [1, 2, 3, 4]) {
          results.push(yield* submit(`s${n}@example.com`, "192.0.2.9", { fingerprint: "fp" }))
        }
        assert.deepStrictEqual(results.map((r) => r.published), [true, true, true, false])
        const collided = yield* review(results[3]!.id)
        assert.deepStrictEqual(collided.flags.map((f) => [f.code, f.score]), [
          ["ip_collision", 1],
          ["fingerprint_collision", 1]
        ])
        assert.isTrue(collided.flagged)
        assert.isNull(collided.moderatedAt)
        assert.deepStrictEqual(collided.collisions, { ipAddress: 3, browserFingerprint: 3 })
        // Text repeated by the same email, and by the same fingerprint from another email.
        yield* submit("t@example.com", "198.51.100.1", { body: "Same words", fingerprint: "fp-t" })
        const byEmail = yield* submit("t@example.com", "198.51.100.2", { body: "same  WORDS" })
        const byFingerprint = yield* submit("u@example.com", "198.51.100.3", {
          body: "Same words",
          fingerprint: "fp-t"
        })
        const other = yield* submit("v@example.com", "198.51.100.4", { body: "Same words" })
        assert.deepStrictEqual((yield* review(byEmail.id)).flags.map((f) => f.code), ["duplicate"])
        assert.deepStrictEqual((yield* review(byFingerprint.id)).flags.map((f) => f.code), ["duplicate"])
        assert.deepStrictEqual((yield* review(other.id)).flags, [])
        assert.isTrue(other.published)
        // The published ones count on the storefront at once.
        const ratings = yield* (yield* Storefront.StorefrontReads).ratings("mug").pipe(from("198.51.100.9"))
        assert.strictEqual(ratings.data[0]!.reviewCount, 5)
        const product = yield* as(Catalog.Catalogs.use((c) => c.getProduct(mug.id)))
        assert.deepInclude(product, { reviewCount: 8, publishedReviewCount: 5 })
        // Below the minimum rating, or not a verified buyer when only those are published: the queue.
        assert.isFalse((yield* submit("w@example.com", "198.51.100.5", { rating: 3 })).published)
        yield* as(Setup.ReviewAutomation.use((a) => a.updateReviewSettings({ autoPublishVerifiedOnly: true })))
        assert.isFalse((yield* submit("x@example.com", "198.51.100.6")).published)
      }))

    it.effect("signed calls: verified buyer only with an order (not cancelled) of the product; the customer's own list", () =>
      Effect.gen(function*() {
        const { as, mug, cup, from, review, signed } = yield* shop("Signed")
        const reviews = yield* Storefront.StorefrontReviews
        const order = yield* as(
          Orders.Orders.use((o) =>
            o.create({ customer: { email: "buyer@example.com", firstName: "Bea" }, lines: [{ productSlug: "mug" }] })
          )
        )
        const seconds = (yield* Effect.clockWith((c) => c.currentTimeMillis)) / 1_000
        const call = (productSlug: string, email: string) =>
          reviews.submitReview({ productSlug, rating: 5, authorName: "Bea" }, {
            userAgent: undefined,
            signed: signed(email, seconds)
          }).pipe(from("203.0.113.7"))
        const bought = yield* review((yield* call("mug", "buyer@example.com")).id)
        assert.deepInclude(bought, { verifiedBuyer: true, customerId: order.customerId, userAgent: null })
        assert.isFalse((yield* review((yield* call("cup", "buyer@example.com")).id)).verifiedBuyer)
        yield* as(Orders.Orders.use((o) => o.update(order.id, { status: "cancelled" })))
        assert.isFalse((yield* review((yield* call("mug", "buyer@example.com")).id)).verifiedBuyer)
        const stale = yield* Effect.flip(
          reviews.submitReview({ productId: cup.id, rating: 5, authorName: "Bea" }, {
            userAgent: undefined,
            signed: signed("buyer@example.com", seconds - 86_400 - 1)
          }).pipe(from("203.0.113.7"))
        )
        assert.strictEqual(stale._tag, "Unauthorized")
        const own = yield* reviews.customerReviews(signed("buyer@example.com", seconds), { limit: 50 }).pipe(
          from("203.0.113.7")
        )
        assert.strictEqual(own.data.length, 3)
        assert.isTrue(own.data.every((r) => r.published === false && r.authorName === "Bea"))
        assert.deepStrictEqual(Object.keys(own.data[0]!).sort(), [
          "authorName",
          "body",
          "createdAt",
          "files",
          "id",
          "productId",
          "published",
          "rating",
          "response",
          "title",
          "verifiedBuyer"
        ])
        const unsigned = yield* Effect.flip(reviews.customerReviews({}, {}).pipe(from("203.0.113.7")))
        assert.strictEqual(unsigned._tag, "Unauthorized")
      }))

    it.effect("survey reviews: verified, with the survey's id; completion ends the survey and its reminders", () =>
      Effect.gen(function*() {
        const { org, as, mug, cup, from, review } = yield* shop("Survey")
        yield* as(
          Setup.Setup.use((s) =>
            s.setupReviews({ triggerEvent: "order.fulfilled", delayDays: 3, reminder: true, reminderDelayDays: 2 })
          )
        )
        const order = yield* as(Orders.Orders.use((o) =>
          o.create({
            customer: { email: "sue@example.com", firstName: "Sue" },
            lines: [{ productSlug: "mug" }, { productSlug: "cup" }],
            status: "fulfilled"
          })
        ))
        const [survey] = (yield* as(
          Surveys.Surveys.use((s) => s.list({ filter: JSON.stringify({ "order.id": order.id }) }))
        )).data
        const token = survey!.url.split("/r/")[1]!
        const reviews = yield* Storefront.StorefrontReviews
        const shown = yield* reviews.survey(token).pipe(from("203.0.113.3"))
        assert.deepStrictEqual(shown.products.map((p) => [p.id, p.reviewed]), [[mug.id, false], [cup.id, false]])
        assert.deepStrictEqual(shown.customer, { firstName: "Sue" })
        // Another organization's key does not know the token.
        const stranger = yield* shop("Stranger")
        assert.strictEqual(
          (yield* Effect.flip(reviews.survey(token).pipe(stranger.from("203.0.113.3"))))._tag,
          "NotFound"
        )

        const first = yield* reviews.submitSurveyReviews(
          token,
          { reviews: [{ productId: mug.id, rating: 5 }] },
          context
        )
          .pipe(from("203.0.113.3"))
        const stored = yield* review(first.reviews[0]!.id)
        assert.deepInclude(stored, { verifiedBuyer: true, surveyId: survey!.id, customerId: order.customerId })
        assert.strictEqual(
          (yield* Effect.flip(
            reviews.submitSurveyReviews(token, { reviews: [{ productId: mug.id, rating: 4 }] }, context).pipe(
              from("203.0.113.3")
            )
          ))._tag,
          "Conflict"
        )
        // The request goes out when due; then the last product is reviewed and the reminder never does.
        const mailer = makeRecordingMailer()
        const run = Surveys.runDueSurveySteps(Surveys.defaultSurveyWorkerSettings("w1")).pipe(
          Effect.provide(mailer.layer)
        )
        yield* TestClock.adjust(3 * DAY)
        yield* run
        const [request] = mailer.calls.filter((m) => m.to === "sue@example.com")
        // The email's link is the hosted page of this very token (`survey.url`, `/r/{token}`).
        assert.include(request!.text, `/r/${token}`)
        assert.include(request!.html ?? "", `/r/${token}`)
        yield* reviews.submitSurveyReviews(token, { reviews: [{ productId: cup.id, rating: 4 }] }, context).pipe(
          from("203.0.113.3")
        )
        const done = yield* as(Surveys.Surveys.use((s) => s.get(survey!.id)))
        assert.strictEqual(done.status, "completed")
        assert.isNotNull(done.completedAt)
        assert.deepStrictEqual(done.products.map((p) => p.reviewId !== null), [true, true])
        yield* TestClock.adjust(5 * DAY)
        yield* run
        assert.strictEqual(mailer.calls.filter((m) => m.to === "sue@example.com").length, 1)
        assert.deepStrictEqual(done.steps.filter((s) => s.type === "email").map((s) => s.outcome), ["sent", "skipped"])
        assert.deepStrictEqual((yield* eventsOf(org)).filter((e) => e === "review.created").length, 2)
        // Expired: as unknown.
        yield* TestClock.adjust(90 * DAY)
        assert.strictEqual((yield* Effect.flip(reviews.survey(token).pipe(from("203.0.113.3"))))._tag, "NotFound")
      }))
  })
