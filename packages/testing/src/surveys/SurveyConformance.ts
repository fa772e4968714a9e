/**
 * Conformance of the flow engine (docs/DECISIONS.md §48) on every store, with time from `TestClock` so whole flows run
 * in milliseconds: enrolment on the trigger (at most once per order and flow; imports never), conditions, surveys
 * laid out step by step, the request and the reminder sent when due and exactly once (concurrent workers, a worker
 * that died with a step in flight), the skip and cancel rules, manual requests, deletion, and the list.
 */
import { assert, layer } from "@effect/vitest"
import fc from "fast-check"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { Catalog, CoreLayer, Kernel, Orders, Organizations, type Questions, Setup, Surveys } from "@feedback/core"
import { asDashboard } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { makeRecordingMailer } from "../questions/RecordingMailer.ts"

const DAY = 86_400_000

/** A shop with a product and the guided setup's flow: request `delayDays` after `triggerEvent`, a reminder 2 days later. */
const shop = (
  name: string,
  answers: {
    readonly triggerEvent?: "order.created" | "order.fulfilled" | "order.delivered"
    readonly delayDays?: number
  } = {}
) =>
  Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name }))
    const as = asDashboard(org.id)
    yield* as(Catalog.Catalogs.use((c) => c.createProduct({ slug: "mug", title: "Mug" })))
    yield* as(Catalog.Catalogs.use((c) => c.createProduct({ slug: "cup", title: "Cup" })))
    const setup = yield* as(Setup.Setup.use((s) =>
      s.setupReviews({
        triggerEvent: answers.triggerEvent ?? "order.fulfilled",
        delayDays: answers.delayDays ?? 3,
        reminder: true,
        reminderDelayDays: 2
      })
    ))
    const order = (input: Partial<Orders.OrderCreate> = {}) =>
      as(Orders.Orders.use((o) =>
        o.create({
          ...(input.customerId === undefined
            ? { customer: { email: `${Math.random().toString(36).slice(2)}@example.com` } }
            : {}),
          lines: [{ productSlug: "mug" }, { productSlug: "cup" }, { productSlug: "mug" }],
          ...input
        })
      ))
    const surveysOf = (orderId?: string) =>
      Effect.map(
        as(
          Surveys.Surveys.use((s) =>
            s.list({
              limit: 250,
              ...(orderId === undefined ? {} : { filter: JSON.stringify({ "order.id": orderId }) })
            })
          )
        ),
        (p) => p.data
      )
    return { org, as, flow: setup.surveyFlow, templates: setup.emailTemplates, order, surveysOf }
  })

const settings = (workerId: string) => Surveys.defaultSurveyWorkerSettings(workerId)

const events = (organizationId: Kernel.OrganizationId) =>
  Kernel.EventOutbox.use((o) => o.listForOrganization(organizationId))

/**
 * The suite's tests share one store, and a worker claims due steps of every organization: each test counts only the
 * messages to its own customers.
 */
const to = (mailer: { readonly calls: ReadonlyArray<Questions.EmailMessage> }, ...emails: ReadonlyArray<string>) =>
  mailer.calls.filter((m) => emails.includes(m.to))

const stepsOf = (survey: Surveys.Survey) => survey.steps.map((s) => [s.type, s.dueAt, s.doneAt, s.outcome])

