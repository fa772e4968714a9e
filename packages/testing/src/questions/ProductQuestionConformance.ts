/**
 * Product questions, answers and the asker's email notice, on every store: each row of the spec's transition table
 * about questions and answers, the list language over questions, the outbox's delivery guarantees, and that
 * deletion leaves no copy of the asker's address anywhere in the store.
 *
 * Tests share one store, so each works in its own organization. Notices are global to the store (a worker sends
 * every organization's), so the email tests first drain what earlier tests may have left and then count messages
 * by their own recipients.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { CoreLayer, Kernel, Organizations, Questions, Webhooks } from "@feedback/core"
import { makeRecordingMailer } from "./RecordingMailer.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { seedCustomer, seedProduct, seedSite, StoreTestKit } from "../StoreTestKit.ts"
import { eventsOf } from "../TestTransactions.ts"

const { fromMillis, now, toMillis } = Kernel.Timestamp

const KEY_ID = "00000000-0000-4000-8000-0000000000c1" as Kernel.SecretKeyId
const readWrite: ReadonlyArray<Kernel.Permission> = ["reviews:read", "reviews:write"]

const as = <A, E, R>(
  organizationId: Kernel.OrganizationId,
  effect: Effect.Effect<A, E, R>,
  permissions: ReadonlyArray<Kernel.Permission> = readWrite
) =>
  Effect.provideService(
    effect,
    Kernel.CurrentCaller,
    new Kernel.SecretKeyCaller({ organizationId, keyId: KEY_ID, permissions: new Set(permissions) })
  )

const setup = (name = "Question shop") =>
  Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name }))
    const product = yield* seedProduct(org.id, { title: "Ceramic mug", url: "https://shop.example/mug" })
    return { org, product }
  })

const ask = (
  organizationId: Kernel.OrganizationId,
  input:
    & Omit<Partial<Questions.CreateProductQuestion>, "productId">
    & Pick<Questions.CreateProductQuestion, "productId">
) => as(organizationId, Questions.ProductQuestions.use((q) => q.create({ body: "Is it dishwasher safe?", ...input })))

const answer = (
  organizationId: Kernel.OrganizationId,
  id: Kernel.ProductQuestionId,
  input: Partial<Questions.CreateProductQuestionAnswer> = {}
) =>
  as(organizationId, Questions.ProductQuestions.use((q) => q.createAnswer(id, { body: "Yes, up to 70 °C.", ...input })))

const get = (organizationId: Kernel.OrganizationId, id: Kernel.ProductQuestionId, include?: string) =>
  as(organizationId, Questions.ProductQuestions.use((q) => q.get(id, include)))

const list = (organizationId: Kernel.OrganizationId, params: Questions.ProductQuestionListParams = {}) =>
  as(organizationId, Questions.ProductQuestions.use((q) => q.list(params)))

/** `ms` after `start` (the test clock is shared by the suite's tests, so times are relative). */
const after = (start: Kernel.Timestamp.Timestamp, ms: number) => fromMillis(toMillis(start) + ms)

const ids = (xs: ReadonlyArray<{ readonly id: string }>) => xs.map((x) => x.id)

const eventNames = (organizationId: Kernel.OrganizationId) =>
  Effect.map(eventsOf(organizationId), (es) => es.map((e) => e.event))
const noticesOf = (organizationId: Kernel.OrganizationId) =>
  Questions.EmailOutboxRepository.use((o) => o.listForOrganization(organizationId))

let workers = 0
const settingsFor = (name: string): Questions.EmailWorkerSettings =>
  Questions.defaultEmailWorkerSettings(`${name}-${++workers}`)

