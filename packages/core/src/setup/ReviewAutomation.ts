/**
 * The review automation as ordinary editable records (docs/DECISIONS.md §13): the email templates and survey flows
 * the guided setup creates can be listed, read, edited and deleted, each change announced by its event. A template
 * that a flow's step sends cannot be deleted (409), so no flow ever points at nothing; `hasActiveSurveyFlow` reads
 * the flows' `isActive`, so switching the last active flow off turns the setup signal off. A flow's `condition` must
 * parse when it is saved, and switching a flow off or deleting it cancels what its surveys still had to send
 * (docs/DECISIONS.md §48).
 */
import { Context, Effect, Layer, Option, Result, Schema } from "effect"
import { type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { Conflict, type Forbidden, InvalidRequest, NotFound } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import type { EmailTemplateId, OrganizationId, SurveyFlowId } from "../kernel/Ids.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { Page } from "../kernel/ListQuery.ts"
import { newestFirstPage, type NewestFirstPageQuery } from "../kernel/NewestFirstPage.ts"
import { now } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import type { EmailTemplatePatch, SurveyFlowPatch } from "./AutomationRequests.ts"
import { referencedTemplates, sameFlow, stepIssues, toStoredSteps } from "./AutomationRules.ts"
import { ReviewAutomationRepository } from "./ReviewAutomationRepository.ts"
import { templateIssues } from "./EmailTemplates.ts"
import { EmailTemplate, SurveyFlow, type SurveyFlowStep } from "./ReviewsSetupPlan.ts"
import { makeSurveyEnrolment } from "../surveys/SurveyEnrolment.ts"
import { parseCondition, surveyReasons } from "../surveys/SurveyRules.ts"
import {
  defaultReviewSettings,
  patchReviewSettings,
  type ReviewSettings,
  type ReviewSettingsPatch,
  sameReviewSettings
} from "./ReviewSettings.ts"

export class ReviewAutomation extends Context.Service<ReviewAutomation, {
  readonly listEmailTemplates: (
    query: NewestFirstPageQuery
  ) => Effect.Effect<Page<EmailTemplate>, Forbidden | InvalidRequest, CurrentCaller>
  readonly getEmailTemplate: (id: EmailTemplateId) => Effect.Effect<EmailTemplate, Forbidden | NotFound, CurrentCaller>
  /**
   * Only sent fields change; a patch that changes nothing writes nothing and fires no event. A `subject` or `body` that
   * is not a valid Liquid template is InvalidRequest naming `body.subject` / `body.body` (`EmailTemplates.ts`).
   */
  readonly updateEmailTemplate: (
    id: EmailTemplateId,
    patch: EmailTemplatePatch
  ) => Effect.Effect<EmailTemplate, Forbidden | NotFound | InvalidRequest, CurrentCaller>
  /** Conflict while a flow's step sends it. Returns the template as it was. */
  readonly deleteEmailTemplate: (
    id: EmailTemplateId
  ) => Effect.Effect<EmailTemplate, Forbidden | NotFound | Conflict, CurrentCaller>
  readonly listSurveyFlows: (
    query: NewestFirstPageQuery
  ) => Effect.Effect<Page<SurveyFlow>, Forbidden | InvalidRequest, CurrentCaller>
  readonly getSurveyFlow: (id: SurveyFlowId) => Effect.Effect<SurveyFlow, Forbidden | NotFound, CurrentCaller>
  /** Only sent fields change; `steps` and `metadata` are replaced wholesale. */
  readonly updateSurveyFlow: (
    id: SurveyFlowId,
    patch: SurveyFlowPatch
  ) => Effect.Effect<SurveyFlow, Forbidden | NotFound | InvalidRequest, CurrentCaller>
  /** Deletes the flow with its steps; returns it as it was. */
  readonly deleteSurveyFlow: (id: SurveyFlowId) => Effect.Effect<SurveyFlow, Forbidden | NotFound, CurrentCaller>
  /** GET /review-settings: as stored, or the defaults. */
  readonly getReviewSettings: () => Effect.Effect<ReviewSettings, Forbidden, CurrentCaller>
  /** PATCH /review-settings: only sent fields change; answers the settings after it. */
  readonly updateReviewSettings: (patch: ReviewSettingsPatch) => Effect.Effect<ReviewSettings, Forbidden, CurrentCaller>
}>()("feedback/ReviewAutomation") {
  static readonly layer = Layer.effect(
    ReviewAutomation,
    Effect.gen(function*() {
      const repo = yield* ReviewAutomationRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const cursorKey = yield* CursorKey
      const events = makeEventRecorder(yield* EventOutbox, ids)
      const encodeTemplate = Schema.encodeSync(EmailTemplate)
      const encodeFlow = Schema.encodeSync(SurveyFlow)
      const surveys = yield* makeSurveyEnrolment

      const templateOf = (organizationId: OrganizationId, id: EmailTemplateId) =>
        repo.findEmailTemplate(organizationId, id).pipe(
          Effect.flatMap(
            Option.match({ onNone: () => Effect.fail(NotFound.of("email template", id)), onSome: Effect.succeed })
          )
        )
      const flowOf = (organizationId: OrganizationId, id: SurveyFlowId) =>
        repo.findSurveyFlow(organizationId, id).pipe(
          Effect.flatMap(
            Option.match({ onNone: () => Effect.fail(NotFound.of("survey flow", id)), onSome: Effect.succeed })
          )
        )

      const listEmailTemplates = Effect.fn("ReviewAutomation.listEmailTemplates")(
        function*(query: NewestFirstPageQuery) {
          const caller = yield* requirePermission("settings:read")
          return yield* newestFirstPage(
            caller.organizationId,
            "email-templates",
            query,
            (p) => repo.pageEmailTemplates(caller.organizationId, p),
            (t) => t,
            cursorKey
          )
        }
      )

      const getEmailTemplate = Effect.fn("ReviewAutomation.getEmailTemplate")(function*(id: EmailTemplateId) {
        const caller = yield* requirePermission("settings:read")
        return yield* templateOf(caller.organizationId, id)
      })

      const updateEmailTemplate = Effect.fn("ReviewAutomation.updateEmailTemplate")(
        function*(id: EmailTemplateId, patch: EmailTemplatePatch) {
          const caller = yield* requirePermission("settings:write")
          const issues = templateIssues(patch)
          if (issues.length > 0) {
            return yield* InvalidRequest.of(issues)
          }
          return yield* uow.transaction(Effect.gen(function*() {
            const current = yield* templateOf(caller.organizationId, id)
            const changed = (["name", "subject", "body"] as const).some((f) =>
              patch[f] !== undefined && patch[f] !== current[f]
            )
            if (!changed) return current
            const updated: EmailTemplate = { ...current, ...patch, updatedAt: yield* now }
            yield* repo.updateEmailTemplate({ ...updated, organizationId: caller.organizationId })
            yield* events.record(caller.organizationId, "emailTemplate.updated", encodeTemplate(updated))
            return updated
          }))
        }
      )

      const deleteEmailTemplate = Effect.fn("ReviewAutomation.deleteEmailTemplate")(function*(id: EmailTemplateId) {
        const caller = yield* requirePermission("settings:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* templateOf(caller.organizationId, id)
          const users = yield* repo.flowsUsingTemplate(caller.organizationId, id)
          if (users.length > 0) {
            return yield* new Conflict({
              message: `the email template is sent by survey flow ${
                users.join(", ")
              }; remove those steps or delete the flows first`
            })
          }
          yield* repo.deleteEmailTemplate(caller.organizationId, id)
          yield* events.record(caller.organizationId, "emailTemplate.deleted", encodeTemplate(current))
          return current
        }))
      })

      const listSurveyFlows = Effect.fn("ReviewAutomation.listSurveyFlows")(function*(query: NewestFirstPageQuery) {
        const caller = yield* requirePermission("settings:read")
        return yield* newestFirstPage(
          caller.organizationId,
          "survey-flows",
          query,
          (p) => repo.pageSurveyFlows(caller.organizationId, p),
          (f) => f,
          cursorKey
        )
      })

      const getSurveyFlow = Effect.fn("ReviewAutomation.getSurveyFlow")(function*(id: SurveyFlowId) {
        const caller = yield* requirePermission("settings:read")
        return yield* flowOf(caller.organizationId, id)
      })

      const updateSurveyFlow = Effect.fn("ReviewAutomation.updateSurveyFlow")(
        function*(id: SurveyFlowId, patch: SurveyFlowPatch) {
          const caller = yield* requirePermission("settings:write")
          const organizationId = caller.organizationId
          const issues = [
            ...(patch.steps === undefined ? [] : stepIssues(patch.steps)),
            ...(patch.condition === undefined
              ? []
              : Result.match(parseCondition(patch.condition), {
                onSuccess: () => [],
                onFailure: (e) => e.issues
              }))
          ]
          if (issues.length > 0) {
            return yield* InvalidRequest.of(issues)
          }
          return yield* uow.transaction(Effect.gen(function*() {
            const current = yield* flowOf(organizationId, id)
            let steps: ReadonlyArray<SurveyFlowStep> = current.steps
            if (patch.steps !== undefined) {
              // Templates are looked up inside the unit of work, so a concurrent delete cannot slip between check and write.
              const missing: Array<string> = []
              for (const templateId of referencedTemplates(patch.steps)) {
                if (Option.isNone(yield* repo.findEmailTemplate(organizationId, templateId))) missing.push(templateId)
              }
              if (missing.length > 0) {
                return yield* InvalidRequest.of(
                  patch.steps.flatMap((s, i) =>
                    s.type === "email" && s.emailTemplateId != null && missing.includes(s.emailTemplateId)
                      ? [{
                        path: `body.steps[${i}].emailTemplateId`,
                        message: "is not an email template of this organization"
                      }]
                      : []
                  )
                )
              }
              const stepIds = yield* Effect.forEach(patch.steps, () => nextIdFrom<SurveyFlowStep["id"]>(ids))
              steps = toStoredSteps(patch.steps, stepIds)
            }
            const next: SurveyFlow = {
              ...current,
              ...(patch.name === undefined ? {} : { name: patch.name }),
              ...(patch.isActive === undefined ? {} : { isActive: patch.isActive }),
              ...(patch.triggerEvent === undefined ? {} : { triggerEvent: patch.triggerEvent }),
              ...(patch.condition === undefined ? {} : { condition: patch.condition }),
              ...(patch.metadata === undefined ? {} : { metadata: patch.metadata }),
              steps
            }
            if (sameFlow(next, current)) {
              return current
            }
            const updated: SurveyFlow = { ...next, updatedAt: yield* now }
            // Deleted since it was read (a DELETE that committed first): the PATCH comes after it, so 404, no event.
            if (!(yield* repo.replaceSurveyFlow({ ...updated, organizationId }))) {
              return yield* NotFound.of("survey flow", id)
            }
            yield* events.record(organizationId, "surveyFlow.updated", encodeFlow(updated))
            if (current.isActive && !updated.isActive) {
              yield* surveys.cancelForFlow(organizationId, id, surveyReasons.flowOff, updated.updatedAt)
            }
            return updated
          }))
        }
      )

      const deleteSurveyFlow = Effect.fn("ReviewAutomation.deleteSurveyFlow")(function*(id: SurveyFlowId) {
        const caller = yield* requirePermission("settings:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* flowOf(caller.organizationId, id)
          yield* repo.deleteSurveyFlow(caller.organizationId, id)
          yield* events.record(caller.organizationId, "surveyFlow.deleted", encodeFlow(current))
          yield* surveys.cancelForFlow(caller.organizationId, id, surveyReasons.flowDeleted, yield* now)
          return current
        }))
      })

      const settingsOf = (organizationId: OrganizationId) =>
        Effect.map(repo.reviewSettings(organizationId), Option.getOrElse(() => defaultReviewSettings))

      const getReviewSettings = Effect.fn("ReviewAutomation.getReviewSettings")(function*() {
        const caller = yield* requirePermission("settings:read")
        return yield* settingsOf(caller.organizationId)
      })

      const updateReviewSettings = Effect.fn("ReviewAutomation.updateReviewSettings")(
        function*(patch: ReviewSettingsPatch) {
          const caller = yield* requirePermission("settings:write")
          return yield* uow.transaction(Effect.gen(function*() {
            const current = yield* settingsOf(caller.organizationId)
            const next = patchReviewSettings(current, patch)
            if (!sameReviewSettings(current, next)) {
              yield* repo.saveReviewSettings(caller.organizationId, next, yield* now)
            }
            return next
          }))
        }
      )

      return ReviewAutomation.of({
        getReviewSettings,
        updateReviewSettings,
        listEmailTemplates,
        getEmailTemplate,
        updateEmailTemplate,
        deleteEmailTemplate,
        listSurveyFlows,
        getSurveyFlow,
        updateSurveyFlow,
        deleteSurveyFlow
      })
    })
  )
}
