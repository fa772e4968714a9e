/**
 * The storefront's reads and stats on every store (docs/DECISIONS.md §55): published records only, in the shopper's
 * shape; the products' rating histogram kept exact by every review change (a property over random sequences of
 * imports, shopper submissions, moderation, bulk updates, redactions and deletions compares it with a recomputation); and storefront
 * buckets that never touch the organization's.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, Result } from "effect"
import fc from "fast-check"
import {
  Catalog,
  CoreLayer,
  Kernel,
  Organizations,
  Questions,
  RateLimits,
  Reviews,
  Setup,
  Storefront
} from "@feedback/core"
import { asDashboard } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { makeCustomer, makeProduct, makeSite, seedReviews, StoreTestKit } from "../StoreTestKit.ts"

const shopper = (organizationId: Kernel.OrganizationId) =>
  Effect.flatMap(
    Organizations.Organizations.use((o) => o.createPublishableKey(organizationId)),
    (issued) =>
      Effect.map(
        Organizations.Organizations.use((o) => o.authenticatePublishableKey(issued.key)),
        (key) => ({ ...key, clientAddress: "203.0.113.5" })
      )
  )

/** Every review of the organization, as the admin read side answers it. */
const allReviews = (organizationId: Kernel.OrganizationId) =>
  Effect.gen(function*() {
    const repo = yield* Reviews.ReviewRepository
    const issuer = { key: yield* Kernel.CursorKey, organizationId }
    const out: Array<Reviews.Review> = []
    let cursor: string | undefined
    for (;;) {
      const request = Result.getOrThrow(
        Kernel.parseListRequest({ limit: 250, cursor }, Reviews.reviewListEndpoint, issuer)
      )
      const page = yield* repo.list(organizationId, request)
      out.push(...page.data)
      if (page.nextCursor === null) return out
      cursor = page.nextCursor
    }
  })

