/**
 * Organization setup use-cases (spec "Organization setup"; docs/DECISIONS.md §8): read the setup state, record a merchant's
 * decision about an area, and the guided reviews setup. The rules are the pure functions of `SetupRules.ts` and
 * `ReviewsSetupPlan.ts`; this module only orders reads and writes around them.
 *
 * Every answer is built from the decisions as stored after the write: the store fills only null fields, so when two
 * requests observe an area at once both answer the one `completedAt` that was kept.
 */
import { Effect, Option, Result, Schema } from "effect"
import { requirePermission, type CurrentCaller } from "../kernel/Caller.ts"
import { type Forbidden, InvalidRequest, type RequestIssue } from "../kernel/Errors.ts"
import { type EventOutbox, recordEvent } from "../kernel/EventOutbox.ts"
import type { EmailTemplateId, OrganizationId, SurveyFlowId } from "../kernel/Ids.ts"
import { type IdGenerator, nextId } from "../kernel/IdGenerator.ts"
import { firstIssues } from "../kernel/RequestIssues.ts"
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
import { SetupConfig } from "./SetupConfig.ts"
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
import { transactional, type UnitOfWork } from "../kernel/UnitOfWork.ts"

/** Response of POST /organization/setup/reviews. */
export const ReviewsSetupResult = Schema.Struct({
  data: SetupState,
  surveyFlow: SurveyFlow,
  emailTemplates: Schema.Array(EmailTemplate)
})
export type ReviewsSetupResult = typeof ReviewsSetupResult.Type

type SetupServices = SetupRepository | StorefrontRecordRepository | SetupConfig

/**
 * Reads the signals, applies rule 1 to `decisions` and persists what changed relative to `stored` (the decisions as
 * loaded). Must run inside the unit of work that loaded `stored`.
 */
const resolveAndPersist = (
  organizationId: OrganizationId,
  stored: SetupDecisions,
  decisions: SetupDecisions,
  at: Timestamp
): Effect.Effect<SetupState, never, SetupServices> =>
  Effect.gen(function*() {
    const repo = yield* SetupRepository
    const config = yield* SetupConfig
    const signals = yield* repo.signals(organizationId)
    const publishableKey = yield* StorefrontRecordRepository.use((r) => r.newestPublishableKey(organizationId))
    const input: SetupInput = {
      signals,
      decisions,
      publishableKey: Option.getOrNull(Option.map(publishableKey, (k) => k.key)),
      embedScriptUrl: config.embedScriptUrl,
      apiBaseUrl: config.apiBaseUrl
    }
    const resolution = resolveSetup(input, at)
    // The rules return the very same object for an area they left alone.
    const updates: { [A in Area]?: SetupDecisions[A] } = {}
    for (const area of areas) if (resolution.decisions[area] !== stored[area]) updates[area] = resolution.decisions[area]
    if (Object.keys(updates).length === 0) return resolution.state
    const saved = yield* repo.saveDecisions(organizationId, updates satisfies AreaDecisionUpdates)
    return setupState({ ...input, decisions: saved }, configuredAreas(signals))
  })

const stateOf = (
  organizationId: OrganizationId,
  outcome: SetupPatch | undefined
): Effect.Effect<SetupState, never, SetupServices | UnitOfWork> =>
  transactional(Effect.gen(function*() {
    const at = yield* now
    const stored = yield* SetupRepository.use((r) => r.decisions(organizationId))
    const decided = outcome === undefined ? stored : decide(stored, outcome.area, outcome.outcome, at)
    return yield* resolveAndPersist(organizationId, stored, decided, at)
  }))

/** GET /organization/setup: the setup state; an area seen running for the first time is recorded as completed. */
export const getSetupState: Effect.Effect<SetupState, Forbidden, CurrentCaller | SetupServices | UnitOfWork> =
  Effect.flatMap(requirePermission("settings:read"), (caller) => stateOf(caller.organizationId, undefined))

