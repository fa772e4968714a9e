/**
 * Conformance of the editable review automation (docs/DECISIONS.md §13) on every store: newest-first pages with
 * sealed cursors, partial updates with their events (and none for a change that changes nothing), the in-use
 * conflict, flows whose steps are validated and replaced wholesale, and `hasActiveSurveyFlow` following `isActive`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { CoreLayer, Kernel, Setup } from "@feedback/core"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { as, atTime, getSetupAt, guided, newOrganization, T0, TestSetupConfig } from "./SetupConformance.ts"
import { eventsOf } from "../TestTransactions.ts"

const automation = Setup.ReviewAutomation
const newEvents = (org: Kernel.OrganizationId, before: number) => Effect.map(eventsOf(org), (all) => all.slice(before))

/** An organization after the guided setup with a reminder: two templates and one flow that sends both. */
const withSetup = (name: string) =>
  Effect.gen(function*() {
    const org = (yield* newOrganization(name)).id
    const { emailTemplates, surveyFlow } = yield* guided(org, { reminder: true }, T0 + 1_000)
    return { org, request: emailTemplates[0]!, reminder: emailTemplates[1]!, flow: surveyFlow }
  })

export const automationConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provide(TestSetupConfig), Layer.provideMerge(store)), { timeout: 120_000 })(
    "editable review automation",
    (it) => {
      it.effect("templates and flows list newest first, page with cursors bound to their list, and read one by one", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Lists")).id
          // The guided setup runs again only once its flow is no longer active: each run but the last is deactivated.
          for (let i = 0; i < 3; i++) {
            const run = yield* guided(org, { reminder: i === 0 }, T0 + 1_000 * (i + 1))
            if (i < 2) {
              yield* automation.use((a) => a.updateSurveyFlow(run.surveyFlow.id, { isActive: false })).pipe(
                as(org),
                atTime(T0 + 1_000 * (i + 1))
              )
            }
          }
          const first = yield* automation.use((a) => a.listEmailTemplates({ limit: 2 })).pipe(as(org))
          assert.strictEqual(first.data.length, 2)
          assert.isNotNull(first.nextCursor)
          const rest = yield* automation.use((a) => a.listEmailTemplates({ limit: 2, cursor: first.nextCursor! })).pipe(
            as(org)
          )
          const all = [...first.data, ...rest.data]
          assert.strictEqual(all.length, 4)
          assert.isNull(rest.nextCursor)
          for (let i = 1; i < all.length; i++) {
            assert.isTrue(
              all[i - 1]!.createdAt > all[i]!.createdAt ||
                (all[i - 1]!.createdAt === all[i]!.createdAt && all[i - 1]!.id > all[i]!.id)
            )
          }
          const flows = yield* automation.use((a) => a.listSurveyFlows({})).pipe(as(org))
          assert.deepStrictEqual(
            flows.data.map((f) => f.createdAt),
            [T0 + 3_000, T0 + 2_000, T0 + 1_000].map((ms) => new Date(ms).toISOString())
          )
          assert.strictEqual(flows.data[2]!.steps.length, 4)
          assert.deepStrictEqual(
            yield* automation.use((a) => a.getSurveyFlow(flows.data[0]!.id)).pipe(as(org)),
            flows.data[0]
          )
          assert.deepStrictEqual(yield* automation.use((a) => a.getEmailTemplate(all[0]!.id)).pipe(as(org)), all[0])
          // A template cursor is not a flow cursor; a bad limit is named.
          const wrongList = yield* Effect.flip(
            automation.use((a) => a.listSurveyFlows({ cursor: first.nextCursor! })).pipe(as(org))
          )
          assert.deepInclude(wrongList, { _tag: "InvalidRequest" })
          const badLimit = yield* Effect.flip(automation.use((a) => a.listEmailTemplates({ limit: 251 })).pipe(as(org)))
          assert.deepStrictEqual(badLimit._tag === "InvalidRequest" ? badLimit.issues.map((i) => i.path) : [], [
            "limit"
          ])
        }))

      it.effect("another organization's records are not found, and its lists are its own", () =>
        Effect.gen(function*() {
          const { request, flow } = yield* withSetup("Owner")
          const other = (yield* newOrganization("Other")).id
          assert.deepInclude(
            yield* Effect.flip(automation.use((a) => a.getEmailTemplate(request.id)).pipe(as(other))),
            { _tag: "NotFound" }
          )
          assert.deepInclude(yield* Effect.flip(automation.use((a) => a.deleteSurveyFlow(flow.id)).pipe(as(other))), {
            _tag: "NotFound"
          })
          assert.deepInclude(
            yield* Effect.flip(automation.use((a) => a.updateEmailTemplate(request.id, { name: "x" })).pipe(as(other))),
            { _tag: "NotFound" }
          )
          assert.deepStrictEqual((yield* automation.use((a) => a.listSurveyFlows({})).pipe(as(other))).data, [])
        }))

      it.effect("a template edit changes only sent fields and fires emailTemplate.updated once; an edit that changes nothing fires nothing", () =>
        Effect.gen(function*() {
          const { org, request } = yield* withSetup("Edit template")
          const before = (yield* eventsOf(org)).length
          const updated = yield* automation.use((a) => a.updateEmailTemplate(request.id, { subject: "New subject" }))
            .pipe(as(org), atTime(T0 + 5_000))
          assert.deepStrictEqual(updated, {
            ...request,
            subject: "New subject",
            updatedAt: new Date(T0 + 5_000).toISOString() as typeof request.updatedAt
          })
          assert.deepStrictEqual(yield* automation.use((a) => a.getEmailTemplate(request.id)).pipe(as(org)), updated)
          const same = yield* automation.use((a) =>
            a.updateEmailTemplate(request.id, { subject: "New subject", name: request.name })
          ).pipe(as(org), atTime(T0 + 6_000))
          assert.deepStrictEqual(same, updated)
          const events = yield* newEvents(org, before)
          assert.deepStrictEqual(events.map((e) => [e.event, e.data]), [[
            "emailTemplate.updated",
            Schema.encodeSync(Setup.EmailTemplate)(updated)
          ]])
        }))

      it.effect("a subject or body that is not a valid Liquid template is InvalidRequest naming the field; nothing changes", () =>
        Effect.gen(function*() {
          const { org, request } = yield* withSetup("Liquid")
          const before = (yield* eventsOf(org)).length
          const cases: ReadonlyArray<
            readonly [{ subject?: string; body?: string; name?: string }, ReadonlyArray<string>]
          > = [
            [{ subject: "Hi {{ customer.firstName" }, ["body.subject"]],
            [{ body: "{% if x %}never closed", name: "never" }, ["body.body"]],
            [{ body: "{% include 'other' %}" }, ["body.body"]],
            [{ subject: "{% render 'x' %}", body: "{% for %}" }, ["body.subject", "body.body"]]
          ]
          for (const [patch, paths] of cases) {
            const error = yield* Effect.flip(
              automation.use((a) => a.updateEmailTemplate(request.id, patch)).pipe(as(org))
            )
            assert.deepStrictEqual(error._tag === "InvalidRequest" ? error.issues.map((i) => i.path) : error._tag, [
              ...paths
            ])
          }
          assert.deepStrictEqual(yield* automation.use((a) => a.getEmailTemplate(request.id)).pipe(as(org)), request)
          assert.strictEqual((yield* eventsOf(org)).length, before)
          const valid = yield* automation.use((a) =>
            a.updateEmailTemplate(request.id, { body: "<p>{% for p in products %}{{ p.title }}{% endfor %}</p>" })
          ).pipe(as(org), atTime(T0 + 5_000))
          assert.strictEqual(valid.body, "<p>{% for p in products %}{{ p.title }}{% endfor %}</p>")
        }))

      it.effect("a template a flow sends cannot be deleted (Conflict, nothing changes); once no step sends it, it can", () =>
        Effect.gen(function*() {
          const { org, request, reminder, flow } = yield* withSetup("In use")
          const before = (yield* eventsOf(org)).length
          const conflict = yield* Effect.flip(automation.use((a) => a.deleteEmailTemplate(reminder.id)).pipe(as(org)))
          assert.deepInclude(conflict, { _tag: "Conflict" })
          assert.include(conflict._tag === "Conflict" ? conflict.message : "", flow.id)
          assert.deepStrictEqual(yield* automation.use((a) => a.getEmailTemplate(reminder.id)).pipe(as(org)), reminder)
          assert.strictEqual((yield* eventsOf(org)).length, before)
          // Drop the reminder's steps: the template is free.
          const trimmed = yield* automation.use((a) =>
            a.updateSurveyFlow(flow.id, {
              steps: [{ type: "wait", position: 0, waitSeconds: 3_600 }, {
                type: "email",
                position: 1,
                emailTemplateId: request.id
              }]
            })
          ).pipe(as(org), atTime(T0 + 5_000))
          assert.deepStrictEqual(trimmed.steps.map(({ id: _, ...s }) => s), [
            { type: "wait", position: 0, emailTemplateId: null, url: null, waitSeconds: 3_600 },
            { type: "email", position: 1, emailTemplateId: request.id, url: null, waitSeconds: null }
          ])
          const deleted = yield* automation.use((a) => a.deleteEmailTemplate(reminder.id)).pipe(as(org))
          assert.deepStrictEqual(deleted, reminder)
          assert.deepInclude(yield* Effect.flip(automation.use((a) => a.getEmailTemplate(reminder.id)).pipe(as(org))), {
            _tag: "NotFound"
          })
          const events = yield* newEvents(org, before)
          assert.deepStrictEqual(events.map((e) => e.event), ["surveyFlow.updated", "emailTemplate.deleted"])
          assert.deepStrictEqual(events[0]!.data, Schema.encodeSync(Setup.SurveyFlow)(trimmed))
          assert.deepStrictEqual(events[1]!.data, Schema.encodeSync(Setup.EmailTemplate)(reminder))
        }))

      it.effect("switching the only flow off turns hasActiveSurveyFlow off, and on again", () =>
        Effect.gen(function*() {
          const { org, flow } = yield* withSetup("Switch")
          assert.isTrue((yield* getSetupAt(org, T0 + 2_000)).signals.hasActiveSurveyFlow)
          const off = yield* automation.use((a) => a.updateSurveyFlow(flow.id, { isActive: false })).pipe(
            as(org),
            atTime(T0 + 3_000)
          )
          assert.deepStrictEqual({ ...off, updatedAt: flow.updatedAt }, { ...flow, isActive: false })
          assert.isFalse((yield* getSetupAt(org, T0 + 4_000)).signals.hasActiveSurveyFlow)
          yield* automation.use((a) =>
            a.updateSurveyFlow(flow.id, { isActive: true, name: "Renamed", metadata: { team: "cx" } })
          ).pipe(as(org), atTime(T0 + 5_000))
          const state = yield* getSetupAt(org, T0 + 6_000)
          assert.isTrue(state.signals.hasActiveSurveyFlow)
          assert.deepInclude(yield* automation.use((a) => a.getSurveyFlow(flow.id)).pipe(as(org)), {
            name: "Renamed",
            isActive: true,
            metadata: { team: "cx" }
          })
        }))

      it.effect("deleting a flow returns it, fires surveyFlow.deleted, and turns the signal off", () =>
        Effect.gen(function*() {
          const { org, flow } = yield* withSetup("Delete flow")
          const before = (yield* eventsOf(org)).length
          assert.deepStrictEqual(yield* automation.use((a) => a.deleteSurveyFlow(flow.id)).pipe(as(org)), flow)
          assert.deepInclude(yield* Effect.flip(automation.use((a) => a.getSurveyFlow(flow.id)).pipe(as(org))), {
            _tag: "NotFound"
          })
          assert.isFalse((yield* getSetupAt(org, T0 + 5_000)).signals.hasActiveSurveyFlow)
          assert.deepStrictEqual((yield* newEvents(org, before)).map((e) => [e.event, e.data]), [[
            "surveyFlow.deleted",
            Schema.encodeSync(Setup.SurveyFlow)(flow)
          ]])
        }))

      it.effect("replacing a flow that was deleted since it was read changes nothing and says so (PATCH racing DELETE)", () =>
        Effect.gen(function*() {
          const { org, flow } = yield* withSetup("Raced flow")
          yield* automation.use((a) => a.deleteSurveyFlow(flow.id)).pipe(as(org))
          // What a PATCH that read the flow before the DELETE committed writes next: the flow with its steps. The
          // use-case then answers 404 and records no `surveyFlow.updated` after the `surveyFlow.deleted`.
          const replaced = yield* Setup.ReviewAutomationRepository.use((r) =>
            r.replaceSurveyFlow({ ...flow, name: "Too late", organizationId: org })
          )
          assert.isFalse(replaced)
          assert.isTrue(
            Option.isNone(yield* Setup.ReviewAutomationRepository.use((r) => r.findSurveyFlow(org, flow.id)))
          )
        }))

      it.effect("malformed steps and templates of another organization are InvalidRequest naming the field; nothing changes", () =>
        Effect.gen(function*() {
          const { org, flow } = yield* withSetup("Steps")
          const other = yield* withSetup("Foreign")
          const before = (yield* eventsOf(org)).length
          const cases: ReadonlyArray<
            readonly [
              Parameters<Setup.ReviewAutomation["Service"]["updateSurveyFlow"]>[1]["steps"],
              ReadonlyArray<string>
            ]
          > = [
            [[{ type: "wait", position: 0 }], ["body.steps[0].waitSeconds"]],
            [[{ type: "email", position: 0, waitSeconds: 5 }], [
              "body.steps[0].emailTemplateId",
              "body.steps[0].waitSeconds"
            ]],
            [[{ type: "wait", position: 1, waitSeconds: 5 }, { type: "wait", position: 1, waitSeconds: 6 }], [
              "body.steps[1].position"
            ]],
            [[{ type: "email", position: 0, emailTemplateId: other.request.id }], ["body.steps[0].emailTemplateId"]],
            [[{
              type: "email",
              position: 0,
              emailTemplateId: "00000000-0000-4000-8000-000000000999" as Kernel.EmailTemplateId
            }], ["body.steps[0].emailTemplateId"]]
          ]
          for (const [steps, paths] of cases) {
            const error = yield* Effect.flip(
              automation.use((a) => a.updateSurveyFlow(flow.id, { steps: steps!, name: "never" })).pipe(as(org))
            )
            assert.deepStrictEqual(
              error._tag === "InvalidRequest" ? error.issues.map((i) => i.path).sort() : error._tag,
              [...paths].sort()
            )
          }
          assert.deepStrictEqual(yield* automation.use((a) => a.getSurveyFlow(flow.id)).pipe(as(org)), flow)
          assert.strictEqual((yield* eventsOf(org)).length, before)
        }))

      it.effect("review settings read the defaults until changed; a patch changes only sent fields and is kept per organization", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Settings")).id
          const other = (yield* newOrganization("Other settings")).id
          assert.deepStrictEqual(
            yield* automation.use((a) => a.getReviewSettings()).pipe(as(org)),
            Setup.defaultReviewSettings
          )
          const patched = yield* automation.use((a) =>
            a.updateReviewSettings({ autoPublish: true, autoPublishVerifiedOnly: true })
          ).pipe(as(org), atTime(T0 + 1_000))
          assert.deepStrictEqual(patched, { autoPublish: true, autoPublishMinRating: 4, autoPublishVerifiedOnly: true })
          const rating = yield* automation.use((a) => a.updateReviewSettings({ autoPublishMinRating: 2 })).pipe(
            as(org),
            atTime(T0 + 2_000)
          )
          assert.deepStrictEqual(rating, { autoPublish: true, autoPublishMinRating: 2, autoPublishVerifiedOnly: true })
          assert.deepStrictEqual(yield* automation.use((a) => a.getReviewSettings()).pipe(as(org)), rating)
          assert.deepStrictEqual(yield* automation.use((a) => a.updateReviewSettings({})).pipe(as(org)), rating)
          // Another organization's settings are its own.
          assert.deepStrictEqual(
            yield* automation.use((a) => a.getReviewSettings()).pipe(as(other)),
            Setup.defaultReviewSettings
          )
          assert.isTrue(Option.isNone(yield* Setup.ReviewAutomationRepository.use((r) => r.reviewSettings(other))))
          // Review settings fire no event (the catalog has none for them).
          assert.deepStrictEqual(yield* eventsOf(org), [])
        }))

      it.effect("the guided setup writes autoPublish and autoPublishMinRating into the review settings and keeps autoPublishVerifiedOnly", () =>
        Effect.gen(function*() {
          const org = (yield* newOrganization("Setup settings")).id
          yield* automation.use((a) =>
            a.updateReviewSettings({ autoPublishVerifiedOnly: true, autoPublishMinRating: 1 })
          ).pipe(as(org), atTime(T0 + 500))
          const first = yield* guided(org, { autoPublish: true, autoPublishMinRating: 5 }, T0 + 1_000)
          assert.deepStrictEqual(
            yield* automation.use((a) => a.getReviewSettings()).pipe(as(org)),
            { autoPublish: true, autoPublishMinRating: 5, autoPublishVerifiedOnly: true }
          )
          // The guided setup runs again once its flow is no longer active.
          yield* automation.use((a) => a.updateSurveyFlow(first.surveyFlow.id, { isActive: false })).pipe(
            as(org),
            atTime(T0 + 1_500)
          )
          yield* guided(org, {}, T0 + 2_000)
          assert.deepStrictEqual(
            yield* automation.use((a) => a.getReviewSettings()).pipe(as(org)),
            { autoPublish: false, autoPublishMinRating: 4, autoPublishVerifiedOnly: true }
          )
        }))

      it.effect("reads need settings:read and changes settings:write", () =>
        Effect.gen(function*() {
          const { org, request, flow } = yield* withSetup("Permissions")
          const readOnly = as(org, ["settings:read"])
          const none = as(org, ["reviews:read"])
          for (
            const denied of [
              automation.use((a) => a.listEmailTemplates({})).pipe(none),
              automation.use((a) => a.getSurveyFlow(flow.id as Kernel.SurveyFlowId)).pipe(none),
              automation.use((a) => a.updateEmailTemplate(request.id, { name: "x" })).pipe(readOnly),
              automation.use((a) => a.deleteSurveyFlow(flow.id)).pipe(readOnly),
              automation.use((a) => a.getReviewSettings()).pipe(none),
              automation.use((a) => a.updateReviewSettings({ autoPublish: true })).pipe(readOnly)
            ]
          ) {
            assert.deepInclude(
              yield* Effect.flip(denied as Effect.Effect<unknown, { readonly _tag: string }, Setup.ReviewAutomation>),
              { _tag: "Forbidden" }
            )
          }
          assert.deepStrictEqual(yield* automation.use((a) => a.getSurveyFlow(flow.id)).pipe(readOnly), flow)
        }))
    }
  )
