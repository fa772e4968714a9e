/**
 * Organization setup use-cases (spec "Organization setup"; docs/DECISIONS.md §8): read the setup state, record a merchant's
 * decision about an area, and the guided reviews setup. The rules are the pure functions of `SetupRules.ts` and
 * `ReviewsSetupPlan.ts`; this module only orders reads and writes around them.
 *
 * Every answer is built from the decisions as stored after the write: the store fills only null fields, so when two
 * requests observe an area at once both answer the one `completedAt` that was kept.
 */
import { Context, Effect, Layer, Option, Result, Schema } from "effect"
import { requirePermission, type CurrentCaller } from "../kernel/Caller.ts"
import { Conflict, type Forbidden, InvalidRequest } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import type { EmailTemplateId, OrganizationId, SurveyFlowId } from "../kernel/Ids.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import { ReviewAutomationRepository } from "./ReviewAutomationRepository.ts"
import {
  bindTemplateIds,
  decodeReviewsSetupAnswers,
  EmailTemplate,
  planReviewsSetup,
  type ReviewsSetupAnswersInput,
  SurveyFlow,
  type TemplateKey
} from "./ReviewsSetupPlan.ts"
import { EMBED_SCRIPT_PATH, publicBaseUrl, SetupConfig, type SetupRequest } from "./SetupConfig.ts"
import { defaultReviewSettings } from "./ReviewSettings.ts"
import { invalidRequestOfSchema } from "../kernel/RequestIssues.ts"
import { type AreaDecisionUpdates, SetupRepository } from "./SetupRepository.ts"
import {
  type Area,
  areas,
  configuredAreas,
  decide,
  resolveSetup,
  type SetupDecisions,
  type SetupInput,
  type SetupPatch,
  SetupState,
  setupState
} from "./SetupRules.ts"
import { StorefrontRecordRepository } from "../organizations/StorefrontRecordRepository.ts"
import { now, type Timestamp } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"

/** Response of POST /organization/setup/reviews. */
export const ReviewsSetupResult = Schema.Struct({
  data: SetupState,
  surveyFlow: SurveyFlow,
  emailTemplates: Schema.Array(EmailTemplate)
}).annotate({ identifier: "ReviewsSetupResult" })
export type ReviewsSetupResult = typeof ReviewsSetupResult.Type

/** A decoding failure of the answers as INVALID_REQUEST issues under `data.` (the HTTP adapter adds `body.`). */
const invalidAnswers = (error: Schema.SchemaError): InvalidRequest => invalidRequestOfSchema("data", error)

