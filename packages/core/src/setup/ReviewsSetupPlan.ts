/**
 * Guided reviews setup (POST /organization/setup/reviews; docs/DECISIONS.md §8): the answers, and the pure plan of what
 * to create from them. A store turns the plan into records in one transaction: it creates the templates, replaces
 * each email step's `emailTemplateKey` with the created template's id (`bindTemplateIds`), creates the flow and
 * writes the auto-publish answers into the review settings (`ReviewSettings.ts`).
 */
import { Effect, Result, Schema } from "effect"
import { EmailTemplateId, SurveyFlowId, Uuid } from "../kernel/Ids.ts"
import { Metadata } from "../kernel/Metadata.ts"
import { Timestamp } from "../kernel/Timestamp.ts"
import { reviewEmailCopy, reviewEmailHtml } from "./ReviewEmailCopy.ts"

// ---------------------------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------------------------

export const ReviewTriggerEvent = Schema.Literals(["order.created", "order.fulfilled", "order.delivered"])
export type ReviewTriggerEvent = typeof ReviewTriggerEvent.Type

export const ReviewTemplateStyle = Schema.Literals(["standard", "minimal", "photo"])
export type ReviewTemplateStyle = typeof ReviewTemplateStyle.Type

const intBetween = (minimum: number, maximum: number) =>
  Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum, maximum })))

/**
 * The answers of the guided setup. Every key may be omitted and then takes its default; an explicit `null` or
 * `undefined` is rejected rather than read as "default" (`withDecodingDefaultKey`: the key may be absent, not
 * empty). Unknown keys are only rejected when decoding with `reviewsSetupAnswersParseOptions` (Effect Schema has no
 * per-schema "closed struct"; excess keys are a parse option), so decode with `decodeReviewsSetupAnswers`.
 */
export const ReviewsSetupAnswers = Schema.Struct({
  triggerEvent: ReviewTriggerEvent.pipe(Schema.withDecodingDefaultKey(Effect.succeed("order.fulfilled" as const))),
  delayDays: intBetween(0, 365).pipe(Schema.withDecodingDefaultKey(Effect.succeed(14))),
  reminder: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  reminderDelayDays: intBetween(1, 365).pipe(Schema.withDecodingDefaultKey(Effect.succeed(7))),
  template: ReviewTemplateStyle.pipe(Schema.withDecodingDefaultKey(Effect.succeed("standard" as const))),
  autoPublish: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false))),
  autoPublishMinRating: intBetween(1, 5).pipe(Schema.withDecodingDefaultKey(Effect.succeed(4)))
}).annotate({ identifier: "ReviewsSetupAnswers" })
/** Decoded answers: every field present. */
export type ReviewsSetupAnswers = typeof ReviewsSetupAnswers.Type
/** Answers as sent: every field optional. */
export type ReviewsSetupAnswersInput = typeof ReviewsSetupAnswers.Encoded

/** Reject unknown keys (a typo such as `delaydays` must not silently become the default) and report every issue. */
const reviewsSetupAnswersParseOptions = { onExcessProperty: "error", errors: "all" } as const

/** Decodes answers with unknown keys rejected; the failure is a `Schema.SchemaError` listing every issue. */
export const decodeReviewsSetupAnswers = (input: unknown): Result.Result<ReviewsSetupAnswers, Schema.SchemaError> =>
  Schema.decodeUnknownResult(ReviewsSetupAnswers)(input, reviewsSetupAnswersParseOptions)

// ---------------------------------------------------------------------------------------------------------------
// Records the setup creates (spec "Survey flow", "Email template")
// ---------------------------------------------------------------------------------------------------------------

const NonNegativeInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

/**
 * A step of a survey flow. The spec leaves step types open (a string); this setup creates `wait` and `email`.
 * Fields that do not apply to a step's type are null: `waitSeconds` off `wait` steps, `emailTemplateId` off
 * `email` steps, `url` on both.
 */
export const SurveyFlowStep = Schema.Struct({
  id: Uuid,
  type: Schema.String,
  position: NonNegativeInt,
  emailTemplateId: Schema.NullOr(EmailTemplateId),
  url: Schema.NullOr(Schema.String),
  waitSeconds: Schema.NullOr(NonNegativeInt)
})
export type SurveyFlowStep = typeof SurveyFlowStep.Type

export const SurveyFlow = Schema.Struct({
  id: SurveyFlowId,
  name: Schema.String,
  isActive: Schema.Boolean,
  triggerEvent: Schema.String,
  /** "" means the flow runs for every trigger event. */
  condition: Schema.String,
  steps: Schema.Array(SurveyFlowStep),
  metadata: Metadata,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "SurveyFlow" })
export type SurveyFlow = typeof SurveyFlow.Type

/**
 * An email template. The spec lists id, name, body, type, createdAt, updatedAt; `subject` is added because an
 * email cannot be sent without one and the body is the message text alone.
 */
export const EmailTemplate = Schema.Struct({
  id: EmailTemplateId,
  name: Schema.String,
  type: Schema.String,
  subject: Schema.String,
  body: Schema.String,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "EmailTemplate" })
export type EmailTemplate = typeof EmailTemplate.Type

// ---------------------------------------------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------------------------------------------

export const TemplateKey = Schema.Literals(["request", "reminder"])
export type TemplateKey = typeof TemplateKey.Type

/** Email template `type` of each planned template (the spec leaves the values open). */
const templateType = {
  request: "reviewRequest",
  reminder: "reviewReminder"
} as const satisfies { readonly [K in TemplateKey]: string }

export interface PlannedEmailTemplate {
  readonly key: TemplateKey
  readonly name: string
  readonly type: string
  readonly subject: string
  readonly body: string
}