/** Sends every due notice of the store with a throwaway mailer, so a test counts only its own messages. */
const drainOthers = Effect.suspend(() => {
  const mailer = makeRecordingMailer()
  return Questions.deliverDueNotices(settingsFor("drain"), 10_000).pipe(Effect.provide(mailer.layer))
})

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 10)}@example.com`

export const productQuestionConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("product questions", (it) => {
    // ---------------------------------------------------------------------------------------------------------
    // Recording and moderating

    it.effect("POST without published: unpublished, in the moderation queue, listed; fires productQuestion.created", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setup()
        const q = yield* ask(org.id, { productId: product.id, askerName: "Ada", askerEmail: "ada@example.com" })
        assert.isFalse(q.published)
        assert.isNull(q.moderatedAt)
        assert.strictEqual(q.body, "Is it dishwasher safe?")
        assert.strictEqual(q.source, "admin_api")
        assert.isTrue(q.notifyByEmail)
        assert.deepStrictEqual([q.answerCount, q.publishedAnswerCount, q.answeredAt, q.notifiedAt], [0, 0, null, null])
        assert.deepStrictEqual(q.metadata, {})
        assert.deepStrictEqual(ids((yield* list(org.id)).data), [q.id])
        const queue = yield* list(org.id, { filter: JSON.stringify({ moderatedAt: null }) })
        assert.deepStrictEqual(ids(queue.data), [q.id])
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events.map((e) => e.event), ["productQuestion.created"])
        assert.deepStrictEqual(events[0]!.data, q)
        assert.deepStrictEqual(yield* get(org.id, q.id), q)
      }))

    it.effect("POST with published true or false is moderated at creation and skips the queue", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setup()
        const live = yield* ask(org.id, { productId: product.id, published: true })
        const rejected = yield* ask(org.id, { productId: product.id, published: false })
        assert.isTrue(live.published)
        assert.isFalse(rejected.published)
        assert.isNotNull(live.moderatedAt)
        assert.isNotNull(rejected.moderatedAt)
        const queue = yield* list(org.id, { filter: JSON.stringify({ moderatedAt: { $exists: false } }) })
        assert.deepStrictEqual(queue.data, [])
        assert.deepStrictEqual(yield* eventNames(org.id), ["productQuestion.created", "productQuestion.created"])
      }))

    it.effect("PATCH published true publishes, stamps moderatedAt, leaves the queue and fires productQuestion.updated", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        const { org, product } = yield* setup()
        const q = yield* ask(org.id, { productId: product.id })
        yield* TestClock.adjust("1 minute")
        const published = yield* as(org.id, questions.update(q.id, { published: true }))
        assert.isTrue(published.published)
        assert.strictEqual(published.moderatedAt, after(q.createdAt, 60_000))
        assert.strictEqual(published.updatedAt, after(q.createdAt, 60_000))
        assert.strictEqual(published.body, q.body)
        assert.deepStrictEqual(yield* eventNames(org.id), ["productQuestion.created", "productQuestion.updated"])
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events[1]!.data, published)
        const queue = yield* list(org.id, { filter: JSON.stringify({ moderatedAt: null }) })
        assert.deepStrictEqual(queue.data, [])
        assert.deepStrictEqual(yield* get(org.id, q.id), published)
      }))

    it.effect("PATCH published false rejects (out of the queue too), and re-publishing fires again", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        const { org, product } = yield* setup()
        const q = yield* ask(org.id, { productId: product.id })
        yield* TestClock.adjust("1 minute")
        const rejected = yield* as(org.id, questions.update(q.id, { published: false }))
        assert.isFalse(rejected.published)
        assert.strictEqual(rejected.moderatedAt, after(q.createdAt, 60_000))
        yield* TestClock.adjust("1 minute")
        const republished = yield* as(org.id, questions.update(q.id, { published: true }))
        assert.strictEqual(republished.moderatedAt, after(q.createdAt, 120_000))
        assert.deepStrictEqual(yield* eventNames(org.id), [
          "productQuestion.created",
          "productQuestion.updated",
          "productQuestion.updated"
        ])
      }))

    it.effect("PATCH askerName null anonymizes, omitted leaves it; metadata is replaced wholesale; {} changes nothing", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        const { org, product } = yield* setup()
        const q = yield* ask(org.id, { productId: product.id, askerName: "Ada", metadata: { a: "1", b: "2" } })
        const renamed = yield* as(org.id, questions.update(q.id, { metadata: { c: "3" } }))
        assert.strictEqual(renamed.askerName, "Ada")
        assert.deepStrictEqual(renamed.metadata, { c: "3" })
        assert.isNull(renamed.moderatedAt)
        assert.isFalse(renamed.published)
        const anonymous = yield* as(org.id, questions.update(q.id, { askerName: null }))
        assert.isNull(anonymous.askerName)
        assert.deepStrictEqual(anonymous.metadata, { c: "3" })
        const before = (yield* eventsOf(org.id)).length
        const unchanged = yield* as(org.id, questions.update(q.id, {}))
        assert.deepStrictEqual(unchanged, anonymous)
        assert.strictEqual((yield* eventsOf(org.id)).length, before)
      }))

    it.effect("references must exist in the caller's organization: 400 naming the field, nothing written", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setup()
        const other = yield* setup("Other shop")
        const foreignCustomer = yield* seedCustomer(other.org.id)
        const foreignSite = yield* seedSite(other.org.id)
        const e1 = yield* Effect.flip(ask(org.id, { productId: other.product.id }))
        assert.strictEqual(e1._tag, "InvalidRequest")
        assert.deepStrictEqual(e1._tag === "InvalidRequest" ? e1.issues.map((i) => i.path) : [], ["body.productId"])
        const e2 = yield* Effect.flip(
          ask(org.id, { productId: product.id, customerId: foreignCustomer.id, siteId: foreignSite.id })
        )
        assert.deepStrictEqual(e2._tag === "InvalidRequest" ? e2.issues.map((i) => i.path) : [], [
          "body.customerId",
          "body.siteId"
        ])
        const e3 = yield* Effect.flip(ask(org.id, { productId: product.id, notifyByEmail: true }))
        assert.deepStrictEqual(e3._tag === "InvalidRequest" ? e3.issues.map((i) => i.path) : [], ["body.notifyByEmail"])
        assert.deepStrictEqual((yield* list(org.id)).data, [])
        assert.deepStrictEqual(yield* eventsOf(org.id), [])
        const customer = yield* seedCustomer(org.id)
        const site = yield* seedSite(org.id)
        const ok = yield* ask(org.id, {
          productId: product.id,
          customerId: customer.id,
          siteId: site.id,
          askerName: null,
          askerEmail: null
        })
        assert.strictEqual(ok.customerId, customer.id)
        assert.strictEqual(ok.siteId, site.id)
        assert.isNull(ok.askerName)
        assert.isNull(ok.askerEmail)
        assert.isFalse(ok.notifyByEmail)
        const optedOut = yield* ask(org.id, {
          productId: product.id,
          askerEmail: "x@example.com",
          notifyByEmail: false
        })
        assert.isFalse(optedOut.notifyByEmail)
      }))

    it.effect("another organization's question is NotFound for every operation", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        const { org, product } = yield* setup()
        const other = yield* setup("Other shop")
        const q = yield* ask(org.id, { productId: product.id })
        const tags = [
          (yield* Effect.flip(get(other.org.id, q.id)))._tag,
          (yield* Effect.flip(as(other.org.id, questions.update(q.id, { published: true }))))._tag,
          (yield* Effect.flip(as(other.org.id, questions.delete(q.id))))._tag,
          (yield* Effect.flip(as(other.org.id, questions.listAnswers(q.id))))._tag,
          (yield* Effect.flip(answer(other.org.id, q.id)))._tag
        ]
        assert.deepStrictEqual(tags, ["NotFound", "NotFound", "NotFound", "NotFound", "NotFound"])
        assert.deepStrictEqual((yield* list(other.org.id)).data, [])
        const unchanged = yield* get(org.id, q.id)
        assert.deepStrictEqual(unchanged, q)
      }))

    it.effect("permissions: reads need reviews:read, writes reviews:write", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        const { org, product } = yield* setup()
        const q = yield* ask(org.id, { productId: product.id })
        const readOnly: ReadonlyArray<Kernel.Permission> = ["reviews:read"]
        const denied = yield* Effect.flip(as(org.id, questions.create({ productId: product.id, body: "x" }), readOnly))
        assert.strictEqual(denied._tag, "Forbidden")
        assert.strictEqual(
          (yield* Effect.flip(as(org.id, questions.update(q.id, { published: true }), readOnly)))._tag,
          "Forbidden"
        )
        assert.strictEqual(
          (yield* Effect.flip(as(org.id, questions.createAnswer(q.id, { body: "x" }), readOnly)))._tag,
          "Forbidden"
        )
        assert.strictEqual((yield* Effect.flip(as(org.id, questions.delete(q.id), readOnly)))._tag, "Forbidden")
        assert.strictEqual((yield* Effect.flip(as(org.id, questions.list({}), ["settings:read"])))._tag, "Forbidden")
        assert.deepStrictEqual(ids((yield* as(org.id, questions.list({}), readOnly)).data), [q.id])
      }))

    // ---------------------------------------------------------------------------------------------------------
    // Answers

    it.effect("answers: merchant, published by default; counts, answeredAt of the first published one; oldest first", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        const { org, product } = yield* setup("Answer shop")
        const q = yield* ask(org.id, { productId: product.id })
        yield* TestClock.adjust("1 minute")
        const draft = yield* answer(org.id, q.id, { body: "Draft answer", published: false, metadata: { by: "bot" } })
        assert.isFalse(draft.published)
        assert.strictEqual(draft.authorType, "merchant")
        assert.strictEqual(draft.authorName, "Answer shop")
        assert.deepStrictEqual(draft.metadata, { by: "bot" })
        let current = yield* get(org.id, q.id)
        assert.deepStrictEqual([current.answerCount, current.publishedAnswerCount, current.answeredAt], [1, 0, null])
        yield* TestClock.adjust("1 minute")
        const first = yield* answer(org.id, q.id, { authorName: "Support team" })
        assert.isTrue(first.published)
        assert.strictEqual(first.authorName, "Support team")
        assert.isNull(first.userId)
        yield* TestClock.adjust("1 minute")
        const second = yield* answer(org.id, q.id, { body: "Also oven safe." })
        current = yield* get(org.id, q.id)
        assert.deepStrictEqual([current.answerCount, current.publishedAnswerCount], [3, 2])
        assert.strictEqual(current.answeredAt, after(q.createdAt, 120_000))
        assert.strictEqual(current.answeredAt, first.createdAt)
        const answers = yield* as(org.id, questions.listAnswers(q.id))
        assert.deepStrictEqual(answers.data, [draft, first, second])
        assert.deepStrictEqual((yield* get(org.id, q.id, "answers")).answers, [draft, first, second])
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events.map((e) => e.event), [
          "productQuestion.created",
          "productQuestionAnswer.created",
          "productQuestionAnswer.created",
          "productQuestionAnswer.created"
        ])
        assert.deepStrictEqual(events.slice(1).map((e) => e.data), [draft, first, second])
      }))

    it.effect("an answer edit changes only sent fields; publishing and hiding keep counts and answeredAt current", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setup("Edit answers")
        const q = yield* ask(org.id, { productId: product.id })
        const draft = yield* answer(org.id, q.id, { body: "Draft", published: false, metadata: { by: "bot" } })
        const before = (yield* eventsOf(org.id)).length
        yield* TestClock.adjust("1 minute")
        const edited = yield* as(
          org.id,
          Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, draft.id, { body: "Final text" }))
        )
        assert.deepStrictEqual(edited, { ...draft, body: "Final text", updatedAt: after(draft.createdAt, 60_000) })
        const afterEdit = yield* get(org.id, q.id)
        assert.deepStrictEqual([afterEdit.answerCount, afterEdit.publishedAnswerCount, afterEdit.answeredAt], [
          1,
          0,
          null
        ])
        yield* TestClock.adjust("1 minute")
        const published = yield* as(
          org.id,
          Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, draft.id, { published: true }))
        )
        assert.isTrue(published.published)
        assert.strictEqual(published.moderatedAt, after(draft.createdAt, 120_000))
        let current = yield* get(org.id, q.id)
        assert.deepStrictEqual([current.answerCount, current.publishedAnswerCount, current.answeredAt], [
          1,
          1,
          after(draft.createdAt, 120_000)
        ])
        assert.deepStrictEqual(ids((yield* list(org.id, { answered: "true" })).data), [q.id])
        // Sending what is already there changes nothing and announces nothing.
        assert.deepStrictEqual(
          yield* as(
            org.id,
            Questions.ProductQuestions.use((p) =>
              p.updateAnswer(q.id, draft.id, { published: true, body: "Final text" })
            )
          ),
          published
        )
        yield* TestClock.adjust("1 minute")
        const hidden = yield* as(
          org.id,
          Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, draft.id, { published: false }))
        )
        current = yield* get(org.id, q.id)
        assert.deepStrictEqual([current.answerCount, current.publishedAnswerCount, current.answeredAt], [1, 0, null])
        assert.deepStrictEqual(ids((yield* list(org.id, { answered: "true" })).data), [])
        const events = (yield* eventsOf(org.id)).slice(before)
        assert.deepStrictEqual(events.map((e) => [e.event, e.data]), [
          ["productQuestionAnswer.updated", edited],
          ["productQuestionAnswer.updated", published],
          ["productQuestionAnswer.updated", hidden]
        ])
      }))

    it.effect("deleting an answer returns it, fires productQuestionAnswer.deleted and keeps the counts; other questions' answers are not found", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setup("Delete answers")
        const q = yield* ask(org.id, { productId: product.id })
        const other = yield* ask(org.id, { productId: product.id, body: "Another?" })
        const first = yield* answer(org.id, q.id)
        const second = yield* answer(org.id, q.id, { published: false })
        assert.deepInclude(
          yield* Effect.flip(as(org.id, Questions.ProductQuestions.use((p) => p.deleteAnswer(other.id, first.id)))),
          { _tag: "NotFound" }
        )
        const stranger = yield* setup("Stranger")
        assert.deepInclude(
          yield* Effect.flip(as(
            stranger.org.id,
            Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, first.id, { body: "x" }))
          )),
          { _tag: "NotFound" }
        )
        assert.deepStrictEqual(
          yield* as(org.id, Questions.ProductQuestions.use((p) => p.deleteAnswer(q.id, second.id))),
          second
        )
        let current = yield* get(org.id, q.id)
        assert.deepStrictEqual([current.answerCount, current.publishedAnswerCount, current.answeredAt], [
          1,
          1,
          first.createdAt
        ])
        assert.deepStrictEqual(
          yield* as(org.id, Questions.ProductQuestions.use((p) => p.deleteAnswer(q.id, first.id))),
          first
        )
        current = yield* get(org.id, q.id)
        assert.deepStrictEqual([current.answerCount, current.publishedAnswerCount, current.answeredAt], [0, 0, null])
        assert.deepStrictEqual((yield* as(org.id, Questions.ProductQuestions.use((p) => p.listAnswers(q.id)))).data, [])
        const events = yield* eventsOf(org.id)
        assert.deepStrictEqual(events.slice(-2).map((e) => [e.event, e.data]), [[
          "productQuestionAnswer.deleted",
          second
        ], ["productQuestionAnswer.deleted", first]])
        assert.deepInclude(
          yield* Effect.flip(as(org.id, Questions.ProductQuestions.use((p) => p.deleteAnswer(q.id, first.id)))),
          { _tag: "NotFound" }
        )
      }))

    it.effect("answered=true lists exactly the questions with a published answer; false the others", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setup()
        const none = yield* ask(org.id, { productId: product.id, body: "none" })
        const draftOnly = yield* ask(org.id, { productId: product.id, body: "draft only" })
        const one = yield* ask(org.id, { productId: product.id, body: "one" })
        const two = yield* ask(org.id, { productId: product.id, body: "two" })
        yield* answer(org.id, draftOnly.id, { published: false })
        yield* answer(org.id, one.id)
        yield* answer(org.id, two.id)
        yield* answer(org.id, two.id, { published: false })
        yield* answer(org.id, two.id)
        const sorted = (xs: ReadonlyArray<string>) => [...xs].sort()
        assert.deepStrictEqual(sorted(ids((yield* list(org.id, { answered: "true" })).data)), sorted([one.id, two.id]))
        assert.deepStrictEqual(
          sorted(ids((yield* list(org.id, { answered: "false" })).data)),
          sorted([none.id, draftOnly.id])
        )
        assert.strictEqual((yield* list(org.id)).data.length, 4)
        const bad = yield* Effect.flip(list(org.id, { answered: "yes" }))
        assert.deepStrictEqual(bad._tag === "InvalidRequest" ? bad.issues.map((i) => i.path) : [], ["answered"])
        // A cursor is bound to `answered` as well as to sort, filter and search.
        const page = yield* list(org.id, { answered: "false", limit: "1" })
        assert.isNotNull(page.nextCursor)
        const misuse = yield* Effect.flip(list(org.id, { answered: "true", limit: "1", cursor: page.nextCursor! }))
        assert.strictEqual(misuse._tag, "InvalidRequest")
        const next = yield* list(org.id, { answered: "false", limit: "1", cursor: page.nextCursor! })
        assert.strictEqual(next.data.length, 1)
      }))

    // ---------------------------------------------------------------------------------------------------------
    // Listing

    it.effect("sorts, keyset pages, filters over product and customer fields, search, includes batched per page", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        const { org, product } = yield* setup()
        const other = yield* seedProduct(org.id, {
          title: "Linen Apron",
          slug: "linen-apron",
          metadata: { material: "linen" }
        })
        const customer = yield* seedCustomer(org.id, { email: "grace@example.com", firstName: "Grace" })
        const made: Array<Questions.ProductQuestionRecord> = []
        for (let i = 0; i < 5; i++) {
          yield* TestClock.adjust("1 second")
          made.push(
            yield* ask(org.id, {
              productId: i % 2 === 0 ? product.id : other.id,
              body: `Question number ${i}`,
              askerName: i === 3 ? "Zoë Quartz" : null,
              askerEmail: i === 4 ? "Searchable.Person@Example.com" : null,
              customerId: i === 1 ? customer.id : null,
              metadata: { n: String(i) }
            })
          )
        }
        // Moderate #1 then #3 (later), answer #2.
        yield* TestClock.adjust("1 second")
        yield* as(org.id, questions.update(made[1]!.id, { published: true }))
        yield* TestClock.adjust("1 second")
        yield* as(org.id, questions.update(made[3]!.id, { published: false }))
        yield* answer(org.id, made[2]!.id)
        const all = ids(made)
        assert.deepStrictEqual(ids((yield* list(org.id)).data), [...all].reverse())
        assert.deepStrictEqual(ids((yield* list(org.id, { sort: "createdAt" })).data), all)
        const byModerated = ids((yield* list(org.id, { sort: "-moderatedAt" })).data)
        assert.deepStrictEqual(byModerated.slice(0, 2), [all[3], all[1]])
        assert.deepStrictEqual(ids((yield* list(org.id, { sort: "moderatedAt" })).data).slice(0, 2), [all[1], all[3]])
        assert.deepStrictEqual(ids((yield* list(org.id, { sort: "answeredAt" })).data)[0], all[2])
        assert.deepStrictEqual(ids((yield* list(org.id, { sort: "-answeredAt" })).data)[0], all[2])
        // Keyset pages of two, stable and complete.
        const seen: Array<string> = []
        let cursor: string | undefined
        for (let pages = 0; pages < 5; pages++) {
          const page = yield* list(org.id, {
            sort: "createdAt",
            limit: "2",
            ...(cursor === undefined ? {} : { cursor })
          })
          seen.push(...ids(page.data))
          if (page.nextCursor === null) break
          cursor = page.nextCursor
        }
        assert.deepStrictEqual(seen, all)
        // Filters.
        const f = (filter: unknown) => list(org.id, { sort: "createdAt", filter: JSON.stringify(filter) })
        assert.deepStrictEqual(ids((yield* f({ "product.slug": "linen-apron" })).data), [all[1], all[3]])
        assert.deepStrictEqual(ids((yield* f({ "product.metadata.material": "linen" })).data), [all[1], all[3]])
        assert.deepStrictEqual(ids((yield* f({ "customer.email": "grace@example.com" })).data), [all[1]])
        assert.deepStrictEqual(ids((yield* f({ "customer.firstName": { $exists: false } })).data), [
          all[0],
          all[2],
          all[3],
          all[4]
        ])
        assert.deepStrictEqual(ids((yield* f({ "metadata.n": { $in: ["0", "4"] } })).data), [all[0], all[4]])
        assert.deepStrictEqual(ids((yield* f({ published: true })).data), [all[1]])
        assert.deepStrictEqual(ids((yield* f({ answeredAt: { $exists: true } })).data), [all[2]])
        assert.deepStrictEqual(ids((yield* f({ source: "admin_api", id: all[0] })).data), [all[0]])
        assert.deepStrictEqual(
          ids((yield* f({ $or: [{ "product.title": "Linen Apron" }, { "metadata.n": "0" }] })).data),
          [all[0], all[1], all[3]]
        )
        const badFilter = yield* Effect.flip(f({ rating: 5 }))
        assert.strictEqual(badFilter._tag, "InvalidRequest")
        // Search: body, askerName, askerEmail, product title; case-insensitive; AND with the filter.
        const s = (search: string, extra: Questions.ProductQuestionListParams = {}) =>
          Effect.map(list(org.id, { sort: "createdAt", search, ...extra }), (p) => ids(p.data))
        assert.deepStrictEqual(yield* s("NUMBER 2"), [all[2]])
        assert.deepStrictEqual(yield* s("zoë"), [all[3]])
        assert.deepStrictEqual(yield* s("searchable.person@"), [all[4]])
        assert.deepStrictEqual(yield* s("linen"), [all[1], all[3]])
        assert.deepStrictEqual(yield* s("linen", { filter: JSON.stringify({ published: true }) }), [all[1]])
        assert.deepStrictEqual(yield* s("grace@example.com"), [])
        // Includes.
        const withAll = yield* list(org.id, { sort: "createdAt", include: "customer,product,answers" })
        const rows = withAll.data
        assert.strictEqual(rows[0]!.product?.id, product.id)
        assert.strictEqual(rows[1]!.product?.title, "Linen Apron")
        assert.strictEqual(rows[1]!.customer?.email, "grace@example.com")
        assert.isNull(rows[0]!.customer)
        assert.deepStrictEqual(rows[0]!.answers, [])
        assert.strictEqual(rows[2]!.answers?.length, 1)
        const plain = (yield* list(org.id)).data[0]!
        assert.isFalse("product" in plain || "customer" in plain || "answers" in plain)
        const badInclude = yield* Effect.flip(list(org.id, { include: "response" }))
        assert.strictEqual(badInclude._tag, "InvalidRequest")
        const badSort = yield* Effect.flip(list(org.id, { sort: "rating" }))
        assert.strictEqual(badSort._tag, "InvalidRequest")
        const got = yield* get(org.id, made[1]!.id, "product,customer")
        assert.strictEqual(got.customer?.id, customer.id)
        assert.strictEqual(got.product?.id, other.id)
        assert.isFalse("answers" in got)
      }))

    // ---------------------------------------------------------------------------------------------------------
    // The asker's email

    it.effect("the first published answer emails the asker once; later answers send nothing", () =>
      Effect.gen(function*() {
        yield* drainOthers
        const { org, product } = yield* setup("Mail shop")
        const email = unique("asker")
        const otherEmail = unique("bystander")
        const q = yield* ask(org.id, {
          productId: product.id,
          askerName: "Ada",
          askerEmail: email,
          body: "Does it fit a 12 oz pour?"
        })
        const bystander = yield* ask(org.id, {
          productId: product.id,
          askerEmail: otherEmail,
          body: "Is the glaze lead-free?"
        })
        yield* answer(org.id, q.id, { published: false, body: "internal draft" })
        assert.deepStrictEqual(yield* noticesOf(org.id), [])
        const first = yield* answer(org.id, q.id, { body: "Yes, it holds 14 oz." })
        const notices = yield* noticesOf(org.id)
        assert.strictEqual(notices.length, 1)
        assert.strictEqual(notices[0]!.status, "pending")
        assert.strictEqual(notices[0]!.recipient, email)
        assert.strictEqual(notices[0]!.productQuestionAnswerId, first.id)
        yield* answer(org.id, q.id, { body: "Also microwave safe." })
        assert.strictEqual((yield* noticesOf(org.id)).length, 1)

        const mailer = makeRecordingMailer()
        const settings = settingsFor("mail")
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(mailer.layer))
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(mailer.layer))
        const mine = mailer.sent.filter((m) => m.to === email)
        assert.strictEqual(mine.length, 1)
        const message = mine[0]!
        assert.include(message.subject, "Ceramic mug")
        assert.include(message.subject, "answer")
        assert.include(message.text, "Does it fit a 12 oz pour?")
        assert.include(message.text, "Yes, it holds 14 oz.")
        assert.include(message.text, "Hello Ada")
        assert.notInclude(message.text, "internal draft")
        assert.notInclude(message.text, "Also microwave safe.")
        assert.notInclude(JSON.stringify(message), otherEmail)
        assert.notInclude(message.text, bystander.body)
        assert.strictEqual(mailer.calls.filter((m) => m.to === otherEmail).length, 0)
        const [sent] = yield* noticesOf(org.id)
        assert.strictEqual(sent!.status, "sent")
        assert.strictEqual(sent!.attempts, 1)
        const after = yield* get(org.id, q.id)
        assert.strictEqual(after.notifiedAt, sent!.finishedAt)
        assert.isNotNull(after.notifiedAt)
        // The bystander's own first answer is their own single notice.
        yield* answer(org.id, bystander.id)
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(mailer.layer))
        assert.strictEqual(mailer.sent.filter((m) => m.to === otherEmail).length, 1)
        assert.strictEqual(mailer.sent.filter((m) => m.to === email).length, 1)
      }))

    it.effect("no address, or notifyByEmail false, sends nothing", () =>
      Effect.gen(function*() {
        yield* drainOthers
        const { org, product } = yield* setup()
        const anonymous = yield* ask(org.id, { productId: product.id })
        const optedOut = yield* ask(org.id, {
          productId: product.id,
          askerEmail: unique("optout"),
          notifyByEmail: false
        })
        yield* answer(org.id, anonymous.id)
        yield* answer(org.id, optedOut.id)
        assert.deepStrictEqual(yield* noticesOf(org.id), [])
        const mailer = makeRecordingMailer()
        yield* Questions.deliverDueNotices(settingsFor("none")).pipe(Effect.provide(mailer.layer))
        assert.strictEqual(mailer.calls.filter((m) => m.to === optedOut.askerEmail).length, 0)
        assert.isNull((yield* get(org.id, anonymous.id)).notifiedAt)
        assert.isNotNull((yield* get(org.id, anonymous.id)).answeredAt)
      }))

    it.effect("a first published answer reached by an edit emails the asker, once however often it is hidden and shown", () =>
      Effect.gen(function*() {
        yield* drainOthers
        const { org, product } = yield* setup("Edit mail shop")
        const email = unique("edit-asker")
        const q = yield* ask(org.id, { productId: product.id, askerEmail: email })
        const draft = yield* answer(org.id, q.id, { published: false, body: "Draft" })
        assert.deepStrictEqual(yield* noticesOf(org.id), [])
        yield* as(
          org.id,
          Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, draft.id, { body: "Edited draft" }))
        )
        assert.deepStrictEqual(yield* noticesOf(org.id), [])
        yield* as(org.id, Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, draft.id, { published: true })))
        const notices = yield* noticesOf(org.id)
        assert.strictEqual(notices.length, 1)
        assert.strictEqual(notices[0]!.recipient, email)
        assert.strictEqual(notices[0]!.productQuestionAnswerId, draft.id)
        assert.include(notices[0]!.text, "Edited draft")
        yield* as(org.id, Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, draft.id, { published: false })))
        yield* as(org.id, Questions.ProductQuestions.use((p) => p.updateAnswer(q.id, draft.id, { published: true })))
        yield* answer(org.id, q.id)
        assert.strictEqual((yield* noticesOf(org.id)).length, 1)
      }))

    it.effect("concurrent first answers record one notice", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setup()
        const q = yield* ask(org.id, { productId: product.id, askerEmail: unique("race") })
        yield* Effect.all([answer(org.id, q.id), answer(org.id, q.id), answer(org.id, q.id)], {
          concurrency: "unbounded"
        })
        assert.strictEqual((yield* noticesOf(org.id)).length, 1)
        const after = yield* get(org.id, q.id)
        assert.deepStrictEqual([after.answerCount, after.publishedAnswerCount], [3, 3])
        yield* drainOthers
      }))

    it.effect("a crash after commit: the notice is sent by the next worker, exactly once", () =>
      Effect.gen(function*() {
        yield* drainOthers
        const { org, product } = yield* setup()
        const email = unique("crash")
        const q = yield* ask(org.id, { productId: product.id, askerEmail: email })
        yield* answer(org.id, q.id)
        // The process that committed the answer died before its worker ran: the notice waits, pending.
        assert.strictEqual((yield* noticesOf(org.id))[0]!.status, "pending")
        const mailer = makeRecordingMailer()
        const restarted = settingsFor("restarted")
        yield* Questions.failInterruptedNotices(restarted)
        yield* Questions.deliverDueNotices(restarted).pipe(Effect.provide(mailer.layer))
        yield* Questions.deliverDueNotices(settingsFor("another")).pipe(Effect.provide(mailer.layer))
        assert.strictEqual(mailer.sent.filter((m) => m.to === email).length, 1)
        assert.strictEqual((yield* noticesOf(org.id))[0]!.status, "sent")
      }))

    it.effect("a crash after claiming: never sent twice; failed as interrupted once the claim is stale", () =>
      Effect.gen(function*() {
        yield* drainOthers
        const { org, product } = yield* setup()
        const email = unique("claimed")
        const q = yield* ask(org.id, { productId: product.id, askerEmail: email })
        yield* answer(org.id, q.id)
        const dead = settingsFor("dead")
        const t0 = yield* now
        const claimed = yield* Questions.EmailOutboxRepository.use((o) => o.claimNext(dead.workerId, t0))
        assert.isTrue(claimed._tag === "Some" && claimed.value.recipient === email)
        const mailer = makeRecordingMailer()
        const alive = settingsFor("alive")
        assert.strictEqual(yield* Questions.failInterruptedNotices(alive), 0)
        yield* Questions.deliverDueNotices(alive).pipe(Effect.provide(mailer.layer))
        assert.strictEqual(mailer.calls.filter((m) => m.to === email).length, 0)
        yield* TestClock.adjust(alive.interruptedAfterMs + 1_000)
        assert.isAtLeast(yield* Questions.failInterruptedNotices(alive), 1)
        const [notice] = yield* noticesOf(org.id)
        assert.strictEqual(notice!.status, "failed")
        assert.strictEqual(notice!.error, Questions.INTERRUPTED_ERROR)
        yield* Questions.deliverDueNotices(alive).pipe(Effect.provide(mailer.layer))
        assert.strictEqual(mailer.calls.filter((m) => m.to === email).length, 0)
        // The dead worker's late outcome no longer applies.
        const late = yield* Questions.EmailOutboxRepository.use((o) =>
          o.complete(org.id, notice!.id, dead.workerId, { status: "sent", error: null, at: t0 })
        )
        assert.isFalse(late)
        assert.isNull((yield* get(org.id, q.id)).notifiedAt)
      }))

    it.effect("concurrent workers never send the same notice", () =>
      Effect.gen(function*() {
        yield* drainOthers
        const { org, product } = yield* setup()
        const emails = Array.from({ length: 6 }, (_, i) => unique(`w${i}`))
        for (const email of emails) {
          const q = yield* ask(org.id, { productId: product.id, askerEmail: email })
          yield* answer(org.id, q.id)
        }
        const mailer = makeRecordingMailer()
        yield* Effect.all(
          Array.from({ length: 4 }, (_, i) => Questions.deliverDueNotices(settingsFor(`parallel${i}`))),
          { concurrency: "unbounded" }
        ).pipe(Effect.provide(mailer.layer))
        for (const email of emails) assert.strictEqual(mailer.calls.filter((m) => m.to === email).length, 1)
        assert.deepStrictEqual((yield* noticesOf(org.id)).map((n) => n.status), emails.map(() => "sent"))
      }))

    it.effect("transport outcomes: retry only when certainly not sent; logged and refused are final", () =>
      Effect.gen(function*() {
        yield* drainOthers
        const { org, product } = yield* setup()
        const settings = settingsFor("outcomes")
        const notify = (label: string) =>
          Effect.gen(function*() {
            const email = unique(label)
            const q = yield* ask(org.id, { productId: product.id, askerEmail: email })
            yield* answer(org.id, q.id)
            return { email, q }
          })
        const statusOf = (email: string) =>
          Effect.map(noticesOf(org.id), (ns) => ns.find((n) => n.recipient === email)!)

        const retried = yield* notify("retry")
        const flaky = makeRecordingMailer([{ _tag: "NotSent", permanent: false, error: "connection refused" }])
        const t0 = yield* now
        yield* Questions.deliverNextNotice(settings).pipe(Effect.provide(flaky.layer))
        let n = yield* statusOf(retried.email)
        assert.deepStrictEqual([n.status, n.attempts, n.error], ["pending", 1, "connection refused"])
        assert.strictEqual(n.nextAttemptAt, after(t0, settings.retryBaseMs))
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(flaky.layer))
        assert.strictEqual(flaky.calls.length, 1)
        yield* TestClock.adjust(settings.retryBaseMs)
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(flaky.layer))
        n = yield* statusOf(retried.email)
        assert.deepStrictEqual([n.status, n.attempts], ["sent", 2])
        assert.strictEqual(flaky.sent.length, 1)
        assert.isNotNull((yield* get(org.id, retried.q.id)).notifiedAt)

        const refused = yield* notify("refused")
        const strict = makeRecordingMailer([{ _tag: "NotSent", permanent: true, error: "550 no such user" }])
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(strict.layer))
        n = yield* statusOf(refused.email)
        assert.strictEqual(n.status, "failed")
        assert.include(n.error, "550")

        const uncertain = yield* notify("uncertain")
        const cut = makeRecordingMailer([{ _tag: "Uncertain", error: "connection reset after DATA" }])
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(cut.layer))
        yield* TestClock.adjust("1 hour")
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(cut.layer))
        assert.strictEqual(cut.calls.length, 1)
        assert.strictEqual((yield* statusOf(uncertain.email)).status, "failed")
        assert.isNull((yield* get(org.id, uncertain.q.id)).notifiedAt)

        const logged = yield* notify("logged")
        const log = makeRecordingMailer([{ _tag: "Logged" }])
        yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(log.layer))
        assert.strictEqual((yield* statusOf(logged.email)).status, "logged")
        assert.isNull((yield* get(org.id, logged.q.id)).notifiedAt)

        const exhausted = yield* notify("exhausted")
        const down = makeRecordingMailer(
          Array.from(
            { length: settings.maxAttempts },
            () => ({ _tag: "NotSent", permanent: false, error: "down" }) as const
          )
        )
        for (let i = 0; i < settings.maxAttempts; i++) {
          yield* TestClock.adjust("2 hours")
          yield* Questions.deliverDueNotices(settings).pipe(Effect.provide(down.layer))
        }
        n = yield* statusOf(exhausted.email)
        assert.deepStrictEqual([n.status, n.attempts], ["failed", settings.maxAttempts])
        assert.strictEqual(down.calls.length, settings.maxAttempts)
      }))

    // ---------------------------------------------------------------------------------------------------------
    // Deletion

    it.effect("DELETE removes the question, its answers, its notices and every stored copy of the address", () =>
      Effect.gen(function*() {
        const questions = yield* Questions.ProductQuestions
        yield* drainOthers
        const { org, product } = yield* setup()
        const email = unique("erase-me")
        const keptEmail = unique("keep-me")
        // A webhook subscribed to question events: its delivery bodies copy the address too.
        const webhookAt = yield* now
        const webhookId = yield* Kernel.nextId<Kernel.WebhookId>()
        yield* Webhooks.WebhookRepository.use((r) =>
          r.insert({
            id: webhookId,
            organizationId: org.id,
            url: "https://hooks.example.com/questions",
            events: ["productQuestion.created", "productQuestion.updated"],
            hmacSecret: null,
            previousHmacSecret: null,
            previousSecretExpiresAt: null,
            createdAt: webhookAt,
            updatedAt: webhookAt
          })
        )
        const q = yield* ask(org.id, { productId: product.id, askerEmail: email, askerName: "Ada" })
        const kept = yield* ask(org.id, { productId: product.id, askerEmail: keptEmail })
        const a1 = yield* answer(org.id, q.id)
        yield* answer(org.id, q.id, { published: false })
        yield* answer(org.id, kept.id)
        yield* as(org.id, questions.update(q.id, { published: true }))
        const mailer = makeRecordingMailer()
        // One notice sent, the other still pending when the questions are deleted.
        yield* Questions.deliverNextNotice(settingsFor("delete")).pipe(Effect.provide(mailer.layer))
        while ((yield* Webhooks.fanOutOnce(500)).events > 0) { /* fan out every pending event of the store */ }
        const bodies = (yield* Webhooks.WebhookRepository.use((r) =>
          r.listDeliveries(org.id, webhookId, { after: undefined, limit: 100 })
        )).map((d) =>
          d.body
        )
        assert.strictEqual(bodies.length, 3)
        assert.isTrue(bodies.some((b) => b.includes(email)))
        assert.includeMembers([...(yield* StoreTestKit.use((s) => s.tablesContaining(email)))], [
          "domain_events",
          "email_outbox",
          "product_questions",
          "webhook_deliveries"
        ])

        const deleted = yield* as(org.id, questions.delete(q.id))
        assert.strictEqual(deleted.id, q.id)
        assert.strictEqual(deleted.askerEmail, email)
        assert.strictEqual(deleted.answerCount, 2)
        assert.strictEqual((yield* Effect.flip(get(org.id, q.id)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(as(org.id, questions.listAnswers(q.id))))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(answer(org.id, q.id)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(as(org.id, questions.delete(q.id))))._tag, "NotFound")
        const remaining = [yield* get(org.id, kept.id, "answers")]
        assert.strictEqual(remaining[0]!.answers?.length, 1)
        assert.notInclude(JSON.stringify(remaining), a1.id)
        assert.deepStrictEqual(
          (yield* noticesOf(org.id)).filter((n) => n.productQuestionId === q.id),
          []
        )
        assert.deepStrictEqual(yield* StoreTestKit.use((s) => s.tablesContaining(email)), [])
        const scrubbed = yield* Webhooks.WebhookRepository.use((r) =>
          r.listDeliveries(org.id, webhookId, { after: undefined, limit: 100 })
        )
        assert.strictEqual(scrubbed.length, 3)
        for (const d of scrubbed) {
          const envelope = JSON.parse(d.body) as { data: { askerEmail: unknown; askerName?: unknown } }
          if (d.event.startsWith("productQuestion.") && envelope.data.askerName === "Ada") {
            assert.isNull(envelope.data.askerEmail)
          }
        }
        assert.deepStrictEqual(yield* Questions.ProductQuestionRepository.use((r) => r.answersOf(org.id, [q.id])), [])
        assert.isNotEmpty(yield* StoreTestKit.use((s) => s.tablesContaining(keptEmail)))
        const events = yield* eventsOf(org.id)
        const last = events[events.length - 1]!
        assert.strictEqual(last.event, "productQuestion.deleted")
        assert.deepStrictEqual(last.data, { ...deleted, askerEmail: null })
        assert.strictEqual(events.filter((e) => (e.data as { id?: string }).id === q.id).length, 3)
        assert.deepStrictEqual(ids((yield* list(org.id)).data), [kept.id])
        yield* drainOthers
      }))
  })
