/**
 * Conformance of the review write side: every transition of the spec's table for reviews and replies, bulk
 * moderation, import, and rollback under injected failures, on every store. Seeding goes through `StoreTestKit`
 * (the `TestSupport` every store implements).
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { CoreLayer, Kernel, Organizations, Reviews, Webhooks } from "@feedback/core"
import { UUID_V7_PATTERN } from "../IdPatterns.ts"
import { freshId, makeCustomer, makeProduct, makeReview, makeSite, StoreTestKit } from "../StoreTestKit.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"

const { fromMillis, now } = Kernel.Timestamp

const ALL: ReadonlyArray<Kernel.Permission> = ["reviews:read", "reviews:write"]

const callerFor = (organizationId: Kernel.OrganizationId, permissions: ReadonlyArray<Kernel.Permission> = ALL) =>
  new Kernel.SecretKeyCaller({
    organizationId,
    keyId: freshId<Kernel.SecretKeyId>(),
    permissions: new Set(permissions)
  })

const as = (caller: Kernel.SecretKeyCaller) => Effect.provideService(Kernel.CurrentCaller, caller)

const events = (organizationId: Kernel.OrganizationId) =>
  Kernel.EventOutbox.use((o) => o.listForOrganization(organizationId))

/**
 * Events of one write, as the outbox lists them: distinct UUIDv7 ids, ascending in that order (a store that makes
 * them in SQL must keep the order ids made one by one have).
 */
const assertEventIdsAscending = (evs: ReadonlyArray<{ readonly id: string }>) => {
  for (const e of evs) assert.match(e.id, UUID_V7_PATTERN)
  for (let i = 1; i < evs.length; i++) {
    assert.isTrue(evs[i - 1]!.id < evs[i]!.id, `event ${i}'s id sorts after event ${i - 1}'s`)
  }
}

/** The review as the read side answers it without includes: the shape events must carry. */
const findReview = (organizationId: Kernel.OrganizationId, id: Kernel.ReviewId) =>
  Reviews.ReviewRepository.use((r) => r.get(organizationId, id, []))

const getReview = (organizationId: Kernel.OrganizationId, id: Kernel.ReviewId) =>
  Effect.map(findReview(organizationId, id), Option.getOrThrow)

const productStats = (organizationId: Kernel.OrganizationId, id: Kernel.ProductId) =>
  StoreTestKit.use((f) => f.product(organizationId, id)).pipe(
    Effect.map(Option.getOrThrow),
    Effect.map((p) => ({
      reviewCount: p.reviewCount,
      publishedReviewCount: p.publishedReviewCount,
      averageRating: p.averageRating
    }))
  )

/** Moves the test clock forward and answers the new time (the clock is shared by the suite's tests). */
const tick = (seconds: number): Effect.Effect<Kernel.Timestamp.Timestamp> =>
  TestClock.adjust(Duration.seconds(seconds)).pipe(Effect.andThen(now))

/** An organization with one product and the given reviews of it. */
const seed = (reviews: ReadonlyArray<Partial<Reviews.ReviewRecord>> = [{}], name = "Acme Store") =>
  Effect.gen(function*() {
    const organization = yield* Organizations.Organizations.use((o) => o.createOrganization({ name }))
    const fx = yield* StoreTestKit
    const product = makeProduct()
    yield* fx.insertProduct(organization.id, product)
    const stored = reviews.map((overrides) => makeReview(product.id, overrides))
    yield* fx.insertReviews(stored.map((review) => ({ organizationId: organization.id, review })))
    return { org: organization.id, product, reviews: stored, caller: callerFor(organization.id) }
  })

/**
 * Runs `use` with a `ReviewWrites` built afresh over a copy of the repository whose `method` runs and then fails
 * with a defect (after its writes).
 */
const failingAfter =
  <K extends "insertImport" | "bulkSetPublished" | "recalculateProductStats" | "addProductStats">(method: K) =>
  <A, E>(use: (writes: Reviews.ReviewWrites["Service"]) => Effect.Effect<A, E, Kernel.CurrentCaller>) =>
    Effect.gen(function*() {
      const repo = yield* Reviews.ReviewWriteRepository
      const broken = {
        ...repo,
        [method]: (...args: Array<unknown>) =>
          (repo[method] as (...a: Array<unknown>) => Effect.Effect<unknown>)(...args).pipe(
            Effect.andThen(Effect.die(new Error(`injected failure after ${method}`)))
          )
      }
      return yield* Reviews.ReviewWrites.use(use).pipe(
        Effect.provide(Layer.fresh(Reviews.ReviewWrites.layer)),
        Effect.provideService(Reviews.ReviewWriteRepository, Reviews.ReviewWriteRepository.of(broken))
      )
    })

