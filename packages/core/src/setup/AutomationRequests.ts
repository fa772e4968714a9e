/**
 * Request schemas of the editable review automation (docs/DECISIONS.md §13): partial updates of email templates and
 * survey flows. Only sent fields change; a flow's `steps` and `metadata` are replaced wholesale when sent.
 */
import { Schema } from "effect"
import { BoundedArray } from "../kernel/BoundedArray.ts"
import { EmailTemplateId } from "../kernel/Ids.ts"
import { pageOf } from "../kernel/ListQuery.ts"
import { EmailTemplate, SurveyFlow } from "./ReviewsSetupPlan.ts"
import { MetadataInput } from "../kernel/Metadata.ts"
import { BoundedText, RequiredText } from "../kernel/Text.ts"

export const automationLimits = {
  nameLength: 200,
  subjectLength: 500,
  bodyLength: 50_000,
  triggerEventLength: 100,
  conditionLength: 2_000,
  maxSteps: 50,
  maxPosition: 1_000,
  /** A wait of up to a year: the guided setup's longest delay (365 days). */
  maxWaitSeconds: 365 * 86_400
} as const

/** The step types this service runs: a pause, then an email from a template of the same organization. */
export const SurveyFlowStepType = Schema.Literals(["wait", "email"])
export type SurveyFlowStepType = typeof SurveyFlowStepType.Type

const Position = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: automationLimits.maxPosition })))
const WaitSeconds = Schema.Int.pipe(
  Schema.check(Schema.isBetween({ minimum: 0, maximum: automationLimits.maxWaitSeconds }))
)

/**
 * A step as sent. Which fields a type needs is a rule over the whole step (`checkSteps`), so each field is optional
 * here and the rule names the field that is missing or does not belong.
 */
export const SurveyFlowStepWrite = Schema.Struct({
  type: SurveyFlowStepType,
  position: Position,
  waitSeconds: Schema.optionalKey(Schema.NullOr(WaitSeconds)),
  emailTemplateId: Schema.optionalKey(Schema.NullOr(EmailTemplateId))
})
export type SurveyFlowStepWrite = typeof SurveyFlowStepWrite.Type

export const EmailTemplatePatch = Schema.Struct({
  name: Schema.optionalKey(RequiredText(automationLimits.nameLength)),
  subject: Schema.optionalKey(RequiredText(automationLimits.subjectLength)),
  body: Schema.optionalKey(RequiredText(automationLimits.bodyLength))
}).annotate({ identifier: "EmailTemplatePatch" })
export type EmailTemplatePatch = typeof EmailTemplatePatch.Type

export const SurveyFlowPatch = Schema.Struct({
  name: Schema.optionalKey(RequiredText(automationLimits.nameLength)),
  isActive: Schema.optionalKey(Schema.Boolean),
  triggerEvent: Schema.optionalKey(RequiredText(automationLimits.triggerEventLength)),
  /** "" runs the flow for every trigger event. */
  condition: Schema.optionalKey(BoundedText(automationLimits.conditionLength)),
  steps: Schema.optionalKey(BoundedArray(SurveyFlowStepWrite, automationLimits.maxSteps)),
  metadata: Schema.optionalKey(MetadataInput)
}).annotate({ identifier: "SurveyFlowPatch" })
export type SurveyFlowPatch = typeof SurveyFlowPatch.Type

export const EmailTemplateList = pageOf(EmailTemplate, "EmailTemplateList")
export type EmailTemplateList = typeof EmailTemplateList.Type
export const SurveyFlowList = pageOf(SurveyFlow, "SurveyFlowList")
export type SurveyFlowList = typeof SurveyFlowList.Type