export const surveyConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 120_000 })("surveys", (it) => {
    it.effect("enrolment: the flow's trigger enrolls an order once, laid out step by step; other moves and imports do not", () =>
      Effect.gen(function*() {
        const { as, flow, order, org, surveysOf } = yield* shop("Enrolment")
        const t0 = yield* Kernel.Timestamp.now
        const open = yield* order()
        assert.deepStrictEqual(yield* surveysOf(open.id), [])
        yield* TestClock.adjust("1 hour")
        const t1 = yield* Kernel.Timestamp.now
        yield* as(Orders.Orders.use((o) => o.update(open.id, { status: "fulfilled" })))
        const [survey, ...more] = yield* surveysOf(open.id)
        assert.strictEqual(more.length, 0)
        assert.deepStrictEqual(
          [survey!.flowId, survey!.orderId, survey!.customerId, survey!.status, survey!.reason, survey!.completedAt],
          [flow.id, open.id, open.customerId, "scheduled", null, null]
        )
        assert.deepStrictEqual(survey!.products.map((p) => [p.productId, p.reviewId]), [[
          open.lines[0]!.productId,
          null
        ], [open.lines[1]!.productId, null]])
        const due = Kernel.Timestamp.fromMillis(Kernel.Timestamp.toMillis(t1) + 3 * DAY)
        assert.deepStrictEqual(stepsOf(survey!), [["wait", due, null, null], ["email", due, null, null], [
          "wait",
          null,
          null,
          null
        ], ["email", null, null, null]])
        assert.strictEqual(survey!.expiresAt, Kernel.Timestamp.fromMillis(Kernel.Timestamp.toMillis(t1) + 90 * DAY))
        assert.match(survey!.url, /\/r\/[A-Za-z0-9_-]{22,64}$/)
        // The link's token alone names the survey's organization (the hosted page /r/{token} names none).
        const token = survey!.url.split("/r/")[1]!
        assert.deepStrictEqual(
          yield* Surveys.SurveyRepository.use((r) => r.organizationOfToken(token)),
          Option.some(org.id)
        )
        assert.isTrue(
          Option.isNone(yield* Surveys.SurveyRepository.use((r) => r.organizationOfToken(`${token.slice(1)}x`)))
        )
        assert.isTrue(t1 > t0)
        // Delivered later, or fulfilled again: still one survey.
        yield* as(Orders.Orders.use((o) => o.update(open.id, { status: "delivered" })))
        assert.strictEqual((yield* surveysOf(open.id)).length, 1)
        // Created with a status past the trigger: enrolled; in bulk too; imported: never.
        const delivered = yield* order({ status: "delivered" })
        assert.strictEqual((yield* surveysOf(delivered.id)).length, 1)
        const bulk = yield* order({ orderNumber: "B-1" })
        assert.deepStrictEqual(
          yield* as(Orders.Orders.use((o) => o.bulkUpdate({ search: "B-1" }, { status: "fulfilled" }))),
          {
            count: 1
          }
        )
        assert.strictEqual((yield* surveysOf(bulk.id)).length, 1)
        const imported = yield* as(
          Orders.Orders.use((o) =>
            o.import({
              data: [{
                externalId: "h-1",
                customer: "history@example.com",
                lines: [{ productSlug: "mug" }],
                status: "delivered"
              }]
            })
          )
        )
        assert.strictEqual((yield* surveysOf(imported.imported[0]!.id)).length, 0)
        assert.strictEqual((yield* surveysOf()).length, 3)
      }))

    it.effect("a whole flow: the request when due, the reminder after it, each exactly once, none before its time", () =>
      Effect.gen(function*() {
        const { order, org, surveysOf } = yield* shop("Whole flow")
        const mailer = makeRecordingMailer()
        const run = Surveys.runDueSurveySteps(settings("w1")).pipe(Effect.provide(mailer.layer))
        const ada = "ada.whole-flow@example.com"
        const placed = yield* order({
          status: "fulfilled",
          customer: { email: "Ada.Whole-Flow@Example.com", firstName: "Ada" }
        })
        const [afterEnrolment] = yield* surveysOf(placed.id)
        yield* run
        yield* TestClock.adjust(3 * DAY - 1_000)
        yield* run
        assert.deepStrictEqual(to(mailer, ada), [])
        yield* TestClock.adjust("1 second")
        yield* run
        // The guided setup's request, rendered: the customer's first name in the subject, both links in both parts.
        assert.deepStrictEqual(to(mailer, ada).map((m) => m.subject), ["How was your order, Ada?"])
        const unsubscribeUrl = yield* Catalog.Unsubscribes.use((u) => u.urlFor(org.id, placed.customerId))
        const [request] = to(mailer, ada)
        for (const part of [request!.html!, request!.text]) {
          assert.include(part, afterEnrolment!.url)
          assert.include(part, unsubscribeUrl)
        }
        assert.strictEqual(request!.headers?.["List-Unsubscribe"], `<${unsubscribeUrl}>`)
        const t3 = yield* Kernel.Timestamp.now
        const [afterRequest] = yield* surveysOf(placed.id)
        assert.strictEqual(afterRequest!.status, "sent")
        const reminderDue = Kernel.Timestamp.fromMillis(Kernel.Timestamp.toMillis(t3) + 2 * DAY)
        assert.deepStrictEqual(stepsOf(afterRequest!), [
          ["wait", t3, t3, null],
          ["email", t3, t3, "sent"],
          ["wait", reminderDue, null, null],
          ["email", reminderDue, null, null]
        ])
        yield* TestClock.adjust(2 * DAY - 1_000)
        yield* run
        assert.strictEqual(to(mailer, ada).length, 1)
        yield* TestClock.adjust("1 second")
        yield* run
        assert.deepStrictEqual(to(mailer, ada).map((m) => m.subject), [
          "How was your order, Ada?",
          "A quick reminder: how was your order?"
        ])
        const [done] = yield* surveysOf(placed.id)
        assert.deepStrictEqual(done!.steps.map((s) => s.outcome), [null, "sent", null, "sent"])
        assert.isTrue(done!.steps.every((s) => s.doneAt !== null))
        yield* TestClock.adjust(30 * DAY)
        yield* run
        assert.strictEqual(to(mailer, ada).length, 2)
      }))

    it.effect("the email: every §17 variable rendered into the subject, the HTML and the text part, with List-Unsubscribe", () =>
      Effect.gen(function*() {
        const { as, order, org, surveysOf, templates } = yield* shop("Rendered Shop", { delayDays: 0 })
        yield* as(Catalog.Catalogs.use((c) =>
          c.createProduct({
            slug: "lamp",
            title: "Lamp <Deluxe>",
            url: "https://shop.example.com/lamp",
            imageUrl: "https://cdn.example.com/lamp.png"
          })
        ))
        yield* as(Setup.ReviewAutomation.use((a) =>
          a.updateEmailTemplate(templates[0]!.id, {
            subject: "Your {{ products.first.title }} from {{ organization.name }}",
            body: [
              "<p>Hi {{ customer.firstName }} {{ customer.lastName }} ({{ customer.email }})</p>",
              "<p>Order {{ order.orderNumber }} of {{ order.placedAt }}</p>",
              "{% for p in products %}<p>{{ p.title }} {{ p.url }} {{ p.imageUrl }}</p>{% endfor %}",
              "<p><a href=\"{{ survey.url }}\">Review</a> <a href=\"{{ unsubscribe.url }}\">Unsubscribe</a></p>"
            ].join("\n")
          })
        ))
        const mailer = makeRecordingMailer()
        const email = "grace.rendered@example.com"
        const placed = yield* order({
          status: "fulfilled",
          orderNumber: "R-1001",
          placedAt: "2026-01-02T03:04:05.000Z",
          customer: { email, firstName: "Grace", lastName: "Hopper" },
          lines: [{ productSlug: "lamp" }, { productSlug: "mug" }]
        })
        const [survey] = yield* surveysOf(placed.id)
        yield* Surveys.runDueSurveySteps(settings("w")).pipe(Effect.provide(mailer.layer))
        const unsubscribeUrl = yield* Catalog.Unsubscribes.use((u) => u.urlFor(org.id, placed.customerId))
        assert.match(unsubscribeUrl, /\/u\/[A-Za-z0-9_-]{22,64}$/)
        const [message, ...more] = to(mailer, email)
        assert.strictEqual(more.length, 0)
        assert.strictEqual(message!.subject, "Your Lamp <Deluxe> from Rendered Shop")
        assert.deepStrictEqual(message!.headers, {
          "List-Unsubscribe": `<${unsubscribeUrl}>`,
          "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"
        })
        const html = message!.html!
        assert.include(html, "Hi Grace Hopper (grace.rendered@example.com)")
        assert.include(html, "Order R-1001 of 2026-01-02T03:04:05.000Z")
        // HTML output is escaped; the products in the order's line order.
        assert.include(html, "Lamp &lt;Deluxe&gt; https://shop.example.com/lamp https://cdn.example.com/lamp.png")
        assert.isBelow(html.indexOf("Lamp"), html.indexOf("Mug"))
        assert.include(html, `<a href="${survey!.url}">Review</a>`)
        assert.include(html, `<a href="${unsubscribeUrl}">Unsubscribe</a>`)
        assert.include(message!.text, "Lamp <Deluxe> https://shop.example.com/lamp")
        assert.include(message!.text, `Review (${survey!.url})`)
        assert.include(message!.text, `Unsubscribe (${unsubscribeUrl})`)
        assert.deepStrictEqual((yield* surveysOf(placed.id))[0]!.steps.map((s) => s.outcome), [
          null,
          "sent",
          null,
          null
        ])
      }))

    it.effect("a template that cannot render at send time fails its step with a reason, never retried; the rest go on", () =>
      Effect.gen(function*() {
        const { as, order, surveysOf, templates } = yield* shop("Render failure", { delayDays: 0 })
        // Parses (so it is saved), but its range is past the renderer's memory bound.
        yield* as(
          Setup.ReviewAutomation.use((a) =>
            a.updateEmailTemplate(templates[0]!.id, { body: "{% for i in (1..5000000) %}x{% endfor %}" })
          )
        )
        const mailer = makeRecordingMailer()
        const run = Surveys.runDueSurveySteps(settings("w")).pipe(Effect.provide(mailer.layer))
        const emails = ["one.render@example.com", "two.render@example.com"]
        const placed = yield* Effect.forEach(emails, (email) => order({ status: "fulfilled", customer: { email } }))
        yield* run
        assert.deepStrictEqual(to(mailer, ...emails), [])
        for (const o of placed) {
          const [survey] = yield* surveysOf(o.id)
          assert.deepStrictEqual(survey!.steps.map((s) => s.outcome), [null, "failed", null, null])
          assert.strictEqual(survey!.status, "scheduled")
          assert.match(survey!.reason!, /^an email could not be rendered: The body could not be rendered: /)
        }
        // Never retried; the reminder (another template) goes out when due.
        yield* run
        assert.deepStrictEqual(to(mailer, ...emails), [])
        yield* TestClock.adjust(2 * DAY)
        yield* run
        assert.deepStrictEqual(to(mailer, ...emails).map((m) => m.to).sort(), emails)
        for (const o of placed) {
          const [survey] = yield* surveysOf(o.id)
          assert.deepStrictEqual(survey!.steps.map((s) => s.outcome), [null, "failed", null, "sent"])
        }
      }))

    it.effect("concurrent workers share the due steps: each email goes out once", () =>
      Effect.gen(function*() {
        const { order, org } = yield* shop("Concurrent workers", { delayDays: 0 })
        const mailer = makeRecordingMailer()
        const placed: Array<Orders.Order> = []
        for (let i = 0; i < 12; i++) placed.push(yield* order({ status: "fulfilled" }))
        const workers = ["a", "b", "c"].map((w) =>
          Surveys.runDueSurveySteps({ ...settings(w), batchSize: 2 }).pipe(Effect.provide(mailer.layer))
        )
        const emails = yield* Effect.forEach(placed, (o) =>
          Effect.map(Catalog.Catalogs.use((c) => asDashboard(org.id)(c.getCustomer(o.customerId))), (c) => c.email))
        yield* Effect.all(workers, { concurrency: "unbounded" })
        assert.strictEqual(to(mailer, ...emails).length, 12)
        yield* TestClock.adjust(2 * DAY)
        yield* Effect.all(workers, { concurrency: "unbounded" })
        const mine = to(mailer, ...emails)
        const byRecipient = new Map<string, number>()
        for (const m of mine) {
          byRecipient.set(`${m.to}/${m.subject}`, (byRecipient.get(`${m.to}/${m.subject}`) ?? 0) + 1)
        }
        assert.strictEqual(mine.length, 24)
        assert.strictEqual(byRecipient.size, 24)
      }))

    it.effect("organizations take turns: another organization's backlog never fills a claim while a step of its own is due", () =>
      Effect.gen(function*() {
        const aggressor = yield* shop("Backlog", { delayDays: 0 })
        const victim = yield* shop("Neighbour", { delayDays: 0 })
        const tag = Math.random().toString(36).slice(2)
        const backlog: Array<string> = []
        for (let i = 0; i < 12; i++) {
          backlog.push(`backlog-${i}.${tag}@example.com`)
          yield* aggressor.order({ status: "fulfilled", customer: { email: backlog[i]! } })
        }
        // Due after every step of the backlog: first come first served would send the whole backlog first.
        yield* TestClock.adjust("1 second")
        const neighbour = `neighbour.${tag}@example.com`
        yield* victim.order({ status: "fulfilled", customer: { email: neighbour } })
        const mailer = makeRecordingMailer()
        const batchSize = 4
        yield* Surveys.runDueSurveySteps({ ...settings("turns"), batchSize }).pipe(Effect.provide(mailer.layer))
        const sent = to(mailer, neighbour, ...backlog)
        assert.strictEqual(sent.length, 13)
        assert.isBelow(sent.findIndex((m) => m.to === neighbour), batchSize, sent.map((m) => m.to).join(", "))
      }))

    it.effect("a worker that died: the step it was sending is failed, never resent; the ones it had not started run", () =>
      Effect.gen(function*() {
        const { order, surveysOf } = yield* shop("Crash", { delayDays: 0 })
        const mailer = makeRecordingMailer()
        const email = "crash@example.com"
        const placed = yield* order({ status: "fulfilled", customer: { email } })
        const waiting = yield* order({ status: "fulfilled", customer: { email: "crash-waiting@example.com" } })
        // The dead worker had claimed both and was sending the first when it died.
        const claimed = yield* Surveys.SurveyRepository.use((r) =>
          Effect.flatMap(Kernel.Timestamp.now, (at) => r.claimDue("dead-worker", at, 250))
        )
        const sending = claimed.find((c) => c.survey.orderId === placed.id)!
        assert.isDefined(claimed.find((c) => c.survey.orderId === waiting.id))
        const markSending = (workerId: string, surveys: ReadonlyArray<Surveys.ClaimedSurvey>) =>
          Surveys.SurveyRepository.use((r) =>
            Effect.flatMap(
              Kernel.Timestamp.now,
              (at) =>
                r.markSending(workerId, at, surveys.map((c) => ({ organizationId: c.organizationId, id: c.survey.id })))
            )
          )
        assert.deepStrictEqual([...yield* markSending("dead-worker", [sending])], [sending.survey.id])
        // Not another worker's claims, not even one of them.
        assert.deepStrictEqual([...yield* markSending("another", claimed)], [])
        // Another worker does not take the claimed step, and early recovery leaves it alone.
        yield* Surveys.runDueSurveySteps(settings("alive")).pipe(Effect.provide(mailer.layer))
        assert.deepStrictEqual(to(mailer, email), [])
        yield* Surveys.failInterruptedSurveySteps(settings("alive"))
        assert.isNull((yield* surveysOf(placed.id))[0]!.steps[1]!.outcome)
        yield* TestClock.adjust("11 minutes")
        assert.isAtLeast(yield* Surveys.failInterruptedSurveySteps(settings("alive")), 2)
        const [recovered] = yield* surveysOf(placed.id)
        assert.strictEqual(recovered!.steps[1]!.outcome, "failed")
        assert.isNotNull(recovered!.steps[3]!.dueAt)
        // The one it had not started is due again, and goes out now.
        yield* Surveys.runDueSurveySteps(settings("alive")).pipe(Effect.provide(mailer.layer))
        assert.strictEqual(to(mailer, "crash-waiting@example.com").length, 1)
        assert.strictEqual((yield* surveysOf(waiting.id))[0]!.steps[1]!.outcome, "sent")
        yield* TestClock.adjust(2 * DAY)
        yield* Surveys.runDueSurveySteps(settings("alive")).pipe(Effect.provide(mailer.layer))
        assert.strictEqual(to(mailer, email).length, 1)
        assert.deepStrictEqual((yield* surveysOf(placed.id))[0]!.steps.map((s) => s.outcome), [
          null,
          "failed",
          null,
          "sent"
        ])
      }))

    it.effect("a claim is as old as its last sign of life: a send started late in a long batch is not recovered", () =>
      Effect.gen(function*() {
        const { order, surveysOf } = yield* shop("Long batch", { delayDays: 0 })
        const placed = yield* order({ status: "fulfilled", customer: { email: "long-batch@example.com" } })
        const claimed = yield* Surveys.SurveyRepository.use((r) =>
          Effect.flatMap(Kernel.Timestamp.now, (at) => r.claimDue("slow-worker", at, 250))
        )
        const mine = claimed.find((c) => c.survey.orderId === placed.id)!
        yield* TestClock.adjust("11 minutes")
        // The worker reaches it only now: its send started a moment ago, so recovery leaves it to that worker.
        assert.deepStrictEqual(
          [
            ...yield* Surveys.SurveyRepository.use((r) =>
              Effect.flatMap(
                Kernel.Timestamp.now,
                (at) => r.markSending("slow-worker", at, [{ organizationId: mine.organizationId, id: mine.survey.id }])
              )
            )
          ],
          [mine.survey.id]
        )
        yield* Surveys.failInterruptedSurveySteps(settings("recovery"))
        assert.isNull((yield* surveysOf(placed.id))[0]!.steps[1]!.outcome)
        // Still claimed: it is stale only once its send is older than the recovery period.
        const later = (ms: number) =>
          Effect.map(Kernel.Timestamp.now, (at) => Kernel.Timestamp.fromMillis(Kernel.Timestamp.toMillis(at) + ms))
        assert.isUndefined(
          (yield* Surveys.SurveyRepository.use((r) => Effect.flatMap(later(0), r.staleClaims))).find((s) =>
            s.id === mine.survey.id
          )
        )
        assert.isDefined(
          (yield* Surveys.SurveyRepository.use((r) => Effect.flatMap(later(1), r.staleClaims))).find((s) =>
            s.id === mine.survey.id
          )
        )
      }))

    it.effect("skip and cancel: opted-out customers are skipped; cancelled or deleted orders, flows off or deleted cancel", () =>
      Effect.gen(function*() {
        const { as, flow, order, surveysOf } = yield* shop("Rules", { delayDays: 1 })
        const mailer = makeRecordingMailer()
        const optedOut = yield* as(
          Catalog.Catalogs.use((c) => c.createCustomer({ email: "no@example.com", emailOptOut: true }))
        )
        const quiet = yield* order({ customerId: optedOut.id, status: "fulfilled" })
        const [skipped] = yield* surveysOf(quiet.id)
        assert.deepStrictEqual([skipped!.status, skipped!.reason], ["skipped", "the customer opted out of email"])
        assert.isTrue(skipped!.steps.every((s) => s.outcome === "skipped"))
        const cancelled = yield* order({ status: "fulfilled" })
        yield* as(Orders.Orders.use((o) => o.update(cancelled.id, { status: "cancelled" })))
        const [c1] = yield* surveysOf(cancelled.id)
        assert.deepStrictEqual([c1!.status, c1!.reason], ["cancelled", "the order was cancelled"])
        assert.isTrue(c1!.steps.every((s) => s.outcome === "cancelled"))
        const deleted = yield* order({ status: "fulfilled" })
        yield* as(Orders.Orders.use((o) => o.delete(deleted.id)))
        assert.strictEqual((yield* surveysOf(deleted.id))[0]!.reason, "the order was deleted")
        const pending = yield* order({ status: "fulfilled" })
        yield* as(Setup.ReviewAutomation.use((a) => a.updateSurveyFlow(flow.id, { isActive: false })))
        assert.deepStrictEqual((yield* surveysOf(pending.id)).map((s) => [s.status, s.reason]), [[
          "cancelled",
          "the survey flow was switched off"
        ]])
        // Switched off: new triggers enroll nothing; nothing at all is sent.
        const later = yield* order({ status: "fulfilled" })
        assert.deepStrictEqual(yield* surveysOf(later.id), [])
        yield* TestClock.adjust(10 * DAY)
        yield* Surveys.runDueSurveySteps(settings("w")).pipe(Effect.provide(mailer.layer))
        const customers = yield* Effect.forEach(
          [quiet, cancelled, deleted, pending, later],
          (o) => Effect.map(as(Catalog.Catalogs.use((c) => c.getCustomer(o.customerId))), (c) => c.email)
        )
        assert.deepStrictEqual(to(mailer, ...customers), [])
        yield* as(Setup.ReviewAutomation.use((a) => a.updateSurveyFlow(flow.id, { isActive: true })))
        const active = yield* order({ status: "fulfilled" })
        yield* as(Setup.ReviewAutomation.use((a) => a.deleteSurveyFlow(flow.id)))
        assert.strictEqual((yield* surveysOf(active.id))[0]!.reason, "the survey flow was deleted")
      }))

    it.effect("conditions: a filter document over the order, checked when the flow is saved", () =>
      Effect.gen(function*() {
        const { as, flow, order, surveysOf } = yield* shop("Conditions")
        const bad = yield* Effect.flip(
          as(Setup.ReviewAutomation.use((a) => a.updateSurveyFlow(flow.id, { condition: "{\"total\":{\"$gt\":1}}" })))
        )
        assert.strictEqual(bad._tag, "InvalidRequest")
        assert.deepStrictEqual((bad as { issues: ReadonlyArray<{ path: string }> }).issues.map((i) => i.path), [
          "body.condition.total"
        ])
        const notJson = yield* Effect.flip(
          as(Setup.ReviewAutomation.use((a) => a.updateSurveyFlow(flow.id, { condition: "web only" })))
        )
        assert.strictEqual(notJson._tag, "InvalidRequest")
        assert.strictEqual((yield* as(Setup.ReviewAutomation.use((a) => a.getSurveyFlow(flow.id)))).condition, "")
        yield* as(
          Setup.ReviewAutomation.use((a) =>
            a.updateSurveyFlow(flow.id, {
              condition: JSON.stringify({ "metadata.channel": "web", "customer.email": { $ne: "staff@example.com" } })
            })
          )
        )
        const web = yield* order({ status: "fulfilled", metadata: { channel: "web" } })
        const pos = yield* order({ status: "fulfilled", metadata: { channel: "pos" } })
        const staff = yield* order({
          status: "fulfilled",
          metadata: { channel: "web" },
          customer: { email: "staff@example.com" }
        })
        assert.strictEqual((yield* surveysOf(web.id)).length, 1)
        assert.strictEqual((yield* surveysOf(pos.id)).length, 0)
        assert.strictEqual((yield* surveysOf(staff.id)).length, 0)
      }))

    it.effect("bulk enrolment: each moved order enrolled once, by its trigger and the condition, as a PATCH enrolls it", () =>
      Effect.gen(function*() {
        const { as, flow, order, surveysOf } = yield* shop("Bulk enrolment")
        // The condition reads the order as it is after the move (no longer open).
        yield* as(
          Setup.ReviewAutomation.use((a) =>
            a.updateSurveyFlow(flow.id, {
              condition: JSON.stringify({ "metadata.channel": "web", status: { $ne: "open" } })
            })
          )
        )
        const optedOut = yield* as(
          Catalog.Catalogs.use((c) => c.createCustomer({ email: "bulk-no@example.com", emailOptOut: true }))
        )
        const web = { orderNumber: "BE-1", metadata: { channel: "web" } }
        const open = yield* order(web)
        const twin = yield* order(web)
        const quiet = yield* order({ ...web, customerId: optedOut.id })
        const pos = yield* order({ orderNumber: "BE-2", metadata: { channel: "pos" } })
        const already = yield* order({ ...web, status: "fulfilled" })
        const single = yield* order({ orderNumber: "X-1", metadata: { channel: "web" } })
        const [first] = yield* surveysOf(already.id)
        yield* TestClock.adjust("1 hour")
        // open → delivered passes `order.fulfilled` (the flow's trigger); fulfilled → delivered does not.
        const moved = yield* as(Orders.Orders.use((o) => o.bulkUpdate({ search: "BE-" }, { status: "delivered" })))
        assert.deepStrictEqual(moved, { count: 5 })
        yield* as(Orders.Orders.use((o) => o.update(single.id, { status: "delivered" })))
        const [reference] = yield* surveysOf(single.id)
        const [bulk, ...more] = yield* surveysOf(open.id)
        assert.strictEqual(more.length, 0)
        const shape = (survey: Surveys.Survey) => ({ ...survey, id: "", orderId: "", customerId: "", url: "" })
        assert.deepStrictEqual(shape(bulk!), shape(reference!))
        assert.deepStrictEqual([bulk!.orderId, bulk!.customerId], [open.id, open.customerId])
        assert.deepStrictEqual(bulk!.products.map((p) => p.productId), [
          open.lines[0]!.productId,
          open.lines[1]!.productId
        ])
        assert.match(bulk!.url, /\/r\/[A-Za-z0-9_-]{22,64}$/)
        assert.notStrictEqual(bulk!.url, reference!.url)
        const [second] = yield* surveysOf(twin.id)
        assert.notStrictEqual(second!.url, bulk!.url)
        const [skipped] = yield* surveysOf(quiet.id)
        assert.deepStrictEqual([skipped!.status, skipped!.reason], ["skipped", "the customer opted out of email"])
        assert.deepStrictEqual(yield* surveysOf(pos.id), [])
        assert.deepStrictEqual(yield* surveysOf(already.id), [first!])
        // Moved again (cancelled): no new survey, the pending ones cancelled.
        yield* as(Orders.Orders.use((o) => o.bulkUpdate({ search: "BE-" }, { status: "cancelled" })))
        const [cancelled, ...none] = yield* surveysOf(open.id)
        assert.deepStrictEqual([cancelled!.id, cancelled!.status, none.length], [bulk!.id, "cancelled", 0])
      }))

    it.effect("manual requests, deletion (survey.deleted, nothing more sent), the list and its filters", () =>
      Effect.gen(function*() {
        const { as, flow, org, order, surveysOf } = yield* shop("Manual", { delayDays: 0 })
        const mailer = makeRecordingMailer()
        const placed = yield* order()
        const manual = yield* as(Surveys.Surveys.use((s) => s.create({ orderId: placed.id })))
        assert.deepStrictEqual([manual.flowId, manual.orderId, manual.status], [flow.id, placed.id, "scheduled"])
        assert.deepStrictEqual(yield* as(Surveys.Surveys.use((s) => s.get(manual.id))), manual)
        const again = yield* Effect.flip(
          as(Surveys.Surveys.use((s) => s.create({ orderId: placed.id, flowId: flow.id })))
        )
        assert.strictEqual(again._tag, "Conflict")
        const missing = yield* Effect.flip(
          as(
            Surveys.Surveys.use((s) => s.create({ orderId: "00000000-0000-4000-8000-0000000000ff" as Kernel.OrderId }))
          )
        )
        assert.strictEqual(missing._tag, "InvalidRequest")
        const other = yield* order({ status: "fulfilled" })
        const [auto] = yield* surveysOf(other.id)
        const deleted = yield* as(Surveys.Surveys.use((s) => s.delete(auto!.id)))
        assert.strictEqual(deleted.id, auto!.id)
        assert.strictEqual((yield* events(org.id)).at(-1)?.event, "survey.deleted")
        assert.strictEqual((yield* Effect.flip(as(Surveys.Surveys.use((s) => s.get(auto!.id)))))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(as(Surveys.Surveys.use((s) => s.delete(auto!.id)))))._tag, "NotFound")
        yield* Surveys.runDueSurveySteps(settings("w")).pipe(Effect.provide(mailer.layer))
        assert.deepStrictEqual(
          mailer.calls.map((m) => m.id.split("/")[0]).filter((id) => id === manual.id || id === auto!.id),
          [manual.id]
        )
        const list = (params: Record<string, string>) =>
          Effect.map(as(Surveys.Surveys.use((s) => s.list(params))), (p) => p.data.map((s) => s.id))
        assert.deepStrictEqual(yield* list({ filter: JSON.stringify({ status: "sent" }) }), [manual.id])
        assert.deepStrictEqual(yield* list({ filter: JSON.stringify({ flowId: flow.id, "order.id": placed.id }) }), [
          manual.id
        ])
        assert.deepStrictEqual(yield* list({ search: "nobody-here" }), [])
        for (const params of [{ sort: "dueAt" }, { filter: "{\"orderId\":1}" }]) {
          assert.strictEqual(
            (yield* Effect.flip(as(Surveys.Surveys.use((s) => s.list(params)))))._tag,
            "InvalidRequest"
          )
        }
        const stranger = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Stranger" }))
        assert.strictEqual(
          (yield* Effect.flip(
            asDashboard(stranger.id)(Surveys.Surveys.use((s) => s.get(manual.id as Kernel.SurveyId)))
          ))._tag,
          "NotFound"
        )
      }))

    it.effect(
      "property: for random flows, orders and event sequences, N workers send each due email exactly once, none after a cancellation",
      () =>
        Effect.gen(function*() {
          type Event =
            | { readonly _tag: "create"; readonly order: number; readonly status: "open" | "fulfilled" | "delivered" }
            | {
              readonly _tag: "move"
              readonly order: number
              readonly status: "fulfilled" | "delivered" | "cancelled"
            }
            | { readonly _tag: "delete"; readonly order: number }
            | { readonly _tag: "advance"; readonly hours: number }
            | { readonly _tag: "run" }
            | { readonly _tag: "crash" }
          const arbStep = fc.oneof(
            fc.constant({ type: "email" as const }),
            fc.integer({ min: 0, max: 72 }).map((hours) => ({ type: "wait" as const, waitSeconds: hours * 3_600 }))
          )
          const arbCreate = fc.record({
            _tag: fc.constant("create" as const),
            order: fc.nat(3),
            status: fc.constantFrom("open" as const, "fulfilled" as const, "delivered" as const)
          })
          const arbEvent: fc.Arbitrary<Event> = fc.oneof(
            arbCreate,
            fc.record({
              _tag: fc.constant("move" as const),
              order: fc.nat(3),
              status: fc.constantFrom("fulfilled" as const, "delivered" as const, "cancelled" as const)
            }),
            fc.record({ _tag: fc.constant("delete" as const), order: fc.nat(3) }),
            fc.record({ _tag: fc.constant("advance" as const), hours: fc.integer({ min: 1, max: 48 }) }),
            fc.constant({ _tag: "run" as const }),
            fc.constant({ _tag: "crash" as const })
          )
          const arbScenario = fc.record({
            steps: fc.array(arbStep, { minLength: 1, maxLength: 5 }),
            trigger: fc.constantFrom("order.created", "order.fulfilled", "order.delivered"),
            optOut: fc.boolean(),
            events: fc.tuple(
              fc.array(arbCreate, { minLength: 2, maxLength: 4 }),
              fc.array(arbEvent, { minLength: 5, maxLength: 25 })
            )
              .map(([creates, rest]): ReadonlyArray<Event> => [...creates, ...rest])
          })
          const scenarios = fc.sample(arbScenario, { seed: 20_261_128, numRuns: 5 })
          let sentInAll = 0
          let stoppedInAll = 0
          for (const [n, scenario] of scenarios.entries()) {
            const { as, flow, templates } = yield* shop(`Property ${n}`)
            const steps: Array<Setup.SurveyFlowStepWrite> = scenario.steps.map((step, position) =>
              step.type === "email"
                ? { type: "email", position, emailTemplateId: templates[0]!.id }
                : { type: "wait", position, waitSeconds: step.waitSeconds }
            )
            yield* as(
              Setup.ReviewAutomation.use((a) => a.updateSurveyFlow(flow.id, { steps, triggerEvent: scenario.trigger }))
            )
            const mailer = makeRecordingMailer()
            const email = (i: number) => `property-${n}-${i}@example.com`
            const customers = new Map<number, string>()
            const orders = new Map<number, Orders.Order>()
            /** Surveys of orders cancelled or deleted, and how many messages each had when it happened. */
            const stopped = new Map<string, number>()
            const messagesOf = (orderId: string) =>
              Effect.map(
                as(Surveys.Surveys.use((s) => s.list({ limit: 250, filter: JSON.stringify({ "order.id": orderId }) }))),
                (page) =>
                  page.data.map((survey) =>
                    [survey.id, mailer.calls.filter((m) => m.id.startsWith(`${survey.id}/`)).length] as const
                  )
              )
            const workers = ["w1", "w2", "w3"].map((w) =>
              Surveys.runDueSurveySteps({ ...settings(w), batchSize: 1 }).pipe(Effect.provide(mailer.layer))
            )
            // Then time runs on, a month per round, until every step of every survey had its turn (each step waits 72 h at most).
            const end = Array.from(
              { length: 4 },
              () => [{ _tag: "advance", hours: 24 * 30 } as const, { _tag: "run" } as const]
            ).flat()
            for (const event of [...scenario.events, ...end]) {
              switch (event._tag) {
                case "create": {
                  if (orders.has(event.order)) break
                  if (!customers.has(event.order)) {
                    const customer = yield* as(Catalog.Catalogs.use((c) =>
                      c.createCustomer({ email: email(event.order), emailOptOut: scenario.optOut && event.order === 0 })
                    ))
                    customers.set(event.order, customer.id)
                  }
                  orders.set(
                    event.order,
                    yield* as(Orders.Orders.use((o) =>
                      o.create({
                        customerId: customers.get(event.order)! as never,
                        lines: [{ productSlug: "mug" }],
                        status: event.status
                      })
                    ))
                  )
                  break
                }
                case "move": {
                  const order = orders.get(event.order)
                  if (order === undefined) {
                    break
                  }
                  const moved = yield* Effect.option(as(Orders.Orders.use((o) =>
                    o.update(order.id, { status: event.status })
                  )))
                  if (Option.isSome(moved)) {
                    orders.set(event.order, moved.value)
                  }
                  if (event.status === "cancelled") {
                    for (const [id, count] of yield* messagesOf(order.id)) {
                      stopped.set(id, count)
                    }
                  }
                  break
                }
                case "delete": {
                  const order = orders.get(event.order)
                  if (order === undefined) {
                    break
                  }
                  const before = yield* messagesOf(order.id)
                  yield* as(Orders.Orders.use((o) =>
                    o.delete(order.id)
                  ))
                  for (const [id, count] of before) stopped.set(id, count)
                  orders.delete(event.order)
                  break
                }
                case "advance":
                  yield* TestClock.adjust(event.hours * 3_600_000)
                  break
                case "run":
                  yield* Effect.all(workers, { concurrency: "unbounded" })
                  break
                case "crash": {
                  // A worker claims what is due, starts sending the first and dies: after the recovery period that one
                  // is failed (never sent), the others run again.
                  const claimed = yield* Surveys.SurveyRepository.use((r) =>
                    Effect.flatMap(Kernel.Timestamp.now, (at) => r.claimDue(`dead-${n}`, at, 2))
                  )
                  const first = claimed[0]
                  if (first !== undefined) {
                    yield* Surveys.SurveyRepository.use((r) =>
                      Effect.flatMap(
                        Kernel.Timestamp.now,
                        (at) =>
                          r.markSending(`dead-${n}`, at, [{
                            organizationId: first.organizationId,
                            id: first.survey.id
                          }])
                      )
                    )
                  }
                  yield* TestClock.adjust("11 minutes")
                  yield* Surveys.failInterruptedSurveySteps(settings("recovery"))
                  break
                }
              }
            }
            const ids = mailer.calls.map((m) => m.id)
            sentInAll += ids.length
            stoppedInAll += stopped.size
            assert.strictEqual(new Set(ids).size, ids.length, `scenario ${n}: a step was sent twice`)
            for (const [surveyId, count] of stopped) {
              assert.strictEqual(
                mailer.calls.filter((m) => m.id.startsWith(`${surveyId}/`)).length,
                count,
                `scenario ${n}: sent after cancellation`
              )
            }
            const surveys = (yield* as(Surveys.Surveys.use((s) => s.list({ limit: 250 })))).data
            for (const survey of surveys) {
              const sent = survey.steps.filter((s) => s.outcome === "sent").map((s) => `${survey.id}/${s.position}`)
              const calls = ids.filter((id) => id.startsWith(`${survey.id}/`))
              // Everything due ran: no email step is left pending, and each sent one went out once.
              assert.isTrue(
                survey.steps.every((s) => s.type !== "email" || s.outcome !== null),
                `scenario ${n}: a due email was not sent`
              )
              assert.deepStrictEqual(calls.filter((id) => sent.includes(id)).sort(), sent.sort())
              if (survey.status === "skipped" && survey.reason === "the customer opted out of email") {
                assert.deepStrictEqual(calls, [])
              }
            }
          }
          // The scenarios do exercise sending and cancelling (the checks above are not vacuous).
          assert.isAbove(sentInAll, 0)
          assert.isAbove(stoppedInAll, 0)
        }),
      { timeout: 120_000 }
    )
  })
