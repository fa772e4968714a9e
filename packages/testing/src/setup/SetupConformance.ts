/**
 * Conformance of organization setup (spec "Setup state", "Area status", "States and transitions", "Organization
 * setup"; docs/DECISIONS.md §8) on every store: signals read from the records, decisions stored fill-only, the guided reviews
 * setup in one unit of work, and a property test of random histories through the real store.
 */
import { assert, layer } from "@effect/vitest"
import { Clock, type Context, Effect, Layer, Option, Schema } from "effect"
import * as fc from "fast-check"
import { CoreLayer, Kernel, Organizations, Setup, type StoreServices } from "@feedback/core"
import { asKey } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { atTime } from "../FixedClock.ts"
import { noSetupSignals as noSignals, untouchedArea as untouched } from "./SetupFixtures.ts"
import { seedProduct, seedReview, seedSite, StoreTestKit } from "../StoreTestKit.ts"

const { fromMillis } = Kernel.Timestamp

const config = {
  embedScriptUrl: "https://cdn.example.test/widgets/v1/embed.js",
  apiBaseUrl: "https://api.example.test"
}

/** The test configuration, which the `Setup` service captures when it is built. */
const TestSetupConfig = Layer.succeed(Setup.SetupConfig, config)

const T0 = Date.parse("2026-03-01T00:00:00.000Z")
const iso = (ms: number) => fromMillis(ms)

const settings: ReadonlyArray<Kernel.Permission> = ["settings:read", "settings:write"]

/** Runs a use-case as a secret key of `organizationId` holding `permissions` (by default the settings ones). */
const as = (organizationId: Kernel.OrganizationId, permissions: ReadonlyArray<Kernel.Permission> = settings) =>
  asKey(organizationId, permissions)

const getSetupState = Setup.Setup.use((s) => s.getState())
const get = (org: Kernel.OrganizationId, ms: number) => getSetupState.pipe(as(org), atTime(ms))
const patch = (org: Kernel.OrganizationId, area: Setup.Area, outcome: Setup.SetupOutcome, ms: number) =>
  Setup.Setup.use((s) => s.recordOutcome({ area, outcome })).pipe(as(org), atTime(ms))
const guided = (org: Kernel.OrganizationId, answers: Setup.ReviewsSetupAnswersInput, ms: number) =>
  Setup.Setup.use((s) => s.setupReviews(answers)).pipe(as(org), atTime(ms))

/** Deletes the oldest of the model's `records` from the store, which must have held it; none left, nothing. */
const removeOldest = <A, E, R>(records: Array<A>, remove: (record: A) => Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    const record = records.shift()
    if (record !== undefined) assert.isTrue(yield* remove(record))
  })

const newOrganization = (name: string) =>
  Organizations.Organizations.use((o) => o.createOrganization({ name })).pipe(atTime(T0))
const storedDecisions = (org: Kernel.OrganizationId) => Setup.SetupRepository.use((r) => r.decisions(org))
const signalsOf = (org: Kernel.OrganizationId) => Setup.SetupRepository.use((r) => r.signals(org))

// -----------------------------------------------------------------------------------------------------------------
// Random histories through the real store
// -----------------------------------------------------------------------------------------------------------------

const addKinds = [
  "site",
  "publishableKey",
  "integration",
  "product",
  "review",
  "loyaltyProgram",
  "loyaltyProgramOnSite",
  "wishlist"
] as const
const removeKinds = [
  "site",
  "publishableKey",
  "integration",
  "product",
  "review",
  "loyaltyProgram",
  "wishlist"
] as const

type Op =
  | { readonly _tag: "Add"; readonly kind: (typeof addKinds)[number] }
  | { readonly _tag: "Remove"; readonly kind: (typeof removeKinds)[number] }
  | { readonly _tag: "SetupReviews" }
  | { readonly _tag: "Outcome"; readonly area: Setup.Area; readonly outcome: Setup.SetupOutcome }
  | { readonly _tag: "Get" }

const arbOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...addKinds).map((kind): Op => ({ _tag: "Add", kind })) },
  { weight: 3, arbitrary: fc.constantFrom(...removeKinds).map((kind): Op => ({ _tag: "Remove", kind })) },
  { weight: 1, arbitrary: fc.constant<Op>({ _tag: "SetupReviews" }) },
  {
    weight: 5,
    arbitrary: fc.record({ area: fc.constantFrom(...Setup.areas), outcome: fc.constantFrom(...Setup.setupOutcomes) })
      .map(({ area, outcome }): Op => ({ _tag: "Outcome", area, outcome }))
  },
  { weight: 2, arbitrary: fc.constant<Op>({ _tag: "Get" }) }
)

/** What the organization holds, as the test created it. */
interface Model {
  sites: Array<Kernel.SiteId>
  keys: Array<{ readonly id: Kernel.PublishableKeyId; readonly key: string }>
  integrations: Array<Kernel.IntegrationId>
  products: Array<Kernel.ProductId>
  reviews: Array<{ readonly id: Kernel.ReviewId; readonly productId: Kernel.ProductId }>
  programs: Array<{ readonly id: Kernel.LoyaltyProgramId; readonly siteId: Kernel.SiteId | null }>
  wishlists: Array<Kernel.WishlistId>
  activeFlows: number
  decisions: Setup.SetupDecisions
  previous: Setup.SetupState | undefined
}

const modelSignals = (m: Model): Setup.SetupSignals => ({
  hasSite: m.sites.length > 0,
  hasPublishableKey: m.keys.length > 0,
  hasIntegration: m.integrations.length > 0,
  hasProducts: m.products.length > 0,
  hasActiveSurveyFlow: m.activeFlows > 0,
  hasReview: m.reviews.length > 0,
  hasLoyaltyProgram: m.programs.length > 0,
  loyaltyProgramOnSite: m.programs.some((p) => p.siteId !== null && m.sites.includes(p.siteId)),
  hasWishlist: m.wishlists.length > 0
})

/** A site id that no site has: a program attached to it is not on a site. */
const danglingSiteId = "00000000-0000-4000-8000-0000000000d5" as Kernel.SiteId

type RunServices = StoreServices | Kernel.IdGenerator | StoreTestKit | Setup.Setup | Organizations.Organizations