export const reviewWriteConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("review write side", (it) => {
    // -------------------------------------------------------------------------------------------------------------
    // PATCH /reviews/{id}: moderation

    it.effect("publishing an unpublished review sets moderatedAt, recalculates stats and fires review.updated", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, product, reviews: [review], caller } = yield* seed([{ published: false, rating: 4 }])
        const t10 = yield* tick(10)
        const updated = yield* writes.update(review!.id, { published: true }).pipe(as(caller))
        assert.isTrue(updated.published)
        assert.strictEqual(updated.moderatedAt, t10)
        assert.strictEqual(updated.updatedAt, t10)
        assert.deepStrictEqual(yield* getReview(org, review!.id), updated)
        assert.deepStrictEqual(yield* productStats(org, product.id), {
          reviewCount: 1,
          publishedReviewCount: 1,
          averageRating: 4
        })
        const evs = yield* events(org)
        assert.deepStrictEqual(evs.map((e) => e.event), ["review.updated"])
        assert.deepStrictEqual(evs[0]!.data, updated)
      }))

    it.effect("unpublishing a published review takes it off, sets moderatedAt and fires review.updated", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, product, reviews: [a], caller } = yield* seed([{ published: true, rating: 2 }, {
          published: true,
          rating: 4
        }])
        yield* Reviews.ReviewWriteRepository.use((r) => r.recalculateProductStats(org, [product.id]))
        assert.deepStrictEqual(yield* productStats(org, product.id), {
          reviewCount: 2,
          publishedReviewCount: 2,
          averageRating: 3
        })
        const t5 = yield* tick(5)
        const updated = yield* writes.update(a!.id, { published: false }).pipe(as(caller))
        assert.isFalse(updated.published)
        assert.strictEqual(updated.moderatedAt, t5)
        assert.deepStrictEqual(yield* productStats(org, product.id), {
          reviewCount: 2,
          publishedReviewCount: 1,
          averageRating: 4
        })
        const evs = yield* events(org)
        assert.deepStrictEqual(evs.map((e) => e.event), ["review.updated"])
        assert.isFalse((evs[0]!.data as Reviews.ReviewRecord).published)
      }))

    it.effect("sending the current published value stamps moderatedAt but announces nothing", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [pending], caller } = yield* seed([{ published: false, moderatedAt: null }])
        const t3 = yield* tick(3)
        const rejected = yield* writes.update(pending!.id, { published: false }).pipe(as(caller))
        assert.isFalse(rejected.published)
        assert.strictEqual(rejected.moderatedAt, t3)
        assert.deepStrictEqual(yield* getReview(org, pending!.id), rejected)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    it.effect("an empty or unchanged PATCH writes nothing and fires nothing", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed([{ metadata: { a: "1", b: "2" } }])
        yield* tick(7)
        const same = yield* writes.update(review!.id, {}).pipe(as(caller))
        assert.deepStrictEqual(same, review)
        const unchanged = yield* writes.update(review!.id, {
          title: review!.title,
          body: review!.body,
          metadata: { b: "2", a: "1" }
        }).pipe(as(caller))
        assert.deepStrictEqual(unchanged, review)
        assert.deepStrictEqual(yield* getReview(org, review!.id), review)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    it.effect("metadata is replaced wholesale and fires review.updated", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed([{ metadata: { a: "1", b: "2" } }])
        const updated = yield* writes.update(review!.id, { metadata: { c: "3" } }).pipe(as(caller))
        assert.deepStrictEqual(updated.metadata, { c: "3" })
        assert.strictEqual(updated.moderatedAt, null)
        assert.deepStrictEqual((yield* getReview(org, review!.id)).metadata, { c: "3" })
        assert.deepStrictEqual((yield* events(org)).map((e) => e.event), ["review.updated"])
      }))

    it.effect("metadata keys come back exactly as sent (snake_case, spaces, capitals), in the record and its event", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed([{}])
        const metadata = { order_id: "A-1", "Gift Note": "for mum", UPPER_CASE: "x", camelCase: "y" }
        const updated = yield* writes.update(review!.id, { metadata }).pipe(as(caller))
        assert.deepStrictEqual(updated.metadata, metadata)
        assert.deepStrictEqual((yield* getReview(org, review!.id)).metadata, metadata)
        const [event] = yield* events(org)
        assert.deepStrictEqual((event!.data as { readonly metadata: unknown }).metadata, metadata)
      }))

    // -------------------------------------------------------------------------------------------------------------
    // PATCH /reviews/{id}: redaction

    it.effect("the first redaction stores both originals and redactedAt; a later one keeps the originals", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed([{
          title: "Call me",
          body: "My number is 555-0100, call me"
        }])
        const t1 = yield* tick(1)
        const first = yield* writes.update(review!.id, {
          body: `My number is ${Reviews.REDACTION_MARKER}, call me`
        }).pipe(as(caller))
        assert.strictEqual(first.body, `My number is ${Reviews.REDACTION_MARKER}, call me`)
        assert.strictEqual(first.title, "Call me")
        assert.strictEqual(first.originalTitle, "Call me")
        assert.strictEqual(first.originalBody, "My number is 555-0100, call me")
        assert.strictEqual(first.redactedAt, t1)
        const t2 = yield* tick(1)
        const second = yield* writes.update(review!.id, {
          title: `Call ${Reviews.REDACTION_MARKER}`,
          body: `${Reviews.REDACTION_MARKER}, call me`
        }).pipe(as(caller))
        assert.strictEqual(second.title, `Call ${Reviews.REDACTION_MARKER}`)
        assert.strictEqual(second.body, `${Reviews.REDACTION_MARKER}, call me`)
        assert.strictEqual(second.originalTitle, "Call me")
        assert.strictEqual(second.originalBody, "My number is 555-0100, call me")
        assert.strictEqual(second.redactedAt, t2)
        assert.deepStrictEqual(yield* getReview(org, review!.id), second)
        const evs = yield* events(org)
        assert.deepStrictEqual(evs.map((e) => e.event), ["review.updated", "review.updated"])
        assertEventIdsAscending(evs)
        assert.deepStrictEqual(evs[1]!.data, second)
      }))

    it.effect("an edit that is not a pure [redacted] replacement is InvalidRedaction and changes nothing", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed([{
          title: "Nice",
          body: "Bad service",
          published: false
        }])
        const cases = [
          { patch: { body: "Good service" }, field: "body" },
          { patch: { title: `Nice ${Reviews.REDACTION_MARKER}` }, field: "title" },
          { patch: { title: null }, field: "title" },
          { patch: { body: `${Reviews.REDACTION_MARKER} service`, title: "Nicer", published: true }, field: "title" }
        ] as const
        for (const { patch, field } of cases) {
          const error = yield* Effect.flip(writes.update(review!.id, patch).pipe(as(caller)))
          assert.strictEqual(error._tag, "InvalidRedaction")
          assert.strictEqual((error as { field: string }).field, field)
        }
        assert.deepStrictEqual(yield* getReview(org, review!.id), review)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    it.effect("a redaction that would grow a text past its limit is a 400 naming the field and changes nothing", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const body = "a ".repeat(4_000)
        const { org, reviews: [review], caller } = yield* seed([{ title: "Hi", body }])
        const error = yield* Effect.flip(
          writes.update(review!.id, { body: body.replaceAll("a", Reviews.REDACTION_MARKER) }).pipe(as(caller))
        )
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.deepStrictEqual((error as { issues: ReadonlyArray<{ path: string }> }).issues.map((i) => i.path), [
          "body.body"
        ])
        assert.deepStrictEqual(yield* getReview(org, review!.id), review)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    it.effect("null is accepted only for a null title or body", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed([{ title: null, body: "Text" }])
        const same = yield* writes.update(review!.id, { title: null }).pipe(as(caller))
        assert.deepStrictEqual(same, review)
        const error = yield* Effect.flip(
          writes.update(review!.id, { title: Reviews.REDACTION_MARKER }).pipe(as(caller))
        )
        assert.strictEqual(error._tag, "InvalidRedaction")
        assert.deepStrictEqual(yield* events(org), [])
      }))

    // That the check is linear is core/test/Redaction.test.ts's ratio, not a time measured here.
    it.effect("a 1 MB body stored before the limits is redacted, not grown (§53)", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const body = "a".repeat(500_000) + "secret-phone" + "b".repeat(500_000)
        const { org, reviews: [review], caller } = yield* seed([{ body }])
        const proposed = "a".repeat(500_000) + Reviews.REDACTION_MARKER + "b".repeat(500_000)
        assert.isTrue(Result.isSuccess(Reviews.checkRedaction(body, proposed)))
        // A marker over a shorter span would make the text longer than it is: refused, nothing changes.
        const grown = "a".repeat(500_000) + Reviews.REDACTION_MARKER + "-phone" + "b".repeat(500_000)
        const refused = yield* Effect.flip(writes.update(review!.id, { body: grown }).pipe(as(caller)))
        assert.strictEqual(refused._tag, "InvalidRequest")
        const updated = yield* writes.update(review!.id, { body: proposed }).pipe(as(caller))
        assert.strictEqual(updated.body, proposed)
        assert.strictEqual((yield* getReview(org, review!.id)).originalBody, body)
      }))

    it.effect("another organization's review is NotFound, and a key without reviews:write is Forbidden", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review] } = yield* seed()
        const other = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other" }))
        const asOther = as(callerFor(other.id))
        const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }, Kernel.CurrentCaller>> = [
          writes.update(review!.id, { published: true }),
          writes.delete(review!.id, { reason: "spam" }),
          writes.createReply(review!.id, { body: "Thanks" }),
          writes.updateReply(review!.id, { body: "Thanks" }),
          writes.deleteReply(review!.id)
        ]
        for (const attempt of attempts) {
          const error = yield* Effect.flip(attempt.pipe(asOther))
          assert.strictEqual(error._tag, "NotFound")
        }
        const missing = yield* Effect.flip(
          writes.update(freshId<Kernel.ReviewId>(), {}).pipe(as(callerFor(org)))
        )
        assert.strictEqual(missing._tag, "NotFound")
        const forbidden = yield* Effect.flip(
          writes.update(review!.id, { published: true }).pipe(as(callerFor(org, ["reviews:read"])))
        )
        assert.strictEqual(forbidden._tag, "Forbidden")
        assert.deepStrictEqual(yield* getReview(org, review!.id), review)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    // -------------------------------------------------------------------------------------------------------------
    // DELETE /reviews/{id}

    it.effect("deleting keeps a content-free record, removes files, answers and reply, recalculates stats, fires review.deleted", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const organization = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Deleting" }))
        const org = organization.id
        const fx = yield* StoreTestKit
        const product = makeProduct()
        yield* fx.insertProduct(org, product)
        const kept = makeReview(product.id, { published: true, rating: 2 })
        const doomed = makeReview(product.id, { published: true, rating: 4 })
        yield* fx.insertReviews([{ organizationId: org, review: kept }, {
          organizationId: org,
          review: doomed,
          files: [{
            id: freshId(),
            fileName: "a.jpg",
            contentType: "image/jpeg",
            sizeBytes: 10,
            url: "https://cdn.example/a.jpg"
          }],
          answers: [{
            questionId: freshId(),
            label: "Fit?",
            type: "scale",
            step: 1,
            steps: 3,
            lowLabel: "small",
            highLabel: "large",
            middleLabel: null,
            optionLabels: []
          }],
          reply: {
            id: freshId(),
            reviewId: doomed.id,
            body: "Thanks",
            responderName: "Shop",
            published: true,
            metadata: {},
            createdAt: doomed.createdAt,
            updatedAt: doomed.updatedAt
          }
        }])
        yield* Reviews.ReviewWriteRepository.use((r) => r.recalculateProductStats(org, [product.id]))
        const caller = callerFor(org)
        const t9 = yield* tick(9)
        const deleted = yield* writes.delete(doomed.id, { reason: "spam" }).pipe(as(caller))
        assert.deepStrictEqual(deleted, doomed)
        assert.isTrue(Option.isNone(yield* findReview(org, doomed.id)))
        const record = Option.getOrThrow(yield* fx.deletion(org, doomed.id))
        assert.deepStrictEqual(record, {
          reviewId: doomed.id,
          reason: "spam",
          note: null,
          actorKeyId: `key:${caller.keyId}`,
          deletedAt: t9
        })
        assert.deepStrictEqual(yield* fx.files(org, doomed.id), [])
        assert.deepStrictEqual(yield* fx.answers(org, doomed.id), [])
        assert.isTrue(Option.isNone(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(org, doomed.id))))
        assert.deepStrictEqual(yield* productStats(org, product.id), {
          reviewCount: 1,
          publishedReviewCount: 1,
          averageRating: 2
        })
        const evs = yield* events(org)
        assert.deepStrictEqual(evs.map((e) => e.event), ["review.deleted"])
        assert.deepStrictEqual(evs[0]!.data, doomed)
        const again = yield* Effect.flip(writes.delete(doomed.id, { reason: "spam" }).pipe(as(caller)))
        assert.strictEqual(again._tag, "NotFound")
        assert.deepStrictEqual(yield* getReview(org, kept.id), kept)
      }))

    it.effect("a customer_request deletion takes the review's words out of its events, their delivery logs and its own event", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review, bystander], caller } = yield* seed([{
          title: "My name is Ada",
          body: "Ada Lovelace, 12 Main St"
        }, { title: "Other", body: "Keep me" }])
        // A webhook that got the review's events, so their bodies sit in its delivery log.
        const hook: Webhooks.WebhookRecord = {
          id: freshId() as Webhooks.WebhookRecord["id"],
          organizationId: org,
          url: "https://hooks.example.com/r",
          hmacSecret: null,
          previousHmacSecret: null,
          previousSecretExpiresAt: null,
          events: ["review.updated", "review.deleted"],
          createdAt: fromMillis(0),
          updatedAt: fromMillis(0)
        }
        yield* Webhooks.WebhookRepository.use((r) => r.insert(hook))
        yield* writes.update(review!.id, { title: "My name is [redacted]" }).pipe(as(caller))
        yield* writes.update(bystander!.id, { published: !bystander!.published }).pipe(as(caller))
        while ((yield* Webhooks.fanOutOnce(1000)).events > 0) { /* fan everything out */ }
        const logOf = () =>
          Webhooks.WebhookRepository.use((r) => r.listDeliveries(org, hook.id, { after: undefined, limit: 100 }))
        const before = yield* logOf()
        assert.isTrue(before.some((d) => d.body.includes("Ada Lovelace")))

        yield* writes.delete(review!.id, { reason: "customer_request" }).pipe(as(caller))
        while ((yield* Webhooks.fanOutOnce(1000)).events > 0) { /* fan the deletion out */ }
        const stored = JSON.stringify(yield* events(org))
        for (const words of ["My name is", "Ada Lovelace", "12 Main St"]) assert.notInclude(stored, words)
        const log = yield* logOf()
        for (const d of log) for (const words of ["My name is", "Ada Lovelace"]) assert.notInclude(d.body, words)
        const aboutReview = (yield* events(org)).filter((e) => (e.data as { id?: string }).id === review!.id)
        assert.deepStrictEqual(aboutReview.map((e) => e.event), ["review.updated", "review.deleted"])
        for (const e of aboutReview) {
          assert.deepInclude(e.data, {
            id: review!.id,
            title: null,
            body: null,
            originalTitle: null,
            originalBody: null,
            rating: review!.rating
          })
        }
        // Bodies keep their bytes but for the removed words; other records' events are untouched.
        const redactedBody = log.find((d) =>
          d.eventId === before.find((b) => b.body.includes("Ada Lovelace"))!.eventId
        )!.body
        assert.deepStrictEqual(Object.keys(JSON.parse(redactedBody)), [
          "event",
          "timestamp",
          "idempotencyKey",
          "eventId",
          "data"
        ])
        assert.include(stored, "Keep me")
        // The deletion record holds no content, as for every reason.
        const record = Option.getOrThrow(yield* StoreTestKit.use((f) => f.deletion(org, review!.id)))
        assert.notInclude(JSON.stringify(record), "Ada")
      }))

    it.effect("a deletion with reason other keeps its note", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed()
        yield* writes.delete(review!.id, { reason: "other", note: "Asked by support ticket 42" }).pipe(as(caller))
        const record = Option.getOrThrow(yield* StoreTestKit.use((f) => f.deletion(org, review!.id)))
        assert.strictEqual(record.reason, "other")
        assert.strictEqual(record.note, "Asked by support ticket 42")
      }))

    // -------------------------------------------------------------------------------------------------------------
    // PATCH /reviews/bulk-update

    /** Two products, customers and six reviews in one organization, plus a review in another organization. */
    const bulkSeed = Effect.gen(function*() {
      const organization = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Bulk" }))
      const org = organization.id
      const fx = yield* StoreTestKit
      const mug = makeProduct({ slug: "mug", title: "Blue Mug" })
      const cup = makeProduct({ slug: "cup", title: "Tea Cup", metadata: { color: "red" } })
      yield* fx.insertProduct(org, mug)
      yield* fx.insertProduct(org, cup)
      const ada = makeCustomer({ email: "ada@example.com", firstName: "Ada" })
      yield* fx.insertCustomer(org, ada)
      const rows = [
        makeReview(mug.id, { rating: 5, published: false, customerId: ada.id, title: "Love it" }),
        makeReview(mug.id, { rating: 4, published: true, title: "Fine" }),
        makeReview(mug.id, { rating: 1, published: false, title: "Broken", metadata: { source: "email" } }),
        makeReview(cup.id, { rating: 3, published: false, title: "Okay" }),
        makeReview(cup.id, { rating: 2, published: true, title: "Meh", customerId: ada.id }),
        makeReview(cup.id, { rating: 5, published: true, title: "Superb" })
      ]
      yield* fx.insertReviews(rows.map((review) => ({ organizationId: org, review })))
      yield* Reviews.ReviewWriteRepository.use((r) => r.recalculateProductStats(org, [mug.id, cup.id]))
      const other = yield* seed([{ published: false, title: "Love it" }], "Other")
      return { org, mug, cup, rows, other, caller: callerFor(org) }
    })

    it.effect("bulk-update publishes the matches, stamps each moderated, fires only for changes, recalculates stats", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, mug, cup, rows, other, caller } = yield* bulkSeed
        const t20 = yield* tick(20)
        const result = yield* writes.bulkUpdate(
          { filter: JSON.stringify({ rating: { $gte: 3 } }) },
          { published: true }
        ).pipe(as(caller))
        // rating >= 3: rows 0 (unpublished), 1 (published), 3 (unpublished), 5 (published)
        assert.deepStrictEqual(result, { count: 4 })
        for (const i of [0, 1, 3, 5]) {
          const r = yield* getReview(org, rows[i]!.id)
          assert.isTrue(r.published)
          assert.strictEqual(r.moderatedAt, t20)
        }
        for (const i of [2, 4]) assert.deepStrictEqual(yield* getReview(org, rows[i]!.id), rows[i])
        const evs = yield* events(org)
        assert.deepStrictEqual(evs.map((e) => e.event), ["review.updated", "review.updated"])
        assertEventIdsAscending(evs)
        const announced = evs.map((e) => (e.data as Reviews.ReviewRecord).id).sort()
        assert.deepStrictEqual(announced, [rows[0]!.id, rows[3]!.id].sort())
        for (const e of evs) {
          assert.deepStrictEqual(e.data, yield* getReview(org, (e.data as Reviews.ReviewRecord).id))
          assert.strictEqual(e.occurredAt, t20)
        }
        assert.deepStrictEqual(yield* productStats(org, mug.id), {
          reviewCount: 3,
          publishedReviewCount: 2,
          averageRating: 4.5
        })
        assert.deepStrictEqual(yield* productStats(org, cup.id), {
          reviewCount: 3,
          publishedReviewCount: 3,
          averageRating: 10 / 3
        })
        assert.deepStrictEqual(yield* getReview(other.org, other.reviews[0]!.id), other.reviews[0])
        assert.deepStrictEqual(yield* events(other.org), [])
      }))

    it.effect("being told of a bulk load (below and above any threshold) succeeds and changes nothing a reader sees", () =>
      Effect.gen(function*() {
        const { org, mug, rows, other } = yield* bulkSeed
        const before = yield* Effect.forEach(rows, (r) => getReview(org, r.id))
        const statsBefore = yield* productStats(org, mug.id)
        for (const n of [0, 1, 999, 1_000, 100_000]) {
          yield* Reviews.ReviewWriteRepository.use((repo) => repo.bulkLoaded(org, n))
        }
        yield* Reviews.ReviewWriteRepository.use((repo) => repo.bulkLoaded(other.org, 5_000))
        assert.deepStrictEqual(yield* Effect.forEach(rows, (r) => getReview(org, r.id)), before)
        assert.deepStrictEqual(yield* productStats(org, mug.id), statsBefore)
        assert.deepStrictEqual(yield* events(org), [])
        assert.deepStrictEqual(yield* getReview(other.org, other.reviews[0]!.id), other.reviews[0])
      }))

    it.effect("bulk-update honours search and related-record filters like the read side", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, rows, caller } = yield* bulkSeed
        const bySearch = yield* writes.bulkUpdate({ search: "ADA@example" }, { published: false }).pipe(as(caller))
        assert.deepStrictEqual(bySearch, { count: 2 }) // rows 0 and 4 (customer email)
        assert.isFalse((yield* getReview(org, rows[4]!.id)).published)
        const byProduct = yield* writes.bulkUpdate(
          { filter: JSON.stringify({ "product.metadata.color": "red", published: false }), search: "ok" },
          { published: true }
        ).pipe(as(caller))
        assert.deepStrictEqual(byProduct, { count: 1 }) // row 3 "Okay" (row 4 "Meh" does not contain "ok")
        assert.isTrue((yield* getReview(org, rows[3]!.id)).published)
        const byMetadata = yield* writes.bulkUpdate(
          {
            filter: JSON.stringify({
              $or: [{ "metadata.source": "email" }, { "customer.firstName": "Ada", "product.slug": "mug" }]
            })
          },
          { published: true }
        ).pipe(as(caller))
        assert.deepStrictEqual(byMetadata, { count: 2 }) // rows 2 and 0
        const all = yield* writes.bulkUpdate({}, { published: true }).pipe(as(caller))
        assert.deepStrictEqual(all, { count: 6 })
        const none = yield* writes.bulkUpdate({ search: "no such words" }, { published: false }).pipe(as(caller))
        assert.deepStrictEqual(none, { count: 0 })
      }))

    it.effect("bulk-update with a bad filter or search is InvalidRequest and changes nothing", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, rows, caller } = yield* bulkSeed
        for (
          const query of [{ filter: "{" }, { filter: JSON.stringify({ rating: { $gte: "high" } }) }, {
            filter: JSON.stringify({ title: "x" })
          }, { search: "x".repeat(201) }]
        ) {
          const error = yield* Effect.flip(writes.bulkUpdate(query, { published: true }).pipe(as(caller)))
          assert.strictEqual(error._tag, "InvalidRequest")
        }
        for (const r of rows) assert.deepStrictEqual(yield* getReview(org, r.id), r)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    for (const method of ["bulkSetPublished", "recalculateProductStats"] as const) {
      it.effect(`a failure after ${method} leaves no partial bulk change and no event`, () =>
        Effect.gen(function*() {
          const { org, mug, rows, caller } = yield* bulkSeed
          const statsBefore = yield* productStats(org, mug.id)
          const exit = yield* Effect.exit(
            failingAfter(method)((w) => w.bulkUpdate({}, { published: true })).pipe(as(caller))
          )
          assert.isTrue(Exit.isFailure(exit))
          for (const r of rows) assert.deepStrictEqual(yield* getReview(org, r.id), r)
          assert.deepStrictEqual(yield* productStats(org, mug.id), statsBefore)
          assert.deepStrictEqual(yield* events(org), [])
        }))
    }

    it.effect("concurrent moderation of one product's reviews leaves its stats exact and never deadlocks", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const ratings = Array.from({ length: 40 }, (_, i) => 1 + (i % 5))
        const { org, product, reviews, caller } = yield* seed(
          ratings.map((rating, i) => ({ rating, published: i % 3 === 0 }))
        )
        const half = reviews.slice(0, 12).map((r) => r.id)
        const changes: ReadonlyArray<Effect.Effect<unknown, unknown, Kernel.CurrentCaller>> = [
          ...reviews.map((r, i) => writes.update(r.id, { published: i % 2 === 0 })),
          writes.bulkUpdate({ filter: JSON.stringify({ id: { $in: half } }) }, { published: true }),
          writes.bulkUpdate({ filter: JSON.stringify({ rating: { $gte: 3 } }) }, { published: false }),
          writes.bulkUpdate({}, { published: true }),
          ...reviews.slice(12).map((r) => writes.update(r.id, { published: false })),
          ...reviews.map((r, i) => writes.update(r.id, { published: i % 3 !== 0 }))
        ]
        yield* Effect.forEach(changes, (w) => w.pipe(as(caller)), { concurrency: "unbounded", discard: true })
        const after = yield* Effect.forEach(reviews, (r) => getReview(org, r.id))
        const published = after.filter((r) => r.published)
        assert.deepStrictEqual(yield* productStats(org, product.id), {
          reviewCount: reviews.length,
          publishedReviewCount: published.length,
          averageRating: published.length === 0 ? null : published.reduce((s, r) => s + r.rating, 0) / published.length
        })
        // Every announced change is a real one: per review, the events alternate the published value.
        const evs = (yield* events(org)).map((e) => e.data as Reviews.ReviewRecord)
        for (const r of reviews) {
          const states = [r.published, ...evs.filter((e) => e.id === r.id).map((e) => e.published)]
          for (let i = 1; i < states.length; i++) assert.notStrictEqual(states[i], states[i - 1])
          assert.strictEqual(states[states.length - 1], after.find((a) => a.id === r.id)!.published)
        }
      }))

    it.effect("imports beside moderation of the same products leave their stats exact and never deadlock", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, product, reviews, caller } = yield* seed(
          Array.from({ length: 20 }, (_, i) => ({ rating: 1 + (i % 5), published: i % 2 === 0 }))
        )
        const other = makeProduct()
        yield* StoreTestKit.use((f) => f.insertProduct(org, other))
        // Imports add to the stats (addProductStats) while single and bulk moderation recompute them.
        const importing = (n: number) =>
          writes.import({
            data: Array.from({ length: 12 }, (_, i) => ({
              product: i % 3 === 0 ? other.slug : product.slug,
              rating: 1 + ((n + i) % 9) / 2,
              ...(i % 4 === 0 ? { published: false } : {})
            }))
          }).pipe(Effect.map((result) => result.imported.map((r) => r.id)))
        const changes: ReadonlyArray<Effect.Effect<unknown, unknown, Kernel.CurrentCaller>> = [
          importing(0),
          ...reviews.slice(0, 10).map((r, i) => writes.update(r.id, { published: i % 3 === 0 })),
          importing(1),
          writes.bulkUpdate({ filter: JSON.stringify({ rating: { $gte: 3 } }) }, { published: true }),
          importing(2),
          ...reviews.slice(10).map((r) => writes.update(r.id, { published: false })),
          writes.bulkUpdate({ filter: JSON.stringify({ rating: { $lt: 2 } }) }, { published: false }),
          importing(3)
        ]
        const done = yield* Effect.forEach(changes, (w) => w.pipe(as(caller)), { concurrency: "unbounded" })
        const imported = done.filter((d): d is ReadonlyArray<Kernel.ReviewId> => Array.isArray(d)).flat()
        assert.strictEqual(imported.length, 48)
        const all = yield* Effect.forEach([...reviews.map((r) => r.id), ...imported], (id) => getReview(org, id))
        for (const p of [product, other]) {
          const mine = all.filter((r) => r.productId === p.id)
          const published = mine.filter((r) => r.published)
          assert.deepStrictEqual(yield* productStats(org, p.id), {
            reviewCount: mine.length,
            publishedReviewCount: published.length,
            averageRating: published.length === 0
              ? null
              : published.reduce((sum, r) => sum + r.rating, 0) / published.length
          })
        }
      }))

    // -------------------------------------------------------------------------------------------------------------
    // POST /reviews/import

    const importSeed = Effect.gen(function*() {
      const organization = yield* Organizations.Organizations.use((o) =>
        o.createOrganization({ name: "Importing Shop" })
      )
      const org = organization.id
      const fx = yield* StoreTestKit
      const site = makeSite()
      yield* fx.insertSite(org, site)
      const mug = makeProduct({ slug: "mug", externalId: "ext-mug", url: "https://shop.example/mug" })
      const cup = makeProduct({ slug: "cup", url: "https://shop.example/shared" })
      const bowl = makeProduct({ slug: "bowl", url: "https://shop.example/shared" })
      for (const p of [mug, cup, bowl]) yield* fx.insertProduct(org, p)
      const existing = makeCustomer({ email: "known@example.com" })
      yield* fx.insertCustomer(org, existing)
      const foreign = yield* seed([], "Foreign")
      const foreignSite = makeSite()
      yield* fx.insertSite(foreign.org, foreignSite)
      return { org, site, mug, cup, bowl, existing, foreign, foreignSite, caller: callerFor(org) }
    })

    it.effect("imports add their reviews to the stats their products had, as a recomputation makes them", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, product, caller } = yield* seed([
          { published: true, rating: 2.5 },
          { published: false, rating: 1 },
          { published: true, rating: 5 }
        ])
        const quiet = makeProduct()
        yield* StoreTestKit.use((f) => f.insertProduct(org, quiet))
        const recomputed = (id: Kernel.ProductId) =>
          Reviews.ReviewWriteRepository.use((r) => r.recalculateProductStats(org, [id])).pipe(
            Effect.andThen(productStats(org, id))
          )
        const batches: ReadonlyArray<ReadonlyArray<Reviews.ReviewImportRow>> = [
          // Whole and fractional sums in one batch: a store must take both.
          [{ product: product.slug, rating: 4 }, { product: product.slug, rating: 1.5, pending: true }, {
            product: quiet.slug,
            rating: 3.5
          }],
          [{ product: product.slug, rating: 3.25, published: false }, { product: product.slug, rating: 1 }, {
            product: product.slug,
            rating: 4.75
          }]
        ]
        const expected = [
          [{ reviewCount: 5, publishedReviewCount: 3, averageRating: 11.5 / 3 }, {
            reviewCount: 1,
            publishedReviewCount: 1,
            averageRating: 3.5
          }],
          [{ reviewCount: 8, publishedReviewCount: 5, averageRating: 17.25 / 5 }, {
            reviewCount: 1,
            publishedReviewCount: 1,
            averageRating: 3.5
          }]
        ]
        for (const [i, data] of batches.entries()) {
          const result = yield* writes.import({ data, strict: true }).pipe(as(caller))
          assert.strictEqual(result.imported.length, data.length)
          const added = [yield* productStats(org, product.id), yield* productStats(org, quiet.id)]
          assert.deepStrictEqual(added, expected[i])
          assert.deepStrictEqual([yield* recomputed(product.id), yield* recomputed(quiet.id)], added)
        }
      }))

    it.effect("an import with good and bad rows imports the good ones and lists the rest", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const s = yield* importSeed
        const t100 = yield* tick(100)
        const rows: Array<Reviews.ReviewImportRow> = [
          // 0: by slug, new customer (mixed case), site, variant, images, reply, answers, metadata
          {
            externalId: "r-0",
            product: "mug",
            customer: "New.Person@Example.COM",
            site: s.site.id,
            productVariant: "0190f000-0000-7000-8000-000000000001" as never,
            title: "Great",
            body: "Really great",
            rating: 5,
            verifiedBuyer: true,
            createdAt: "2025-05-01T10:00:00+02:00",
            imageUrls: ["https://cdn.example/photos/a%20b.JPG", "https://cdn.example/v.mp4"],
            response: "Thank you!",
            responseCreatedAt: "2025-05-02T00:00:00Z",
            answers: [{
              questionId: "0190f000-0000-7000-8000-0000000000aa" as never,
              label: "Fit",
              type: "scale",
              step: 1,
              steps: 5
            }],
            metadata: { channel: "email" }
          },
          // 1: unknown slug → skipped
          { product: "nope", rating: 4 },
          // 2: by externalId, existing customer (other case), pending
          { productExternalId: "ext-mug", customer: "KNOWN@example.com", rating: 3, pending: true, title: null },
          // 3: ambiguous URL → skipped
          { productUrl: "https://shop.example/shared", rating: 2 },
          // 4: by url, published false, same new customer again
          {
            productUrl: "https://shop.example/mug",
            customer: "new.person@example.com",
            rating: 1,
            published: false,
            responderName: "Team",
            response: "Sorry"
          },
          // 5: another organization's site → skipped
          { product: "cup", site: s.foreignSite.id, rating: 5 },
          // 6: repeats externalId of row 0 → skipped
          { product: "cup", externalId: "r-0", rating: 4 },
          // 7: slug does not resolve, url does
          { product: "missing", productUrl: "https://shop.example/mug", rating: 4 }
        ]
        const result = yield* writes.import({ data: rows }).pipe(as(s.caller))
        assert.deepStrictEqual(result.imported.map((i) => i.index), [0, 2, 4, 7])
        assert.deepStrictEqual(result.skipped.map((i) => i.index), [1, 3, 5, 6])
        assert.include(result.skipped[0]!.message, "\"nope\"")
        assert.include(result.skipped[1]!.message, "several products")
        assert.include(result.skipped[2]!.message, s.foreignSite.id)
        assert.include(result.skipped[3]!.message, "repeats row 0")
        assert.deepStrictEqual(result.imported[0]!.imageUrls, [
          "https://cdn.example/photos/a%20b.JPG",
          "https://cdn.example/v.mp4"
        ])
        assert.deepStrictEqual(result.imported[1]!.imageUrls, [])

        const customers = yield* StoreTestKit.use((f) => f.customers(s.org))
        assert.deepStrictEqual(customers.map((c) => c.email), ["known@example.com", "new.person@example.com"])
        const newcomer = customers.find((c) => c.email === "new.person@example.com")!

        const [r0, r2, r4, r7] = yield* Effect.forEach(result.imported, (i) => getReview(s.org, i.id))
        assert.strictEqual(r0!.productId, s.mug.id)
        assert.strictEqual(r0!.siteId, s.site.id)
        assert.strictEqual(r0!.customerId, newcomer.id)
        assert.strictEqual(r0!.productVariantId, "0190f000-0000-7000-8000-000000000001")
        assert.strictEqual(r0!.externalId, "r-0")
        assert.strictEqual(r0!.createdAt, "2025-05-01T08:00:00.000Z")
        assert.strictEqual(r0!.updatedAt, t100)
        assert.isTrue(r0!.published)
        assert.strictEqual(r0!.moderatedAt, t100)
        assert.isTrue(r0!.verifiedBuyer)
        assert.deepStrictEqual(r0!.metadata, { channel: "email" })
        assert.strictEqual(r2!.customerId, s.existing.id)
        assert.isFalse(r2!.published)
        assert.strictEqual(r2!.moderatedAt, null)
        assert.strictEqual(r2!.title, null)
        assert.strictEqual(r2!.createdAt, t100)
        assert.isFalse(r4!.published)
        assert.strictEqual(r4!.moderatedAt, t100)
        assert.strictEqual(r4!.customerId, newcomer.id)
        assert.strictEqual(r7!.productId, s.mug.id)

        const fx = yield* StoreTestKit
        const files = yield* fx.files(s.org, r0!.id)
        assert.deepStrictEqual(files.map((f) => [f.fileName, f.contentType, f.url]), [
          ["a b.JPG", "image/jpeg", "https://cdn.example/photos/a%20b.JPG"],
          ["v.mp4", "video/mp4", "https://cdn.example/v.mp4"]
        ])
        assert.deepStrictEqual(yield* fx.answers(s.org, r0!.id), [{
          questionId: "0190f000-0000-7000-8000-0000000000aa" as never,
          label: "Fit",
          type: "scale",
          step: 1,
          steps: 5,
          lowLabel: null,
          highLabel: null,
          middleLabel: null,
          optionLabels: []
        }])
        const reply0 = Option.getOrThrow(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(s.org, r0!.id)))
        assert.deepStrictEqual(
          [reply0.body, reply0.responderName, reply0.published, reply0.createdAt],
          ["Thank you!", "Importing Shop", true, "2025-05-02T00:00:00.000Z"]
        )
        const reply4 = Option.getOrThrow(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(s.org, r4!.id)))
        assert.strictEqual(reply4.responderName, "Team")
        assert.isTrue(Option.isNone(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(s.org, r2!.id))))

        const job0 = Option.getOrThrow(yield* fx.importJob(s.org, r0!.id))
        const job4 = Option.getOrThrow(yield* fx.importJob(s.org, r4!.id))
        assert.strictEqual(job0.row, 0)
        assert.strictEqual(job4.row, 4)
        assert.strictEqual(job0.id, job4.id)
        assert.deepStrictEqual([job0.type, job0.action, job0.createdAt], [
          Reviews.REVIEW_IMPORT_JOB.type,
          Reviews.REVIEW_IMPORT_JOB.action,
          t100
        ])

        // The one customer the import created is announced once, before the reviews, like any customer creation.
        const evs = yield* events(s.org)
        assert.deepStrictEqual(evs.map((e) => e.event), [
          "customer.updated",
          "review.created",
          "review.created",
          "review.created",
          "review.created"
        ])
        assert.deepStrictEqual(evs.map((e) => e.data), [newcomer, r0, r2, r4, r7])
        assert.deepStrictEqual(yield* productStats(s.org, s.mug.id), {
          reviewCount: 4,
          publishedReviewCount: 2,
          averageRating: 4.5
        })
        assert.deepStrictEqual(yield* productStats(s.org, s.cup.id), {
          reviewCount: 0,
          publishedReviewCount: 0,
          averageRating: null
        })
      }))

    it.effect("an import larger than one write slice writes every row, its events in row order, and the stats", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const s = yield* importSeed
        // Past one slice, with skipped rows in every slice so row indexes and slice boundaries differ.
        const rows: Array<Reviews.ReviewImportRow> = Array.from({ length: Reviews.IMPORT_SLICE + 150 }, (_, i) => ({
          product: i % 100 === 7 ? "nope" : "mug",
          externalId: `big-${i}`,
          rating: 1 + (i % 5),
          ...(i % 3 === 0 ? { response: `Thanks ${i}` } : {})
        }))
        const result = yield* writes.import({ data: rows }).pipe(as(s.caller))
        const expected = rows.flatMap((r, i) => r.product === "nope" ? [] : [i])
        assert.deepStrictEqual(result.imported.map((r) => r.index), expected)
        assert.deepStrictEqual(
          result.skipped.map((r) => r.index),
          rows.flatMap((r, i) => r.product === "nope" ? [i] : [])
        )
        const evs = yield* events(s.org)
        assert.strictEqual(evs.filter((e) => e.event === "review.created").length, expected.length)
        assert.deepStrictEqual(evs.map((e) => (e.data as Reviews.ReviewRecord).id), result.imported.map((r) => r.id))
        assert.deepStrictEqual(
          evs.map((e) => (e.data as Reviews.ReviewRecord).externalId),
          expected.map((i) => `big-${i}`)
        )
        assertEventIdsAscending(evs)
        const fx = yield* StoreTestKit
        const last = result.imported[result.imported.length - 1]!
        assert.strictEqual(Option.getOrThrow(yield* fx.importJob(s.org, last.id)).row, last.index)
        const reply = Option.getOrThrow(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(s.org, last.id)))
        assert.strictEqual(reply.body, `Thanks ${last.index}`)
        const ratings = expected.map((i) => 1 + (i % 5))
        assert.deepStrictEqual(yield* productStats(s.org, s.mug.id), {
          reviewCount: expected.length,
          publishedReviewCount: expected.length,
          averageRating: ratings.reduce((a, b) => a + b, 0) / ratings.length
        })
      }))

    it.effect("a strict import fails on the first unresolvable row and imports nothing", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const s = yield* importSeed
        const rows: Array<Reviews.ReviewImportRow> = [
          {
            product: "mug",
            customer: "someone@example.com",
            rating: 5,
            imageUrls: ["https://cdn.example/x.png"],
            response: "Hi"
          },
          { product: "cup", site: s.foreignSite.id, rating: 4 },
          { product: "nope", rating: 4 }
        ]
        const error = yield* Effect.flip(writes.import({ data: rows, strict: true }).pipe(as(s.caller)))
        assert.strictEqual(error._tag, "ImportFailed")
        assert.strictEqual((error as { index: number }).index, 1)
        const fx = yield* StoreTestKit
        assert.deepStrictEqual(yield* fx.reviewIds(s.org), [])
        assert.deepStrictEqual((yield* fx.customers(s.org)).map((c) => c.email), ["known@example.com"])
        assert.deepStrictEqual(yield* events(s.org), [])
        const ok = yield* writes.import({ data: [rows[0]!], strict: true }).pipe(as(s.caller))
        assert.deepStrictEqual(ok.skipped, [])
        assert.strictEqual(ok.imported.length, 1)
      }))

    it.effect("a row whose externalId was imported before is skipped, or fails a strict import", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const s = yield* importSeed
        const first = yield* writes.import({ data: [{ product: "mug", externalId: "x-1", rating: 5 }] }).pipe(
          as(s.caller)
        )
        assert.strictEqual(first.imported.length, 1)
        const again = yield* writes.import({
          data: [{ product: "mug", externalId: "x-1", rating: 5 }, { product: "mug", externalId: "x-2", rating: 4 }]
        }).pipe(as(s.caller))
        assert.deepStrictEqual(again.imported.map((i) => i.index), [1])
        assert.deepStrictEqual(again.skipped, [{
          index: 0,
          message: "a review with externalId \"x-1\" was imported before"
        }])
        const strict = yield* Effect.flip(
          writes.import({
            data: [{ product: "mug", externalId: "x-3", rating: 5 }, { product: "mug", externalId: "x-2", rating: 4 }],
            strict: true
          }).pipe(as(s.caller))
        )
        assert.strictEqual(strict._tag, "ImportFailed")
        assert.strictEqual((strict as { index: number }).index, 1)
        assert.strictEqual((yield* StoreTestKit.use((f) => f.reviewIds(s.org))).length, 2)
        // The same externalId in another organization is unrelated.
        yield* StoreTestKit.use((f) => f.insertProduct(s.foreign.org, makeProduct({ slug: "mug" })))
        const elsewhere = yield* writes.import({ data: [{ product: "mug", externalId: "x-1", rating: 5 }] }).pipe(
          as(s.foreign.caller)
        )
        assert.strictEqual(elsewhere.imported.length, 1)
      }))

    it.effect("an import where nothing resolves writes nothing", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const s = yield* importSeed
        const result = yield* writes.import({ data: [{ product: "nope", rating: 1 }] }).pipe(as(s.caller))
        assert.deepStrictEqual(result.imported, [])
        assert.strictEqual(result.skipped.length, 1)
        const empty = yield* writes.import({ data: [] }).pipe(as(s.caller))
        assert.deepStrictEqual(empty, { imported: [], skipped: [] })
        assert.deepStrictEqual(yield* events(s.org), [])
      }))

    for (const method of ["insertImport", "addProductStats"] as const) {
      it.effect(`a failure after ${method} leaves no partial import and no event`, () =>
        Effect.gen(function*() {
          const writes = yield* Reviews.ReviewWrites
          const s = yield* importSeed
          const rows: Array<Reviews.ReviewImportRow> = Array.from({ length: 50 }, (_, i) => ({
            product: i % 2 === 0 ? "mug" : "cup",
            customer: `buyer${i}@example.com`,
            externalId: `e-${i}`,
            rating: 1 + (i % 5),
            imageUrls: ["https://cdn.example/p.png"],
            response: "Thanks",
            answers: [{
              questionId: "0190f000-0000-7000-8000-0000000000aa" as never,
              label: "Q",
              type: "text",
              step: 0,
              steps: 1
            }]
          }))
          const exit = yield* Effect.exit(failingAfter(method)((w) => w.import({ data: rows })).pipe(as(s.caller)))
          assert.isTrue(Exit.isFailure(exit))
          const fx = yield* StoreTestKit
          assert.deepStrictEqual(yield* fx.reviewIds(s.org), [])
          assert.deepStrictEqual((yield* fx.customers(s.org)).map((c) => c.email), ["known@example.com"])
          assert.deepStrictEqual(yield* productStats(s.org, s.mug.id), {
            reviewCount: 0,
            publishedReviewCount: 0,
            averageRating: null
          })
          assert.deepStrictEqual(yield* events(s.org), [])
          // The same rows import fine afterwards: nothing of the failed attempt lingers (externalIds, customers).
          const ok = yield* writes.import({ data: rows, strict: true }).pipe(as(s.caller))
          assert.strictEqual(ok.imported.length, 50)
          const names = (yield* events(s.org)).map((e) => e.event)
          assert.deepStrictEqual(names, [...Array(50).fill("customer.updated"), ...Array(50).fill("review.created")])
          // A second import of other reviews by the same buyers creates no customer and announces none.
          yield* writes.import({ data: rows.map((r, i) => ({ ...r, externalId: `again-${i}` })) }).pipe(as(s.caller))
          assert.strictEqual((yield* events(s.org)).filter((e) => e.event === "customer.updated").length, 50)
        }))
    }

    // -------------------------------------------------------------------------------------------------------------
    // Replies

    it.effect("a reply is a draft by default, named after the organization; a second create is a Conflict", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed([{}], "Mugs & Co")
        const t4 = yield* tick(4)
        const reply = yield* writes.createReply(review!.id, { body: "Thanks for the review" }).pipe(as(caller))
        assert.deepStrictEqual(
          { ...reply, id: undefined },
          {
            id: undefined,
            reviewId: review!.id,
            body: "Thanks for the review",
            responderName: "Mugs & Co",
            published: false,
            metadata: {},
            createdAt: t4,
            updatedAt: t4
          }
        )
        assert.deepStrictEqual(
          Option.getOrThrow(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(org, review!.id))),
          reply
        )
        const second = yield* Effect.flip(
          writes.createReply(review!.id, { body: "Again", published: true }).pipe(as(caller))
        )
        assert.strictEqual(second._tag, "Conflict")
        assert.deepStrictEqual(yield* getReview(org, review!.id), review)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    it.effect("a reply created with published true and a responder name is published under that name", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { reviews: [review], caller } = yield* seed()
        const reply = yield* writes.createReply(review!.id, {
          body: "Thanks",
          published: true,
          responderName: "Sam",
          metadata: { agent: "sam" }
        }).pipe(as(caller))
        assert.isTrue(reply.published)
        assert.strictEqual(reply.responderName, "Sam")
        assert.deepStrictEqual(reply.metadata, { agent: "sam" })
      }))

    it.effect("PATCH of a reply changes only sent fields; metadata is replaced wholesale", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed()
        const created = yield* writes.createReply(review!.id, { body: "Draft", metadata: { a: "1" } }).pipe(as(caller))
        const t2 = yield* tick(2)
        const published = yield* writes.updateReply(review!.id, { published: true }).pipe(as(caller))
        assert.deepStrictEqual(published, { ...created, published: true, updatedAt: t2 })
        const t4 = yield* tick(2)
        const edited = yield* writes.updateReply(review!.id, { body: "Final", metadata: { b: "2" } }).pipe(as(caller))
        assert.deepStrictEqual(edited, { ...published, body: "Final", metadata: { b: "2" }, updatedAt: t4 })
        const unpublished = yield* writes.updateReply(review!.id, { published: false, responderName: "Kim" }).pipe(
          as(caller)
        )
        assert.strictEqual(unpublished.published, false)
        assert.strictEqual(unpublished.responderName, "Kim")
        yield* tick(2)
        const noop = yield* writes.updateReply(review!.id, { body: "Final" }).pipe(as(caller))
        assert.deepStrictEqual(noop, unpublished)
        assert.deepStrictEqual(
          Option.getOrThrow(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(org, review!.id))),
          unpublished
        )
        assert.deepStrictEqual(yield* getReview(org, review!.id), review)
        assert.deepStrictEqual(yield* events(org), [])
      }))

    it.effect("DELETE of a reply answers it and leaves the review untouched; without a reply it is NotFound", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed()
        const missing = yield* Effect.flip(writes.deleteReply(review!.id).pipe(as(caller)))
        assert.strictEqual(missing._tag, "NotFound")
        const missingPatch = yield* Effect.flip(writes.updateReply(review!.id, { body: "x" }).pipe(as(caller)))
        assert.strictEqual(missingPatch._tag, "NotFound")
        const reply = yield* writes.createReply(review!.id, { body: "Thanks" }).pipe(as(caller))
        const deleted = yield* writes.deleteReply(review!.id).pipe(as(caller))
        assert.deepStrictEqual(deleted, reply)
        assert.isTrue(Option.isNone(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(org, review!.id))))
        assert.deepStrictEqual(yield* getReview(org, review!.id), review)
        const again = yield* Effect.flip(writes.deleteReply(review!.id).pipe(as(caller)))
        assert.strictEqual(again._tag, "NotFound")
        // After deletion a new reply may be created.
        yield* writes.createReply(review!.id, { body: "Second thoughts" }).pipe(as(caller))
        assert.deepStrictEqual(yield* events(org), [])
      }))

    it.effect("concurrent reply creates for one review: exactly one wins", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const { org, reviews: [review], caller } = yield* seed()
        const results = yield* Effect.forEach(
          [1, 2, 3, 4],
          (i) => Effect.result(writes.createReply(review!.id, { body: `Reply ${i}` }).pipe(as(caller))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Result.isSuccess).length, 1)
        for (const r of results.filter(Result.isFailure)) assert.strictEqual(r.failure._tag, "Conflict")
        assert.isTrue(Option.isSome(yield* Reviews.ReviewWriteRepository.use((r) => r.findReply(org, review!.id))))
      }))

    // -------------------------------------------------------------------------------------------------------------
    // include=collisions after writes: stores may keep the counts on write (PostgreSQL: migration 102), so they
    // must follow every write and its rollback, and equal a count of the organization's reviews.

    /** Collision counts of every review of the organization, as the read side answers them and as a scan counts. */
    const collisionsOf = (org: Kernel.OrganizationId) =>
      Effect.gen(function*() {
        const page = yield* Reviews.Reviews.use((r) => r.list({ limit: "250", include: "collisions" })).pipe(
          as(callerFor(org))
        )
        const others = (field: "browserFingerprint" | "ipAddress", r: Reviews.ReviewRecord) =>
          r[field] === null ? 0 : page.data.filter((o) => o.id !== r.id && o[field] === r[field]).length
        const answered = Object.fromEntries(page.data.map((r) => [r.id, r.collisions]))
        const counted = Object.fromEntries(
          page.data.map((
            r
          ) => [r.id, { browserFingerprint: others("browserFingerprint", r), ipAddress: others("ipAddress", r) }])
        )
        assert.deepStrictEqual(answered, counted)
        return answered
      })

    it.effect("collision counts follow deletions, bulk updates and rollbacks, per organization", () =>
      Effect.gen(function*() {
        const writes = yield* Reviews.ReviewWrites
        const shared = { browserFingerprint: "fp, \"shared\"", ipAddress: "10.1.1.1" }
        const { org, reviews, caller } = yield* seed([
          shared,
          shared,
          { browserFingerprint: "fp, \"shared\"", ipAddress: null },
          { browserFingerprint: null, ipAddress: "10.1.1.1" },
          { browserFingerprint: "fp-alone", ipAddress: "10.9.9.9" }
        ], "Colliding")
        // Another organization's reviews hold the same values and never count.
        yield* seed([shared, shared, shared], "Elsewhere")
        const before = yield* collisionsOf(org)
        assert.deepStrictEqual(before[reviews[0]!.id], { browserFingerprint: 2, ipAddress: 2 })
        assert.deepStrictEqual(before[reviews[4]!.id], { browserFingerprint: 0, ipAddress: 0 })

        // A deletion whose unit of work fails afterwards changes nothing.
        const failed = yield* Effect.exit(
          failingAfter("recalculateProductStats")((w) => w.delete(reviews[1]!.id, { reason: "spam" })).pipe(as(caller))
        )
        assert.isTrue(Exit.isFailure(failed))
        assert.deepStrictEqual(yield* collisionsOf(org), before)

        yield* writes.delete(reviews[1]!.id, { reason: "spam" }).pipe(as(caller))
        const afterDelete = yield* collisionsOf(org)
        assert.deepStrictEqual(afterDelete[reviews[0]!.id], { browserFingerprint: 1, ipAddress: 1 })
        yield* writes.delete(reviews[4]!.id, { reason: "spam" }).pipe(as(caller))

        // Updates that leave the values alone leave the counts alone.
        yield* writes.bulkUpdate({ filter: JSON.stringify({ rating: { $gte: 1 } }) }, { published: false }).pipe(
          as(caller)
        )
        yield* writes.update(reviews[2]!.id, { published: true, metadata: { touched: "yes" } }).pipe(as(caller))
        const afterUpdates = yield* collisionsOf(org)
        assert.deepStrictEqual(
          Object.keys(afterUpdates).sort(),
          [reviews[0]!.id, reviews[2]!.id, reviews[3]!.id].sort()
        )
        assert.deepStrictEqual(afterUpdates[reviews[0]!.id], { browserFingerprint: 1, ipAddress: 1 })

        // Values whose last review is gone count 0 when they come back.
        const fx = yield* StoreTestKit
        const product = yield* fx.product(org, reviews[0]!.productId).pipe(Effect.map(Option.getOrThrow))
        const again = makeReview(product.id, { browserFingerprint: "fp-alone", ipAddress: "10.9.9.9" })
        yield* fx.insertReviews([{ organizationId: org, review: again }])
        assert.deepStrictEqual((yield* collisionsOf(org))[again.id], { browserFingerprint: 0, ipAddress: 0 })
      }))

    it.effect("seeded site ids resolve for imports (fixture sanity)", () =>
      Effect.gen(function*() {
        const s = yield* importSeed
        const refs = yield* Reviews.ReviewWriteRepository.use((r) =>
          r.resolveImportReferences(s.org, {
            siteIds: [s.site.id, s.foreignSite.id, freshId<Kernel.SiteId>()],
            productSlugs: ["mug", "cup", "zzz"],
            productExternalIds: ["ext-mug"],
            productUrls: ["https://shop.example/shared"],
            customerEmails: ["known@example.com", "nobody@example.com"],
            reviewExternalIds: []
          })
        )
        assert.deepStrictEqual([...refs.siteIds], [s.site.id])
        assert.deepStrictEqual([...refs.productsBySlug.keys()].sort(), ["cup", "mug"])
        assert.deepStrictEqual(refs.productsByExternalId.get("ext-mug"), s.mug.id)
        assert.deepStrictEqual(
          [...(refs.productsByUrl.get("https://shop.example/shared") ?? [])].sort(),
          [s.cup.id, s.bowl.id].sort()
        )
        assert.deepStrictEqual([...refs.customersByEmail.entries()], [["known@example.com", s.existing.id]])
      }))
  })
