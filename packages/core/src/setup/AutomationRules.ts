/**
 * Rules of editable survey flows, pure so they are testable without a store: what a step of each type must carry,
 * distinct positions, and which templates the steps reference (checked against the organization by the use-case).
 */
import type { RequestIssue } from "../kernel/Errors.ts"
import type { EmailTemplateId } from "../kernel/Ids.ts"
import type { SurveyFlowStepWrite, SurveyFlowStepType } from "./AutomationRequests.ts"
import type { SurveyFlow, SurveyFlowStep } from "./ReviewsSetupPlan.ts"

/** Per step type: the field it needs, and the field it must not carry. */
const stepShape: {
  readonly [T in SurveyFlowStepType]: {
    readonly needs: "waitSeconds" | "emailTemplateId"
    readonly refuses: "waitSeconds" | "emailTemplateId"
  }
} = {
  wait: { needs: "waitSeconds", refuses: "emailTemplateId" },
  email: { needs: "emailTemplateId", refuses: "waitSeconds" }
}

/** Issues of a flow's steps as a whole (paths under `body.steps`); empty when they are well-formed. */
export const stepIssues = (steps: ReadonlyArray<SurveyFlowStepWrite>): ReadonlyArray<RequestIssue> => {
  const issues: Array<RequestIssue> = []
  const seen = new Map<number, number>()
  steps.forEach((step, i) => {
    const shape = stepShape[step.type]
    const value = (field: "waitSeconds" | "emailTemplateId") => step[field] ?? null
    if (value(shape.needs) === null) {
      issues.push({ path: `body.steps[${i}].${shape.needs}`, message: `is required for a ${step.type} step` })
    }
    if (value(shape.refuses) !== null) {
      issues.push({
        path: `body.steps[${i}].${shape.refuses}`,
        message: `does not apply to a ${step.type} step; send null or omit it`
      })
    }
    const earlier = seen.get(step.position)
    if (earlier !== undefined) {
      issues.push({ path: `body.steps[${i}].position`, message: `repeats the position of step ${earlier}` })
    } else seen.set(step.position, i)
  })
  return issues
}

/** The distinct templates the steps send. */
export const referencedTemplates = (
  steps: ReadonlyArray<SurveyFlowStepWrite>
): ReadonlyArray<EmailTemplateId> => [
  ...new Set(steps.flatMap((s) => (s.type === "email" && s.emailTemplateId != null ? [s.emailTemplateId] : [])))
]

/** Steps ready to store (ids assigned by the caller), in position order. */
export const toStoredSteps = (
  steps: ReadonlyArray<SurveyFlowStepWrite>,
  ids: ReadonlyArray<SurveyFlowStep["id"]>
): ReadonlyArray<SurveyFlowStep> =>
  steps
    .map((s, i): SurveyFlowStep => ({
      id: ids[i]!,
      type: s.type,
      position: s.position,
      emailTemplateId: s.type === "email" ? s.emailTemplateId ?? null : null,
      url: null,
      waitSeconds: s.type === "wait" ? s.waitSeconds ?? null : null
    }))
    .sort((a, b) => a.position - b.position)

const sameMetadata = (a: SurveyFlow["metadata"], b: SurveyFlow["metadata"]) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v)

const sameStep = (a: SurveyFlowStep, b: SurveyFlowStep) =>
  a.type === b.type && a.position === b.position && a.emailTemplateId === b.emailTemplateId && a.url === b.url &&
  a.waitSeconds === b.waitSeconds

/** Whether an edit leaves the flow as it was (step ids aside: re-sent steps get new ones), so nothing is written. */
export const sameFlow = (a: SurveyFlow, b: SurveyFlow): boolean =>
  a.name === b.name && a.isActive === b.isActive && a.triggerEvent === b.triggerEvent && a.condition === b.condition &&
  sameMetadata(a.metadata, b.metadata) && a.steps.length === b.steps.length && a.steps.every((s, i) =>
    sameStep(s, b.steps[i]!)
  )