const runHistory = (ops: ReadonlyArray<Op>): Effect.Effect<void, unknown, RunServices> =>
  Effect.gen(function*() {
    const storefront = yield* Organizations.StorefrontRecordRepository
    const seed = yield* StoreTestKit
    const org = (yield* newOrganization("History")).id
    const m: Model = {
      sites: [],
      keys: [],
      integrations: [],
      products: [],
      reviews: [],
      programs: [],
      wishlists: [],
      activeFlows: 0,
      decisions: Setup.emptySetupDecisions,
      previous: undefined
    }

    /** Checks a store answer against the rules applied to the model, and the invariants against the last answer. */
    const check = (answer: Setup.SetupState, ms: number) =>
      Effect.gen(function*() {
        const expected = Setup.resolveSetup({
          signals: modelSignals(m),
          decisions: m.decisions,
          publishableKey: m.keys.at(-1)?.key ?? null,
          embedScriptUrl: config.embedScriptUrl,
          apiBaseUrl: config.apiBaseUrl
        }, iso(ms))
        assert.deepStrictEqual(answer, expected.state)
        m.decisions = expected.decisions
        assert.deepStrictEqual(yield* storedDecisions(org), m.decisions, "stored decisions")
        const previous = m.previous
        if (previous !== undefined) {
          for (const area of Setup.areas) {
            // needsSetup never returns to true; no timestamp is ever cleared or moved.
            if (!previous.areas[area].needsSetup) assert.isFalse(answer.areas[area].needsSetup, `${area} needsSetup`)
            for (const field of Object.values(Setup.outcomeField)) {
              if (previous.areas[area][field] !== null) {
                assert.strictEqual(answer.areas[area][field], previous.areas[area][field], `${area}.${field}`)
              }
            }
          }
        }
        m.previous = answer
      })

    for (const [step, op] of ops.entries()) {
      const ms = T0 + (step + 1) * 1_000
      const at = atTime(ms)
      switch (op._tag) {
        case "Add": {
          switch (op.kind) {
            case "site":
              m.sites.push((yield* seedSite(org).pipe(at)).id)
              break
            case "publishableKey": {
              const k = yield* Organizations.Organizations.use((o) => o.createPublishableKey(org)).pipe(at)
              m.keys.push({ id: k.id, key: k.key })
              break
            }
            case "integration":
              m.integrations.push(
                (yield* Organizations.Organizations.use((o) => o.createIntegration(org, "shopify")).pipe(at)).id
              )
              break
            case "product":
              m.products.push((yield* seedProduct(org).pipe(at)).id)
              break
            case "review": {
              if (m.products.length === 0) m.products.push((yield* seedProduct(org).pipe(at)).id)
              const productId = m.products.at(-1)!
              m.reviews.push({ id: (yield* seedReview(org, { productId }).pipe(at)).id, productId })
              break
            }
            case "loyaltyProgram":
              m.programs.push({
                id: (yield* Organizations.Organizations.use((o) =>
                  o.createLoyaltyProgram(org, { status: "draft" })
                ).pipe(at)).id,
                siteId: null
              })
              break
            case "loyaltyProgramOnSite": {
              const siteId = m.sites.at(-1) ?? danglingSiteId
              const program = yield* Organizations.Organizations.use((o) =>
                o.createLoyaltyProgram(org, { status: "live", siteId })
              )
                .pipe(at)
              m.programs.push({ id: program.id, siteId })
              break
            }
            case "wishlist":
              m.wishlists.push((yield* Organizations.Organizations.use((o) => o.createWishlist(org, {})).pipe(at)).id)
              break
          }
          break
        }
        case "Remove": {
          switch (op.kind) {
            case "site":
              yield* removeOldest(m.sites, (id) => seed.deleteSite(org, id))
              break
            case "publishableKey":
              yield* removeOldest(m.keys, (k) => storefront.deletePublishableKey(org, k.id))
              break
            case "integration":
              yield* removeOldest(m.integrations, (id) => storefront.deleteIntegration(org, id))
              break
            case "product": {
              const i = m.products.findIndex((p) => !m.reviews.some((r) => r.productId === p))
              if (i >= 0) {
                assert.isTrue(yield* seed.deleteProduct(org, m.products[i]!))
                m.products.splice(i, 1)
              }
              break
            }
            case "review":
              yield* removeOldest(m.reviews, (r) => seed.deleteReview(org, r.id))
              break
            case "loyaltyProgram":
              yield* removeOldest(m.programs, (p) => storefront.deleteLoyaltyProgram(org, p.id))
              break
            case "wishlist":
              yield* removeOldest(m.wishlists, (id) => storefront.deleteWishlist(org, id))
              break
          }
          break
        }
        case "SetupReviews": {
          // Once per organization while its flow exists (no op deletes flows here): a repeat changes nothing.
          if (m.activeFlows > 0) {
            assert.strictEqual((yield* Effect.flip(guided(org, {}, ms)))._tag, "Conflict")
            yield* check(yield* get(org, ms), ms)
            break
          }
          const result = yield* guided(org, {}, ms)
          m.activeFlows++
          yield* check(result.data, ms)
          break
        }
        case "Get": {
          yield* check(yield* get(org, ms), ms)
          break
        }
        case "Outcome": {
          // Observe first, so that any difference the PATCH makes is the outcome's alone.
          const before = yield* get(org, ms)
          yield* check(before, ms)
          m.decisions = Setup.decide(m.decisions, op.area, op.outcome, iso(ms))
          const after = yield* patch(org, op.area, op.outcome, ms)
          yield* check(after, ms)
          // Areas are independent, and the outcome stamps its own field only.
          for (const area of Setup.areas) {
            if (area !== op.area) assert.deepStrictEqual(after.areas[area], before.areas[area], `${area} untouched`)
          }
          const own = Setup.outcomeField[op.outcome]
          for (const field of Object.values(Setup.outcomeField)) {
            if (field !== own) assert.strictEqual(after.areas[op.area][field], before.areas[op.area][field])
          }
          assert.strictEqual(after.areas[op.area][own], before.areas[op.area][own] ?? iso(ms))
          break
        }
      }
    }
    // Whatever happened, one last read agrees with the model.
    yield* check(yield* get(org, T0 + (ops.length + 1) * 1_000), T0 + (ops.length + 1) * 1_000)
  })