/** PATCH /organization/setup: records one outcome on one area and answers the state after it. */
export const recordSetupOutcome = (
  patch: SetupPatch
): Effect.Effect<SetupState, Forbidden, CurrentCaller | SetupServices | UnitOfWork> =>
  Effect.flatMap(requirePermission("settings:write"), (caller) => stateOf(caller.organizationId, patch))

/** A decoding failure of the answers as INVALID_REQUEST issues under `data.` (the HTTP adapter adds `body.`). */
const invalidAnswers = (error: Schema.SchemaError): InvalidRequest => {
  const found = firstIssues(error.issue)
  const issues: ReadonlyArray<RequestIssue> = found.issues.map((i) => ({
    path: ["data", ...i.path.map(String)].join("."),
    message: i.message
  }))
  const first = issues[0]
  return first === undefined
    ? new InvalidRequest({ message: "The setup answers are invalid.", issues })
    : InvalidRequest.of(issues, found.total)
}

/**
 * POST /organization/setup/reviews: from the merchant's answers, creates the review-request template (and the
 * reminder when asked for), an active survey flow that sends them, and the auto-publish preference, with their
 * events, in one unit of work; answers the setup state after it (the reviews area is then configured).
 * The answers are validated here too (unknown keys rejected), so an embedding host may pass raw input.
 */
export const setupReviews = (
  answers: ReviewsSetupAnswersInput
): Effect.Effect<
  ReviewsSetupResult,
  Forbidden | InvalidRequest,
  CurrentCaller | SetupServices | ReviewAutomationRepository | EventOutbox | IdGenerator | UnitOfWork
> =>
  Effect.gen(function*() {
    const caller = yield* requirePermission("settings:write")
    const organizationId = caller.organizationId
    const decoded = decodeReviewsSetupAnswers(answers)
    if (Result.isFailure(decoded)) return yield* invalidAnswers(decoded.failure)
    const plan = planReviewsSetup(decoded.success)
    return yield* transactional(Effect.gen(function*() {
      const repo = yield* ReviewAutomationRepository
      const at = yield* now
      const ids: { [K in TemplateKey]?: EmailTemplateId } = {}
      const emailTemplates: Array<EmailTemplate> = []
      for (const { key, ...planned } of plan.emailTemplates) {
        const template: EmailTemplate = { id: yield* nextId<EmailTemplateId>(), ...planned, createdAt: at, updatedAt: at }
        yield* repo.insertEmailTemplate({ ...template, organizationId })
        ids[key] = template.id
        emailTemplates.push(template)
      }
      const steps = yield* Effect.forEach(
        bindTemplateIds(plan.surveyFlow.steps, ids),
        (step) => Effect.map(nextId<SurveyFlow["steps"][number]["id"]>(), (id) => ({ id, ...step }))
      )
      const surveyFlow: SurveyFlow = {
        id: yield* nextId<SurveyFlowId>(),
        name: plan.surveyFlow.name,
        isActive: plan.surveyFlow.isActive,
        triggerEvent: plan.surveyFlow.triggerEvent,
        condition: plan.surveyFlow.condition,
        steps,
        metadata: {},
        createdAt: at,
        updatedAt: at
      }
      yield* repo.insertSurveyFlow({ ...surveyFlow, organizationId })
      yield* repo.saveAutoPublishPreference(organizationId, plan.autoPublish, at)
      for (const template of emailTemplates) {
        yield* recordEvent(organizationId, "emailTemplate.created", Schema.encodeSync(EmailTemplate)(template))
      }
      yield* recordEvent(organizationId, "surveyFlow.created", Schema.encodeSync(SurveyFlow)(surveyFlow))
      const stored = yield* SetupRepository.use((r) => r.decisions(organizationId))
      const data = yield* resolveAndPersist(organizationId, stored, stored, at)
      return { data, surveyFlow, emailTemplates }
    }))
  })