export type PlannedSurveyFlowStep =
  | { readonly type: "wait"; readonly position: number; readonly waitSeconds: number }
  | { readonly type: "email"; readonly position: number; readonly emailTemplateKey: TemplateKey }

export interface PlannedSurveyFlow {
  readonly name: string
  readonly isActive: true
  readonly triggerEvent: ReviewTriggerEvent
  readonly condition: string
  readonly steps: ReadonlyArray<PlannedSurveyFlowStep>
}

export interface AutoPublishPreference {
  readonly autoPublish: boolean
  readonly autoPublishMinRating: number
}

export interface ReviewsSetupPlan {
  /** The request template first, then the reminder when asked for. */
  readonly emailTemplates: ReadonlyArray<PlannedEmailTemplate>
  readonly surveyFlow: PlannedSurveyFlow
  readonly autoPublish: AutoPublishPreference
}

const SECONDS_PER_DAY = 86_400

type Copy = { readonly subject: string; readonly body: string }

/**
 * Subject and body per style and key: HTML emails in Liquid over the variables of `EmailTemplates.ts`, each with the
 * order's products, a button to `survey.url` and an unsubscribe link to `unsubscribe.url` (`ReviewEmailCopy.ts`).
 */
const templateCopy: { readonly [S in ReviewTemplateStyle]: { readonly [K in TemplateKey]: Copy } } = {
  standard: {
    request: {
      subject: reviewEmailCopy.standard.request.subject,
      body: reviewEmailHtml(reviewEmailCopy.standard.request)
    },
    reminder: {
      subject: reviewEmailCopy.standard.reminder.subject,
      body: reviewEmailHtml(reviewEmailCopy.standard.reminder)
    }
  },
  minimal: {
    request: {
      subject: reviewEmailCopy.minimal.request.subject,
      body: reviewEmailHtml(reviewEmailCopy.minimal.request)
    },
    reminder: {
      subject: reviewEmailCopy.minimal.reminder.subject,
      body: reviewEmailHtml(reviewEmailCopy.minimal.reminder)
    }
  },
  photo: {
    request: { subject: reviewEmailCopy.photo.request.subject, body: reviewEmailHtml(reviewEmailCopy.photo.request) },
    reminder: { subject: reviewEmailCopy.photo.reminder.subject, body: reviewEmailHtml(reviewEmailCopy.photo.reminder) }
  }
}

const styleLabel: { readonly [S in ReviewTemplateStyle]: string } = {
  standard: "standard",
  minimal: "minimal",
  photo: "with photos"
}

const keyLabel: { readonly [K in TemplateKey]: string } = {
  request: "Review request",
  reminder: "Review reminder"
}

const triggerLabel: { readonly [E in ReviewTriggerEvent]: string } = {
  "order.created": "order placed",
  "order.fulfilled": "order fulfilled",
  "order.delivered": "order delivered"
}

const days = (n: number): string => (n === 1 ? "1 day" : `${n} days`)

const plannedTemplate = (style: ReviewTemplateStyle, key: TemplateKey): PlannedEmailTemplate => ({
  key,
  name: `${keyLabel[key]} (${styleLabel[style]})`,
  type: templateType[key],
  ...templateCopy[style][key]
})

/** What to create for the given (decoded) answers. Pure: no ids, no clock. */
export const planReviewsSetup = (answers: ReviewsSetupAnswers): ReviewsSetupPlan => {
  // Each email is preceded by its own wait, so the reminder's delay counts from the request email.
  const emails: ReadonlyArray<readonly [TemplateKey, number]> = answers.reminder
    ? [["request", answers.delayDays], ["reminder", answers.reminderDelayDays]]
    : [["request", answers.delayDays]]
  const steps = emails.flatMap(([key, delay], i): ReadonlyArray<PlannedSurveyFlowStep> => [
    { type: "wait", position: 2 * i, waitSeconds: delay * SECONDS_PER_DAY },
    { type: "email", position: 2 * i + 1, emailTemplateKey: key }
  ])
  const reminderNote = answers.reminder ? `, reminder after ${days(answers.reminderDelayDays)}` : ""
  return {
    emailTemplates: emails.map(([key]) => plannedTemplate(answers.template, key)),
    surveyFlow: {
      name: `Review requests: ${days(answers.delayDays)} after ${triggerLabel[answers.triggerEvent]}${reminderNote}`,
      isActive: true,
      triggerEvent: answers.triggerEvent,
      condition: "",
      steps
    },
    autoPublish: { autoPublish: answers.autoPublish, autoPublishMinRating: answers.autoPublishMinRating }
  }
}

/** A flow step ready to store, less the id the store assigns. */
export type SurveyFlowStepInput = Omit<SurveyFlowStep, "id">

/**
 * Replaces template keys with the ids of the templates the store created. Fails (a defect, not a user error) when
 * a key has no id, since the store creates every planned template first.
 */
export const bindTemplateIds = (
  steps: ReadonlyArray<PlannedSurveyFlowStep>,
  ids: { readonly [K in TemplateKey]?: EmailTemplateId }
): ReadonlyArray<SurveyFlowStepInput> =>
  steps.map((step) => {
    if (step.type === "wait") {
      const { position, type, waitSeconds } = step
      return { type, position, emailTemplateId: null, url: null, waitSeconds }
    }
    const id = ids[step.emailTemplateKey]
    if (id === undefined) throw new Error(`No email template was created for the "${step.emailTemplateKey}" step.`)
    return { type: step.type, position: step.position, emailTemplateId: id, url: null, waitSeconds: null }
  })