// -----------------------------------------------------------------------------------------------------------------
// The suite
// -----------------------------------------------------------------------------------------------------------------

export const setupConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provide(TestSetupConfig), Layer.provideMerge(store)), { timeout: 120_000 })(
    "organization setup",
    (it) => {
      it.effect("a new organization: every signal false, every area needs setup, nothing stored", () =>
        Effect.gen(function*() {
          const org = yield* newOrganization("New")
          const state = yield* get(org.id, T0 + 1_000)
          assert.deepStrictEqual(state, {
            signals: noSignals,
            areas: { reviews: untouched, loyalty: untouched, wishlists: untouched, site: untouched },
            publishableKey: null,
            embedScriptUrl: config.embedScriptUrl,
            apiBaseUrl: config.apiBaseUrl
          })
          assert.deepStrictEqual(yield* storedDecisions(org.id), Setup.emptySetupDecisions)
        }))

      it.effect("each signal reads its own records, and only the organization's", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Signals")).id
          const other = (yield* newOrganization("Other")).id
          // Everything in another organization changes nothing here.
          const otherSite = yield* seedSite(other)
          yield* Organizations.Organizations.use((o) => o.createPublishableKey(other))
          yield* Organizations.Organizations.use((o) => o.createIntegration(other, "shopify"))
          yield* seedReview(other, { productId: (yield* seedProduct(other)).id })
          yield* Organizations.Organizations.use((o) =>
            o.createLoyaltyProgram(other, { status: "live", siteId: otherSite.id })
          )
          yield* Organizations.Organizations.use((o) => o.createWishlist(other, {}))
          yield* guided(other, {}, T0)
          assert.deepStrictEqual(yield* signalsOf(org), noSignals)

          let expected = noSignals
          const expectAfter = (on: Partial<Setup.SetupSignals>) =>
            Effect.gen(function*() {
              expected = { ...expected, ...on }
              assert.deepStrictEqual(yield* signalsOf(org), expected)
            })
          // A program on another organization's site is not on a site of this one.
          yield* Organizations.Organizations.use((o) =>
            o.createLoyaltyProgram(org, { status: "draft", siteId: otherSite.id })
          )
          yield* expectAfter({ hasLoyaltyProgram: true })
          const site = yield* seedSite(org)
          yield* expectAfter({ hasSite: true })
          yield* Organizations.Organizations.use((o) =>
            o.createLoyaltyProgram(org, { status: "draft", siteId: site.id })
          )
          yield* expectAfter({ loyaltyProgramOnSite: true })
          yield* Organizations.Organizations.use((o) => o.createPublishableKey(org))
          yield* expectAfter({ hasPublishableKey: true })
          yield* Organizations.Organizations.use((o) => o.createIntegration(org, "shopify"))
          yield* expectAfter({ hasIntegration: true })
          const product = yield* seedProduct(org)
          yield* expectAfter({ hasProducts: true })
          yield* seedReview(org, { productId: product.id })
          yield* expectAfter({ hasReview: true })
          yield* Organizations.Organizations.use((o) => o.createWishlist(org, {}))
          yield* expectAfter({ hasWishlist: true })
          yield* guided(org, {}, T0)
          yield* expectAfter({ hasActiveSurveyFlow: true })
          // Deleting the site detaches the program from any site.
          assert.isTrue(yield* StoreTestKit.use((s) => s.deleteSite(org, site.id)))
          yield* expectAfter({ hasSite: false, loyaltyProgramOnSite: false })
        }))

      it.effect("a site and a publishable key configure the site area; completedAt is kept when they are deleted", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Site")).id
          const site = yield* seedSite(org)
          assert.isTrue((yield* get(org, T0 + 1_000)).areas.site.needsSetup, "a site alone does not configure it")
          const key = yield* Organizations.Organizations.use((o) => o.createPublishableKey(org)).pipe(
            atTime(T0 + 1_500)
          )
          const first = yield* get(org, T0 + 2_000)
          assert.deepStrictEqual(first.areas.site, {
            ...untouched,
            completedAt: iso(T0 + 2_000),
            configured: true,
            needsSetup: false
          })
          assert.isTrue(first.signals.hasSite && first.signals.hasPublishableKey)
          assert.strictEqual(first.publishableKey, key.key)
          assert.deepStrictEqual(first.areas.reviews, untouched)
          assert.strictEqual(
            (yield* storedDecisions(org)).site.completedAt,
            iso(T0 + 2_000),
            "persisted, not only shown"
          )
          // The newest key is reported.
          const newer = yield* Organizations.Organizations.use((o) => o.createPublishableKey(org)).pipe(
            atTime(T0 + 2_500)
          )
          const second = yield* get(org, T0 + 3_000)
          assert.strictEqual(second.areas.site.completedAt, iso(T0 + 2_000))
          assert.strictEqual(second.publishableKey, newer.key)

          const storefront = yield* Organizations.StorefrontRecordRepository
          assert.isTrue(yield* storefront.deletePublishableKey(org, key.id))
          assert.isTrue(yield* storefront.deletePublishableKey(org, newer.id))
          assert.isTrue(yield* StoreTestKit.use((s) => s.deleteSite(org, site.id)))
          const third = yield* get(org, T0 + 4_000)
          assert.deepStrictEqual(third.areas.site, {
            ...untouched,
            completedAt: iso(T0 + 2_000),
            configured: false,
            needsSetup: false
          })
          assert.isFalse(third.signals.hasSite || third.signals.hasPublishableKey)
          assert.strictEqual(third.publishableKey, null)
        }))

      it.effect("dismissing an area twice keeps the first dismissedAt; other areas stay untouched", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Dismiss")).id
          const first = yield* patch(org, "reviews", "dismissed", T0 + 1_000)
          assert.deepStrictEqual(first.areas.reviews, { ...untouched, dismissedAt: iso(T0 + 1_000), needsSetup: false })
          const second = yield* patch(org, "reviews", "dismissed", T0 + 2_000)
          assert.strictEqual(second.areas.reviews.dismissedAt, iso(T0 + 1_000))
          const read = yield* get(org, T0 + 3_000)
          assert.deepStrictEqual(read.areas.reviews, first.areas.reviews)
          for (const area of ["loyalty", "wishlists", "site"] as const) {
            assert.deepStrictEqual(read.areas[area], untouched)
          }
          assert.deepStrictEqual((yield* storedDecisions(org)).loyalty, Setup.emptySetupDecisions.loyalty)
        }))

      it.effect("widget banner and hint outcomes do not settle an area; completed does, once", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Widgets")).id
          const banner = yield* patch(org, "loyalty", "widgetBannerDismissed", T0 + 1_000)
          assert.deepStrictEqual(banner.areas.loyalty, { ...untouched, widgetBannerDismissedAt: iso(T0 + 1_000) })
          const hint = yield* patch(org, "loyalty", "widgetHintDismissed", T0 + 2_000)
          assert.deepStrictEqual(hint.areas.loyalty, {
            ...untouched,
            widgetBannerDismissedAt: iso(T0 + 1_000),
            widgetHintDismissedAt: iso(T0 + 2_000)
          })
          const done = yield* patch(org, "loyalty", "completed", T0 + 3_000)
          assert.strictEqual(done.areas.loyalty.completedAt, iso(T0 + 3_000))
          assert.isFalse(done.areas.loyalty.needsSetup)
          const again = yield* patch(org, "loyalty", "completed", T0 + 4_000)
          assert.deepStrictEqual(again.areas.loyalty, done.areas.loyalty)
          assert.deepStrictEqual(again.areas.reviews, untouched)
        }))

      it.effect("guided reviews setup with a reminder: two templates, a four-step active flow, events, preference", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Guided")).id
          const at = T0 + 1_000
          const result = yield* guided(org, {
            triggerEvent: "order.delivered",
            delayDays: 3,
            reminder: true,
            reminderDelayDays: 5,
            template: "photo",
            autoPublish: true,
            autoPublishMinRating: 5
          }, at)
          const { emailTemplates, surveyFlow } = result
          assert.deepStrictEqual(emailTemplates.map((t) => t.type), ["reviewRequest", "reviewReminder"])
          for (const t of emailTemplates) {
            assert.strictEqual(t.createdAt, iso(at))
            assert.include(t.body.toLowerCase(), "photo")
          }
          assert.include(surveyFlow, { isActive: true, triggerEvent: "order.delivered", condition: "" })
          assert.deepStrictEqual(
            surveyFlow.steps.map(({ id: _, ...s }) => s),
            [
              { type: "wait", position: 0, emailTemplateId: null, url: null, waitSeconds: 3 * 86_400 },
              { type: "email", position: 1, emailTemplateId: emailTemplates[0]!.id, url: null, waitSeconds: null },
              { type: "wait", position: 2, emailTemplateId: null, url: null, waitSeconds: 5 * 86_400 },
              { type: "email", position: 3, emailTemplateId: emailTemplates[1]!.id, url: null, waitSeconds: null }
            ]
          )
          assert.strictEqual(new Set(surveyFlow.steps.map((s) => s.id)).size, 4)
          // The state after it: the reviews area is configured and recorded as completed; the others are untouched.
          assert.isTrue(result.data.signals.hasActiveSurveyFlow)
          assert.deepStrictEqual(result.data.areas.reviews, {
            ...untouched,
            completedAt: iso(at),
            configured: true,
            needsSetup: false
          })
          for (const area of ["loyalty", "wishlists", "site"] as const) {
            assert.deepStrictEqual(result.data.areas[area], untouched)
          }
          // Stored as answered.
          const repo = yield* Setup.ReviewAutomationRepository
          // Created in the same instant, so listed in id order.
          const byId = (a: { readonly id: string }, b: { readonly id: string }) => (a.id < b.id ? -1 : 1)
          assert.deepStrictEqual(yield* repo.listEmailTemplates(org), [...emailTemplates].sort(byId))
          assert.deepStrictEqual(yield* repo.listSurveyFlows(org), [surveyFlow])
          assert.deepStrictEqual(
            yield* repo.reviewSettings(org),
            Option.some({ autoPublish: true, autoPublishMinRating: 5, autoPublishVerifiedOnly: false })
          )
          assert.strictEqual((yield* storedDecisions(org)).reviews.completedAt, iso(at))
          // One event per template, then the flow, each carrying the record in the API's shape.
          const events = yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))
          assert.deepStrictEqual(events.map((e) => e.event), [
            "emailTemplate.created",
            "emailTemplate.created",
            "surveyFlow.created"
          ])
          assert.deepStrictEqual(events.map((e) => e.data), [
            Schema.encodeSync(Setup.EmailTemplate)(emailTemplates[0]!),
            Schema.encodeSync(Setup.EmailTemplate)(emailTemplates[1]!),
            Schema.encodeSync(Setup.SurveyFlow)(surveyFlow)
          ])
          assert.strictEqual((yield* get(org, at + 1_000)).areas.reviews.completedAt, iso(at))
        }))

      it.effect("guided reviews setup with default answers: one template and a wait → email flow", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Defaults")).id
          const { emailTemplates, surveyFlow } = yield* guided(org, {}, T0 + 1_000)
          assert.strictEqual(emailTemplates.length, 1)
          assert.strictEqual(surveyFlow.triggerEvent, "order.fulfilled")
          assert.deepStrictEqual(surveyFlow.steps.map((s) => [s.type, s.waitSeconds]), [["wait", 14 * 86_400], [
            "email",
            null
          ]])
          assert.deepStrictEqual(
            yield* Setup.ReviewAutomationRepository.use((r) => r.reviewSettings(org)),
            Option.some({ autoPublish: false, autoPublishMinRating: 4, autoPublishVerifiedOnly: false })
          )
        }))

      it.effect("guided setup once: a repeat is a Conflict naming the flow and writes nothing; after a delete it runs again", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Guided twice")).id
          const repo = yield* Setup.ReviewAutomationRepository
          const first = yield* guided(org, { reminder: true }, T0)
          const eventsBefore = (yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))).length
          const again = yield* Effect.flip(guided(org, {}, T0 + 1_000))
          assert.strictEqual(again._tag, "Conflict")
          assert.include(again.message, first.surveyFlow.id)
          assert.deepStrictEqual((yield* repo.listSurveyFlows(org)).map((f) => f.id), [first.surveyFlow.id])
          assert.strictEqual((yield* repo.listEmailTemplates(org)).length, 2)
          assert.strictEqual(
            (yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org))).length,
            eventsBefore,
            "no event"
          )
          // Another organization's guided setup is its own.
          const other = (yield* newOrganization("Guided other")).id
          yield* guided(other, {}, T0)
          // Once the flow is gone, the setup may run again.
          yield* Setup.ReviewAutomation.use((a) => a.deleteSurveyFlow(first.surveyFlow.id)).pipe(
            as(org),
            atTime(T0 + 2_000)
          )
          const rerun = yield* guided(org, {}, T0 + 3_000)
          assert.deepStrictEqual((yield* repo.listSurveyFlows(org)).map((f) => f.id), [rerun.surveyFlow.id])
        }))

      it.effect("concurrent guided setups: exactly one creates a flow, the others are Conflicts", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Guided racing")).id
          const exits = yield* Effect.all(
            Array.from({ length: 4 }, () => Effect.exit(guided(org, {}, T0))),
            { concurrency: "unbounded" }
          )
          const created = exits.filter((e) => e._tag === "Success")
          assert.strictEqual(created.length, 1, JSON.stringify(exits.map((e) => e._tag)))
          for (const e of exits) {
            if (e._tag === "Failure") assert.include(JSON.stringify(e.cause), "Conflict")
          }
          const flows = yield* Setup.ReviewAutomationRepository.use((r) => r.listSurveyFlows(org))
          assert.strictEqual(flows.length, 1)
          assert.strictEqual((yield* Setup.ReviewAutomationRepository.use((r) => r.listEmailTemplates(org))).length, 1)
        }))

      it.effect("invalid answers are InvalidRequest naming the field, and create nothing", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Invalid")).id
          const cases: ReadonlyArray<readonly [unknown, string]> = [
            [{ delayDays: 366 }, "data.delayDays"],
            [{ delayDays: -1 }, "data.delayDays"],
            [{ reminder: true, reminderDelayDays: 0 }, "data.reminderDelayDays"],
            [{ autoPublishMinRating: 6 }, "data.autoPublishMinRating"],
            [{ triggerEvent: "order.paid" }, "data.triggerEvent"],
            [{ delaydays: 3 }, "data.delaydays"]
          ]
          for (const [answers, path] of cases) {
            const error = yield* Effect.flip(guided(org, answers as Setup.ReviewsSetupAnswersInput, T0 + 1_000))
            assert.strictEqual(error._tag, "InvalidRequest")
            if (error._tag === "InvalidRequest") assert.deepStrictEqual(error.issues.map((i) => i.path), [path])
          }
          const repo = yield* Setup.ReviewAutomationRepository
          assert.deepStrictEqual(yield* repo.listEmailTemplates(org), [])
          assert.deepStrictEqual(yield* repo.listSurveyFlows(org), [])
          assert.isTrue(Option.isNone(yield* repo.reviewSettings(org)))
          assert.deepStrictEqual(yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org)), [])
          assert.deepStrictEqual(yield* storedDecisions(org), Setup.emptySetupDecisions)
          assert.isFalse((yield* signalsOf(org)).hasActiveSurveyFlow)
        }))

      it.effect("a guided setup that fails part-way leaves no template, flow, preference, event or decision", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Rollback")).id
          const repo = yield* Setup.ReviewAutomationRepository
          const failingFlowInsert = Setup.ReviewAutomationRepository.of({
            ...repo,
            insertSurveyFlow: () => Effect.die(new Error("storage failed"))
          })
          const exit = yield* Effect.exit(
            guided(org, { reminder: true }, T0 + 1_000).pipe(Effect.provide(
              Setup.Setup.layer.pipe(
                Layer.provide([Layer.succeed(Setup.ReviewAutomationRepository, failingFlowInsert), TestSetupConfig])
              ),
              { local: true }
            ))
          )
          assert.isTrue(exit._tag === "Failure")
          assert.deepStrictEqual(yield* repo.listEmailTemplates(org), [])
          assert.deepStrictEqual(yield* repo.listSurveyFlows(org), [])
          assert.isTrue(Option.isNone(yield* repo.reviewSettings(org)))
          assert.deepStrictEqual(yield* Kernel.EventOutbox.use((o) => o.listForOrganization(org)), [])
          assert.deepStrictEqual(yield* storedDecisions(org), Setup.emptySetupDecisions)
        }))

      it.effect("each operation needs its permission", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Permissions")).id
          const readOnly = as(org, ["settings:read"])
          const noSettings = as(org, ["reviews:read", "reviews:write"])
          const denied: ReadonlyArray<
            readonly [
              Effect.Effect<unknown, Kernel.Forbidden | Kernel.InvalidRequest | Kernel.Conflict, RunServices>,
              Kernel.Permission
            ]
          > = [
            [getSetupState.pipe(noSettings), "settings:read"],
            [
              Setup.Setup.use((s) => s.recordOutcome({ area: "site", outcome: "dismissed" })).pipe(readOnly),
              "settings:write"
            ],
            [Setup.Setup.use((s) => s.setupReviews({})).pipe(readOnly), "settings:write"]
          ]
          for (const [effect, permission] of denied) {
            const error = yield* Effect.flip(effect)
            assert.deepInclude(error, { _tag: "Forbidden", permission })
          }
          assert.deepStrictEqual(yield* storedDecisions(org), Setup.emptySetupDecisions)
          assert.deepStrictEqual(yield* Setup.ReviewAutomationRepository.use((r) => r.listSurveyFlows(org)), [])
          assert.deepStrictEqual((yield* getSetupState.pipe(readOnly, atTime(T0))).areas.site, untouched)
        }))

      it.effect("concurrent reads record one completedAt, and every answer shows that one", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Concurrent reads")).id
          yield* Organizations.Organizations.use((o) => o.createWishlist(org, {}))
          const times = Array.from({ length: 12 }, (_, i) => T0 + (i + 1) * 1_000)
          const answers = yield* Effect.forEach(times, (ms) => get(org, ms), { concurrency: "unbounded" })
          const stored = (yield* storedDecisions(org)).wishlists.completedAt
          assert.include(times.map(iso), stored)
          for (const a of answers) assert.strictEqual(a.areas.wishlists.completedAt, stored)
          assert.strictEqual((yield* get(org, T0 + 60_000)).areas.wishlists.completedAt, stored)
        }))

      it.effect("concurrent outcomes on different areas are all kept", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Concurrent outcomes")).id
          yield* Effect.forEach(
            Setup.areas.map((area, i) => [area, T0 + (i + 1) * 1_000] as const),
            ([area, ms]) => patch(org, area, "dismissed", ms),
            { concurrency: "unbounded", discard: true }
          )
          const state = yield* get(org, T0 + 10_000)
          Setup.areas.forEach((area, i) => assert.strictEqual(state.areas[area].dismissedAt, iso(T0 + (i + 1) * 1_000)))
        }))

      it.effect("property: random histories of records and outcomes through the store follow the rules", () =>
        Effect.gen(function*() {
          // fast-check drives the histories through Promises, so each is run with the suite's services.
          yield* Effect.contextWith((services: Context.Context<RunServices>) =>
            Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(
                  fc.array(arbOp, { minLength: 1, maxLength: 15 }),
                  (ops) => Effect.runPromiseWith(services)(runHistory(ops))
                ),
                { numRuns: 30 }
              )
            )
          )
        }))
    }
  )

/** The helpers the automation suite shares (`AutomationConformance.ts`). */
export { as, atTime, get as getSetupAt, guided, newOrganization, T0, TestSetupConfig }