export class Setup extends Context.Service<Setup, {
  /** GET /organization/setup: the setup state; an area seen running for the first time is recorded as completed. */
  readonly getState: (request?: SetupRequest) => Effect.Effect<SetupState, Forbidden, CurrentCaller>
  /** PATCH /organization/setup: records one outcome on one area and answers the state after it. */
  readonly recordOutcome: (
    patch: SetupPatch,
    request?: SetupRequest
  ) => Effect.Effect<SetupState, Forbidden, CurrentCaller>
  /**
   * POST /organization/setup/reviews: from the merchant's answers, creates the review-request template (and the
   * reminder when asked for), an active survey flow that sends them, and the review settings' auto-publish fields, with their
   * events, in one unit of work; answers the setup state after it (the reviews area is then configured).
   * The answers are validated here too (unknown keys rejected), so an embedding host may pass raw input.
   * Once per organization: while the flow it created exists and is active, another call is a `Conflict` and writes
   * nothing.
   */
  readonly setupReviews: (
    answers: ReviewsSetupAnswersInput,
    request?: SetupRequest
  ) => Effect.Effect<ReviewsSetupResult, Forbidden | InvalidRequest | Conflict, CurrentCaller>
}>()("feedback/Setup") {
  static readonly layer = Layer.effect(
    Setup,
    Effect.gen(function*() {
      const repo = yield* SetupRepository
      const storefront = yield* StorefrontRecordRepository
      const automation = yield* ReviewAutomationRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const config = yield* SetupConfig
      const events = makeEventRecorder(yield* EventOutbox, ids)

      const apiBaseUrlFor = (request: SetupRequest | undefined): string => config.apiBaseUrl ?? request?.apiOrigin ?? ""
      /** The API's own copy of the widget, where this caller reaches the API (else where emails link to). */
      const embedScriptUrlFor = (request: SetupRequest | undefined): string => {
        const base = apiBaseUrlFor(request)
        return `${base === "" ? publicBaseUrl(config) : base}${EMBED_SCRIPT_PATH}`
      }

      /**
       * Reads the signals, applies rule 1 to `decisions` and persists what changed relative to `stored` (the decisions
       * as loaded). Must run inside the unit of work that loaded `stored`.
       */
      const resolveAndPersist = (
        organizationId: OrganizationId,
        stored: SetupDecisions,
        decisions: SetupDecisions,
        at: Timestamp,
        request: SetupRequest | undefined
      ): Effect.Effect<SetupState> =>
        Effect.gen(function*() {
          const signals = yield* repo.signals(organizationId)
          const publishableKey = yield* storefront.newestPublishableKey(organizationId)
          const input: SetupInput = {
            signals,
            decisions,
            publishableKey: Option.getOrNull(Option.map(publishableKey, (k) => k.key)),
            embedScriptUrl: config.embedScriptUrl ?? embedScriptUrlFor(request),
            apiBaseUrl: apiBaseUrlFor(request)
          }
          const resolution = resolveSetup(input, at)
          // The rules return the very same object for an area they left alone.
          const updates: { [A in Area]?: SetupDecisions[A] } = {}
          for (const area of areas) {
            if (resolution.decisions[area] !== stored[area]) updates[area] = resolution.decisions[area]
          }
          if (Object.keys(updates).length === 0) return resolution.state
          const saved = yield* repo.saveDecisions(organizationId, updates satisfies AreaDecisionUpdates)
          return setupState({ ...input, decisions: saved }, configuredAreas(signals))
        })

      const stateOf = (
        organizationId: OrganizationId,
        outcome: SetupPatch | undefined,
        request: SetupRequest | undefined
      ): Effect.Effect<SetupState> =>
        uow.transaction(Effect.gen(function*() {
          const at = yield* now
          const stored = yield* repo.decisions(organizationId)
          const decided = outcome === undefined ? stored : decide(stored, outcome.area, outcome.outcome, at)
          return yield* resolveAndPersist(organizationId, stored, decided, at, request)
        }))

      const getState = Effect.fn("Setup.getState")(function*(request?: SetupRequest) {
        const caller = yield* requirePermission("settings:read")
        return yield* stateOf(caller.organizationId, undefined, request)
      })

      const recordOutcome = Effect.fn("Setup.recordOutcome")(function*(patch: SetupPatch, request?: SetupRequest) {
        const caller = yield* requirePermission("settings:write")
        return yield* stateOf(caller.organizationId, patch, request)
      })

      const setupReviews = Effect.fn("Setup.setupReviews")(
        function*(answers: ReviewsSetupAnswersInput, request?: SetupRequest) {
          const caller = yield* requirePermission("settings:write")
          const organizationId = caller.organizationId
          const decoded = decodeReviewsSetupAnswers(answers)
          if (Result.isFailure(decoded)) return yield* invalidAnswers(decoded.failure)
          const plan = planReviewsSetup(decoded.success)
          return yield* uow.transaction(Effect.gen(function*() {
            // Once per organization: a retry, a double click or a parallel call must not add a second active flow
            // (each would send the same shopper its own review request). The store serializes concurrent calls.
            const guided = yield* automation.lockGuidedSetup(organizationId)
            if (Option.isSome(guided)) {
              return yield* new Conflict({
                message: `The guided setup already created the active survey flow ${guided.value}: edit it ` +
                  `(PATCH /survey-flows/${guided.value}), or deactivate or delete it to run the guided setup again.`
              })
            }
            const at = yield* now
            const templateIds: { [K in TemplateKey]?: EmailTemplateId } = {}
            const emailTemplates: Array<EmailTemplate> = []
            for (const { key, ...planned } of plan.emailTemplates) {
              const template: EmailTemplate = {
                id: yield* nextIdFrom<EmailTemplateId>(ids),
                ...planned,
                createdAt: at,
                updatedAt: at
              }
              yield* automation.insertEmailTemplate({ ...template, organizationId })
              templateIds[key] = template.id
              emailTemplates.push(template)
            }
            const steps = yield* Effect.forEach(
              bindTemplateIds(plan.surveyFlow.steps, templateIds),
              (step) => Effect.map(nextIdFrom<SurveyFlow["steps"][number]["id"]>(ids), (id) => ({ id, ...step }))
            )
            const surveyFlow: SurveyFlow = {
              id: yield* nextIdFrom<SurveyFlowId>(ids),
              name: plan.surveyFlow.name,
              isActive: plan.surveyFlow.isActive,
              triggerEvent: plan.surveyFlow.triggerEvent,
              condition: plan.surveyFlow.condition,
              steps,
              metadata: {},
              createdAt: at,
              updatedAt: at
            }
            yield* automation.insertSurveyFlow({ ...surveyFlow, organizationId })
            yield* automation.recordGuidedSetup(organizationId, surveyFlow.id)
            // Review settings are the one home of the preference; the setup leaves `autoPublishVerifiedOnly` as it was.
            const settings = Option.getOrElse(
              yield* automation.reviewSettings(organizationId),
              () => defaultReviewSettings
            )
            yield* automation.saveReviewSettings(organizationId, { ...settings, ...plan.autoPublish }, at)
            yield* events.recordAll(organizationId, [
              ...emailTemplates.map((template) => ({
                event: "emailTemplate.created",
                data: Schema.encodeSync(EmailTemplate)(template)
              })),
              { event: "surveyFlow.created", data: Schema.encodeSync(SurveyFlow)(surveyFlow) }
            ])
            const stored = yield* repo.decisions(organizationId)
            const data = yield* resolveAndPersist(organizationId, stored, stored, at, request)
            return { data, surveyFlow, emailTemplates } satisfies ReviewsSetupResult
          }))
        }
      )

      return Setup.of({ getState, recordOutcome, setupReviews })
    })
  )
}