export const storefrontConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("storefront", (it) => {
    it.effect("reads published reviews, ratings and questions only, in the shopper's shape", () =>
      Effect.gen(function*() {
        const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Shop" }))).id
        const fx = yield* StoreTestKit
        const mug = makeProduct({ slug: "mug" })
        const cup = makeProduct({ slug: "cup" })
        yield* fx.insertProduct(org, mug)
        yield* fx.insertProduct(org, cup)
        const ada = makeCustomer({ firstName: "Ada", lastName: "lovelace", email: "ada@example.com" })
        yield* fx.insertCustomer(org, ada)
        yield* seedReviews(org, [
          {
            productId: mug.id,
            customerId: ada.id,
            fields: { rating: 5, ipAddress: "198.51.100.1" },
            reply: { published: true, body: "Thanks" },
            files: 2
          },
          { productId: mug.id, fields: { rating: 3.5 }, reply: { published: false, body: "Draft" } },
          { productId: mug.id, fields: { rating: 1, published: false, body: "hidden" } },
          { productId: cup.id, fields: { rating: 2 } }
        ])
        const caller = yield* shopper(org)
        const reads = yield* Storefront.StorefrontReads
        const as = Effect.provideService(Storefront.CurrentStorefrontCaller, caller)

        const page = yield* reads.productReviews("mug", { sort: "-rating" }).pipe(as)
        assert.deepStrictEqual(page.data.map((r) => r.rating), [5, 3.5])
        assert.strictEqual(page.data[0]!.authorName, "Ada L.")
        assert.strictEqual(page.data[1]!.authorName, "Anonymous")
        assert.deepStrictEqual(page.data[0]!.response?.body, "Thanks")
        assert.isNull(page.data[1]!.response)
        assert.lengthOf(page.data[0]!.files, 2)
        assert.deepStrictEqual(Object.keys(page.data[0]!).sort(), [
          "authorName",
          "body",
          "createdAt",
          "files",
          "id",
          "productId",
          "rating",
          "response",
          "title",
          "verifiedBuyer"
        ])
        // 3.5 counts as four stars.
        assert.deepStrictEqual(
          (yield* reads.productReviews(mug.id, { rating: 4 }).pipe(as)).data.map((r) => r.rating),
          [3.5]
        )
        const first = yield* reads.productReviews("mug", { limit: 1, sort: "rating" }).pipe(as)
        assert.deepStrictEqual(first.data.map((r) => r.rating), [3.5])
        const second = yield* reads.productReviews("mug", { limit: 1, sort: "rating", cursor: first.nextCursor! }).pipe(
          as
        )
        assert.deepStrictEqual(second.data.map((r) => r.rating), [5])
        assert.strictEqual(
          (yield* Effect.flip(
            reads.productReviews("cup", { limit: 1, sort: "rating", cursor: first.nextCursor! }).pipe(as)
          ))._tag,
          "InvalidRequest"
        )
        assert.strictEqual(
          (yield* Effect.flip(reads.productReviews("mug", { limit: 51 }).pipe(as)))._tag,
          "InvalidRequest"
        )
        assert.strictEqual((yield* Effect.flip(reads.productReviews("nope", {}).pipe(as)))._tag, "NotFound")

        const ratings = yield* reads.ratings(`cup,${mug.id},missing`).pipe(as)
        assert.deepStrictEqual(ratings.data, [
          {
            productId: cup.id,
            slug: "cup",
            reviewCount: 1,
            averageRating: 2,
            histogram: { "1": 0, "2": 1, "3": 0, "4": 0, "5": 0 }
          },
          {
            productId: mug.id,
            slug: "mug",
            reviewCount: 2,
            averageRating: 4.25,
            histogram: { "1": 0, "2": 0, "3": 0, "4": 1, "5": 1 }
          }
        ])

        // Another organization's key sees none of it.
        const other = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other" }))).id
        const stranger = yield* shopper(other)
        assert.strictEqual(
          (yield* Effect.flip(
            reads.productReviews(mug.id, {}).pipe(Effect.provideService(Storefront.CurrentStorefrontCaller, stranger))
          ))._tag,
          "NotFound"
        )
        assert.deepStrictEqual(
          (yield* reads.ratings(mug.id).pipe(Effect.provideService(Storefront.CurrentStorefrontCaller, stranger))).data,
          []
        )

        const questions = yield* Questions.ProductQuestions
        const asked = yield* questions.create({
          productId: mug.id,
          body: "Big?",
          askerName: "Grace",
          askerEmail: "g@example.com",
          published: true
        }).pipe(asDashboard(org))
        yield* questions.createAnswer(asked.id, { body: "Yes" }).pipe(asDashboard(org))
        yield* questions.createAnswer(asked.id, { body: "Draft", published: false }).pipe(asDashboard(org))
        yield* questions.create({ productId: mug.id, body: "Hidden?" }).pipe(asDashboard(org))
        const listed = yield* reads.productQuestions("mug", {}).pipe(as)
        assert.deepStrictEqual(listed.data.map((q) => [q.body, q.askerName, q.answers.map((a) => a.body)]), [[
          "Big?",
          "Grace",
          ["Yes"]
        ]])
        assert.deepStrictEqual(Object.keys(listed.data[0]!).sort(), ["answers", "askerName", "body", "createdAt", "id"])

        assert.isTrue(yield* reads.allowsOrigin(org, "https://www.shop.example.com").pipe(Effect.map((x) => !x)))
        yield* fx.insertSite(org, makeSite({ domain: "Shop.Example.com" }))
        assert.isTrue(yield* reads.allowsOrigin(org, "https://www.shop.example.com"))
        assert.isFalse(yield* reads.allowsOrigin(other, "https://www.shop.example.com"))
      }))

    it.effect("questions and answers submitted through the storefront wait unpublished in the queue", () =>
      Effect.gen(function*() {
        const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Asked" }))).id
        const fx = yield* StoreTestKit
        const mug = makeProduct({ slug: "mug" })
        yield* fx.insertProduct(org, mug)
        const ada = makeCustomer({ email: "ada@example.com" })
        yield* fx.insertCustomer(org, ada)
        const submissions = yield* Storefront.StorefrontSubmissions
        const as = Effect.provideService(Storefront.CurrentStorefrontCaller, yield* shopper(org))
        const asked = yield* submissions.askQuestion({ productSlug: "mug", body: "Big?", askerEmail: "g@example.com" })
          .pipe(as)
        const questions = yield* Questions.ProductQuestions
        const stored = yield* questions.get(asked.id as Kernel.ProductQuestionId).pipe(asDashboard(org))
        assert.deepInclude(stored, {
          published: false,
          moderatedAt: null,
          source: "widget",
          notifyByEmail: true,
          productId: mug.id
        })
        const events = yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))
        assert.deepStrictEqual(events.map((e) => e.event), ["productQuestion.created"])
        assert.strictEqual(
          (yield* Effect.flip(
            submissions.answerQuestion(asked.id as Kernel.ProductQuestionId, { body: "Yes", authorName: "Al" }).pipe(as)
          ))._tag,
          "NotFound"
        )
        yield* questions.update(asked.id as Kernel.ProductQuestionId, { published: true }).pipe(asDashboard(org))
        const answered = yield* submissions.answerQuestion(asked.id as Kernel.ProductQuestionId, {
          body: "Yes",
          authorName: "Al",
          email: "ADA@example.com"
        }).pipe(as)
        const answers = (yield* questions.listAnswers(asked.id as Kernel.ProductQuestionId).pipe(asDashboard(org))).data
        assert.deepStrictEqual(answers.map((a) => [a.id, a.authorType, a.published, a.customerId]), [[
          answered.id,
          "customer",
          false,
          ada.id
        ]])
        const after = yield* questions.get(asked.id as Kernel.ProductQuestionId).pipe(asDashboard(org))
        assert.deepInclude(after, { answerCount: 1, publishedAnswerCount: 0, answeredAt: null })
        // Another organization's key finds neither the product nor the question.
        const stranger = Effect.provideService(
          Storefront.CurrentStorefrontCaller,
          yield* shopper((yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Else" }))).id)
        )
        assert.strictEqual(
          (yield* Effect.flip(submissions.askQuestion({ productId: mug.id, body: "Mine?" }).pipe(stranger)))._tag,
          "InvalidRequest"
        )
        assert.strictEqual(
          (yield* Effect.flip(
            submissions.answerQuestion(asked.id as Kernel.ProductQuestionId, { body: "x", authorName: "y" }).pipe(
              stranger
            )
          ))._tag,
          "NotFound"
        )
        assert.strictEqual(
          (yield* Effect.flip(
            submissions.askQuestion({ productId: mug.id, productSlug: "mug", body: "Both?" }).pipe(as)
          ))._tag,
          "InvalidRequest"
        )
      }))

    it.effect("a read's tag moves with every kind of write to what a publishable key reads, and only then", () =>
      Effect.gen(function*() {
        const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Tagged" }))).id
        const fx = yield* StoreTestKit
        const mug = makeProduct({ slug: "mug" })
        yield* fx.insertProduct(org, mug)
        yield* fx.insertCustomer(org, makeCustomer({ firstName: "Ada", email: "ada@example.com" }))
        yield* Setup.ReviewAutomation.use((a) => a.updateReviewSettings({ autoPublish: true, autoPublishMinRating: 3 }))
          .pipe(asDashboard(org))
        const as = Effect.provideService(Storefront.CurrentStorefrontCaller, yield* shopper(org))
        const dashboard = asDashboard(org)
        const reads = yield* Storefront.StorefrontReads
        const writes = yield* Reviews.ReviewWrites
        const questions = yield* Questions.ProductQuestions
        const submissions = yield* Storefront.StorefrontSubmissions
        const { spendWithStorefrontVersion } = yield* RateLimits.RateLimitRepository
        let spends = 0
        const tagsOf = Effect.all([
          reads.contentTag("productReviews", [mug.id, undefined, undefined, undefined, undefined]),
          reads.contentTag("ratings", ["mug"]),
          reads.contentTag("productQuestions", [mug.id, undefined, undefined])
        ])
        // The three cacheable reads with their tags: what a revalidation compares and what a 200 would answer.
        const snapshot = Effect.gen(function*() {
          const tags = yield* tagsOf
          if (spendWithStorefrontVersion !== undefined) {
            // A store reading the version with the spend gives the tags its probe gives (docs/DECISIONS.md §70).
            const caller = yield* Storefront.CurrentStorefrontCaller
            const address = `spend-${spends++}`
            const bucket = Storefront.storefrontBucket("read", caller.keyId, address, caller.organization.plan)
            const { decision, storefrontVersion } = yield* spendWithStorefrontVersion(org, [bucket], 1)
            assert.strictEqual(decision._tag, "Admitted")
            assert.isDefined(storefrontVersion)
            const spent = yield* tagsOf.pipe(
              Effect.provideService(Storefront.CurrentStorefrontCaller, { ...caller, storefrontVersion })
            )
            assert.deepStrictEqual(spent, tags, "the version read with the spend is the probe's")
          }
          const body = JSON.stringify([
            yield* reads.productReviews(mug.id, {}),
            yield* reads.ratings("mug"),
            yield* reads.productQuestions(mug.id, {})
          ])
          if (reads.tagged !== undefined) {
            // A store whose reads take the version with their first statement gives the probe's tags and the same
            // bodies (docs/DECISIONS.md §78), by id and by slug, and for a listing that finds nothing.
            const { organization } = yield* Storefront.CurrentStorefrontCaller
            const tagged = [
              yield* reads.tagged.productReviews(mug.id, {}),
              yield* reads.tagged.ratings("mug"),
              yield* reads.tagged.productQuestions(mug.id, {})
            ]
            assert.deepStrictEqual(
              tagged.map((t, i) =>
                Storefront.storefrontTag(
                  organization.id,
                  t.storefrontVersion,
                  ["productReviews", "ratings", "productQuestions"][i]!,
                  [[mug.id, undefined, undefined, undefined, undefined], ["mug"], [mug.id, undefined, undefined]][i]!
                )
              ),
              tags,
              "the version read with the first statement is the probe's"
            )
            assert.strictEqual(JSON.stringify(tagged.map((t) => t.value)), body)
            const bySlug = yield* reads.tagged.productReviews("mug", {})
            const nothing = yield* reads.tagged.ratings("no-such-product")
            assert.deepStrictEqual(nothing.value.data, [])
            assert.deepStrictEqual([bySlug.storefrontVersion, nothing.storefrontVersion], [
              tagged[0]!.storefrontVersion,
              tagged[0]!.storefrontVersion
            ])
            assert.strictEqual(
              (yield* Effect.flip(reads.tagged.productQuestions("no-such-product", {})))._tag,
              "NotFound"
            )
          }
          return { tags, body }
        }).pipe(as)
        let last = yield* snapshot
        assert.strictEqual(new Set(last.tags).size, 3, "each read has its own tag")
        /** After the write, no tag is the old one (a stale If-None-Match reads again); unchanged, each stays (304). */
        const after = <A, E, R>(kind: string, visible: boolean, write: Effect.Effect<A, E, R>) =>
          Effect.gen(function*() {
            const result = yield* write
            const now = yield* snapshot
            for (let i = 0; i < 3; i++) assert.notStrictEqual(now.tags[i], last.tags[i], `${kind}: tag ${i} moved`)
            if (visible) assert.notStrictEqual(now.body, last.body, `${kind}: the shopper sees the change`)
            assert.deepStrictEqual((yield* snapshot).tags, now.tags, `${kind}: unchanged afterwards`)
            last = now
            return result
          })
        const imported = yield* after(
          "import",
          true,
          writes.import({ data: [{ product: "mug", rating: 4, title: "Nice mug", customer: "ada@example.com" }] })
            .pipe(dashboard)
        )
        const reviewId = imported.imported[0]!.id
        const submitted = yield* after(
          "shopper submission (pending)",
          false,
          Storefront.StorefrontReviews.use((r) =>
            r.submitReview(
              { productId: mug.id, rating: 2, title: "Meh", authorName: "Bo", email: "bo@example.com" },
              { userAgent: undefined, signed: {} }
            )
          ).pipe(as)
        )
        yield* after("moderation", true, writes.update(submitted.id, { published: true }).pipe(dashboard))
        yield* after("reply", true, writes.createReply(reviewId, { body: "Thanks", published: true }).pipe(dashboard))
        yield* after("redaction", true, writes.update(reviewId, { title: "[redacted] mug" }).pipe(dashboard))
        yield* after(
          "bulk update",
          true,
          writes.bulkUpdate({ filter: JSON.stringify({ rating: { $lte: 2 } }) }, { published: false }).pipe(dashboard)
        )
        const asked = yield* after(
          "shopper question (queued)",
          false,
          submissions.askQuestion({ productId: mug.id, body: "Dishwasher safe?" }).pipe(as)
        )
        const questionId = asked.id as Kernel.ProductQuestionId
        yield* after("question moderation", true, questions.update(questionId, { published: true }).pipe(dashboard))
        const answer = yield* after(
          "merchant answer",
          true,
          questions.createAnswer(questionId, { body: "Yes", authorName: "Shop" }).pipe(dashboard)
        )
        yield* after(
          "shopper answer (unpublished)",
          false,
          submissions.answerQuestion(questionId, { body: "Mine survived", authorName: "Cy" }).pipe(as)
        )
        yield* after("answer deletion", true, questions.deleteAnswer(questionId, answer.id).pipe(dashboard))
        yield* after(
          "product edit",
          false,
          Catalog.Catalogs.use((c) => c.updateProduct(mug.id, { title: "Big mug" })).pipe(dashboard)
        )
        yield* after("review deletion", true, writes.delete(reviewId, { reason: "spam" }).pipe(dashboard))
        yield* after("question deletion", true, questions.delete(questionId).pipe(dashboard))
      }))

    it.effect("storefront buckets are per key and address and never spend the organization's", () =>
      Effect.gen(function*() {
        const org = (yield* Organizations.Organizations.use((o) =>
          o.createOrganization({ name: "Limited", apiRequestsPerMinute: 5 })
        )).id
        const limits = yield* RateLimits.RateLimitRepository
        const plan = { apiRequestsPerMinute: 5, storefrontReadsPerMinute: 2 }
        const read = (address: string) =>
          limits.spend(org, [Storefront.storefrontBucket("read", "k1", address, plan)], 1)
        assert.strictEqual((yield* read("a"))._tag, "Admitted")
        assert.strictEqual((yield* read("a"))._tag, "Admitted")
        assert.strictEqual((yield* read("a"))._tag, "Refused")
        assert.strictEqual((yield* read("b"))._tag, "Admitted")
        assert.strictEqual(
          (yield* limits.spend(org, [Storefront.storefrontBucket("read", "k2", "a", plan)], 1))._tag,
          "Admitted"
        )
        const orgSpend = yield* limits.spend(org, [{
          key: RateLimits.ORG_BUCKET_KEY,
          spec: RateLimits.TokenBucket.bucketForPlan(5)
        }], 1)
        assert.strictEqual(orgSpend._tag, "Admitted")
        assert.strictEqual(orgSpend.remaining, 4)
        if (limits.spendWithStorefrontVersion !== undefined) {
          // The spend that reads the content version with it decides on the same levels.
          const withVersion = (address: string) =>
            Effect.map(
              limits.spendWithStorefrontVersion!(org, [Storefront.storefrontBucket("read", "k1", address, plan)], 1),
              ({ decision }) =>
                decision._tag
            )
          assert.strictEqual(yield* withVersion("b"), "Admitted")
          assert.strictEqual(yield* withVersion("b"), "Refused")
          assert.strictEqual((yield* read("b"))._tag, "Refused")
          assert.strictEqual(yield* withVersion("c"), "Admitted")
        }
        const submission = Storefront.storefrontBucket("submission", "k1", "a", {})
        assert.deepStrictEqual(submission.spec.ceiling, 20)
        assert.notStrictEqual(submission.key, Storefront.storefrontBucket("read", "k1", "a", {}).key)
      }))

    it.effect("product stats and the rating histogram equal a recomputation after any sequence of review changes", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const fx = yield* StoreTestKit
        const op = fc.oneof(
          fc.record({
            kind: fc.constant("import" as const),
            rows: fc.array(
              fc.record({
                product: fc.integer({ min: 0, max: 1 }),
                rating: fc.integer({ min: 2, max: 10 }).map((h) => h / 2),
                state: fc.constantFrom("published", "unpublished", "pending")
              }),
              { minLength: 1, maxLength: 4 }
            )
          }),
          fc.record({ kind: fc.constant("publish" as const), pick: fc.nat(), published: fc.boolean() }),
          fc.record({
            kind: fc.constant("bulk" as const),
            atLeast: fc.integer({ min: 1, max: 5 }),
            product: fc.option(fc.integer({ min: 0, max: 1 })),
            published: fc.boolean()
          }),
          fc.record({ kind: fc.constant("redact" as const), pick: fc.nat() }),
          fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
          // A shopper's review: published on arrival from 3 stars (the settings below), else pending.
          fc.record({
            kind: fc.constant("submit" as const),
            product: fc.integer({ min: 0, max: 1 }),
            rating: fc.integer({ min: 1, max: 5 })
          })
        )
        const sequences = fc.sample(fc.array(op, { minLength: 1, maxLength: 10 }), { numRuns: 6, seed: 48 })
        for (const sequence of sequences) {
          const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Stats" }))).id
          const products = [makeProduct({ slug: "a" }), makeProduct({ slug: "b" })]
          for (const p of products) yield* fx.insertProduct(org, p)
          yield* Setup.ReviewAutomation.use((a) =>
            a.updateReviewSettings({ autoPublish: true, autoPublishMinRating: 3 })
          )
            .pipe(
              asDashboard(org)
            )
          const storefront = Effect.provideService(Storefront.CurrentStorefrontCaller, yield* shopper(org))
          const ids: Array<Kernel.ReviewId> = []
          const pick = (n: number) => ids.length === 0 ? undefined : ids[n % ids.length]
          for (const step of sequence) {
            const as = asDashboard(org)
            switch (step.kind) {
              case "import": {
                const result = yield* writes.import({
                  data: step.rows.map((r) => ({
                    product: products[r.product]!.slug,
                    rating: r.rating,
                    title: "Nice mug",
                    ...(r.state === "unpublished"
                      ? { published: false }
                      : r.state === "pending"
                      ? { pending: true }
                      : {})
                  }))
                }).pipe(as)
                ids.push(...result.imported.map((i) => i.id))
                break
              }
              case "publish": {
                const id = pick(step.pick)
                if (id !== undefined) yield* writes.update(id, { published: step.published }).pipe(as)
                break
              }
              case "bulk": {
                const filter = {
                  rating: { $gte: step.atLeast },
                  ...(step.product === null ? {} : { "product.id": products[step.product]!.id })
                }
                yield* writes.bulkUpdate({ filter: JSON.stringify(filter) }, { published: step.published }).pipe(as)
                break
              }
              case "redact": {
                const id = pick(step.pick)
                if (id === undefined) break
                const review = Option.getOrThrow(yield* Reviews.ReviewRepository.use((r) => r.get(org, id, [])))
                if (review.title === "Nice mug") yield* writes.update(id, { title: "[redacted] mug" }).pipe(as)
                break
              }
              case "delete": {
                const id = pick(step.pick)
                if (id === undefined) break
                yield* writes.delete(id, { reason: "spam" }).pipe(as)
                ids.splice(ids.indexOf(id), 1)
                break
              }
              case "submit": {
                const submitted = yield* Storefront.StorefrontReviews.use((s) =>
                  s.submitReview({
                    productId: products[step.product]!.id,
                    rating: step.rating,
                    title: "Nice mug",
                    authorName: "Shopper",
                    email: `shopper${ids.length}@example.com`
                  }, { userAgent: undefined, signed: {} })
                ).pipe(storefront)
                ids.push(submitted.id)
                break
              }
            }
          }
          const reviews = yield* allReviews(org)
          for (const p of products) {
            const mine = reviews.filter((r) => r.productId === p.id)
            const published = mine.filter((r) => r.published)
            const stored = Option.getOrThrow(yield* fx.product(org, p.id as Kernel.ProductId))
            const label = JSON.stringify(sequence)
            assert.strictEqual(stored.reviewCount, mine.length, label)
            assert.strictEqual(stored.publishedReviewCount, published.length, label)
            assert.deepStrictEqual(stored.ratingHistogram, Catalog.histogramOf(mine), label)
            if (published.length === 0) assert.isNull(stored.averageRating, label)
            else {assert.closeTo(
                stored.averageRating!,
                published.reduce((s, r) => s + r.rating, 0) / published.length,
                1e-9,
                label
              )}
          }
        }
      }))
  })
