/**
 * The pure rules of the flow engine (docs/DECISIONS.md §48): which order changes trigger which flows, a flow's
 * condition, how a new survey is laid out, how its steps are scheduled one after another, and how a step ends,
 * a survey is skipped or cancelled. Plain functions over data, tested without any Layer; the stores only keep what
 * these compute (and the `nextDueAt` a worker claims by).
 */
import { Result } from "effect"
import { InvalidRequest } from "../kernel/Errors.ts"
import { type FilterAst, matchAll, parseFilterDocument } from "../kernel/Filter.ts"
import { evaluateFilter } from "../kernel/FilterEvaluate.ts"
import type { SurveyId } from "../kernel/Ids.ts"
import { fromMillis, type Timestamp, toMillis } from "../kernel/Timestamp.ts"
import type { Customer } from "../catalog/Catalog.ts"
import type { Order } from "../orders/Order.ts"
import { distinctProducts, orderField, orderFilterCatalog, type OrderStamp } from "../orders/OrderRules.ts"
import type { ReviewTriggerEvent, SurveyFlow } from "../setup/ReviewsSetupPlan.ts"
import { type StepOutcome, SURVEY_LIFETIME_DAYS, type Survey, type SurveyStep } from "./Survey.ts"

// ---------------------------------------------------------------------------------------------------------------
// Triggers and conditions

/** The trigger event each stamp of a status move is (a cancellation triggers nothing). */
const stampTriggers: Readonly<Record<OrderStamp, ReviewTriggerEvent | undefined>> = {
  fulfilledAt: "order.fulfilled",
  deliveredAt: "order.delivered",
  cancelledAt: undefined
}

/** The trigger events of a status move: each status it passes (open → delivered passes fulfilled too). */
export const triggersOfMove = (stamped: ReadonlyArray<OrderStamp>): ReadonlyArray<ReviewTriggerEvent> =>
  stamped.flatMap((stamp) => stampTriggers[stamp] ?? [])

/** The trigger events of an order created by `POST /orders` with the stamps of its initial status. */
export const triggersOfCreation = (
  stamped: ReadonlyArray<OrderStamp>
): ReadonlyArray<ReviewTriggerEvent> => ["order.created", ...triggersOfMove(stamped)]

const conditionHelp =
  "must be \"\" (every order) or a JSON filter document over the order, such as {\"status\":\"delivered\"}"

/**
 * A flow's condition: `""` matches every order, anything else is a filter document over the order's fields (those
 * `GET /orders` filters by: `status`, `placedAt`, `externalId`, `customer.email`, `metadata.<key>`, …).
 */
export const parseCondition = (
  condition: string,
  path = "body.condition"
): Result.Result<FilterAst, InvalidRequest> => {
  if (condition.trim() === "") return Result.succeed(matchAll)
  let doc: unknown
  try {
    doc = JSON.parse(condition)
  } catch {
    return Result.fail(InvalidRequest.single(path, conditionHelp))
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return Result.fail(InvalidRequest.single(path, conditionHelp))
  }
  return parseFilterDocument(doc, orderFilterCatalog, path)
}

/** Whether the flow's condition holds for the order; a condition stored before it was checked and now unreadable never holds. */
export const conditionHolds = (condition: string, order: Order, customerEmail: string | null): boolean => {
  const parsed = parseCondition(condition)
  return Result.isSuccess(parsed) && evaluateFilter(parsed.success, orderField(order, customerEmail))
}

// ---------------------------------------------------------------------------------------------------------------
// Surveys as stored

/**
 * A step claimed by a worker, its outcome not yet recorded (docs/DECISIONS.md §48: never sent twice). `sendingAt` is
 * set, committed, just before the message is handed to the transport: a claim left by a dead worker without it was
 * never sent and is released to run again; one with it may have been sent and ends `failed`.
 */
export interface SurveyClaim {
  readonly workerId: string
  readonly claimedAt: Timestamp
  readonly position: number
  readonly sendingAt: Timestamp | null
}

/** A survey as a store keeps it: the record, its token (the `/r/{token}` page) and the claim of a step in flight. */
export interface StoredSurvey {
  readonly survey: Survey
  readonly token: string
  readonly claim: SurveyClaim | null
}

const isFinal = (status: Survey["status"]) => status === "cancelled" || status === "skipped"

/** A step still to run (not the one in flight). */
const pending = (step: SurveyStep, claim: SurveyClaim | null) =>
  step.outcome === null && step.doneAt === null && step.position !== claim?.position

/**
 * Lays out the steps after the last one that ran, from `from`: each wait ends `waitSeconds` after the step before it,
 * and the next email is due when the waits before it end. When no email remains, the waits left are over and the
 * survey is finished: `sent` when an email went out, otherwise `skipped`.
 */
export const schedule = (survey: Survey, from: Timestamp): Survey => {
  if (isFinal(survey.status) || survey.status === "completed") return survey
  const steps = [...survey.steps]
  let t = from
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!
    if (step.outcome !== null || step.doneAt !== null) continue
    if (step.type === "email") {
      if (step.dueAt === null) steps[i] = { ...step, dueAt: t }
      return { ...survey, steps }
    }
    const dueAt = step.dueAt ?? fromMillis(toMillis(t) + (step.waitSeconds ?? 0) * 1_000)
    steps[i] = { ...step, dueAt }
    t = dueAt
  }
  // No email left: the waits are over, and so is the survey.
  const ended = steps.map((s) => s.doneAt === null && s.outcome === null ? { ...s, doneAt: s.dueAt ?? from } : s)
  const sent = ended.some((s) => s.outcome === "sent")
  return sent
    ? { ...survey, steps: ended, status: "sent" }
    : { ...survey, steps: ended, status: "skipped", reason: survey.reason ?? "no email of the flow was sent" }
}

/** The email step a worker runs next and when: the first one pending, once the steps before it are laid out. */
export const nextDue = (
  stored: Pick<StoredSurvey, "survey" | "claim">
): { readonly position: number; readonly dueAt: Timestamp } | null => {
  if (stored.claim !== null || isFinal(stored.survey.status)) return null
  for (const step of stored.survey.steps) {
    if (step.outcome !== null || step.doneAt !== null) continue
    if (step.type === "email") return step.dueAt === null ? null : { position: step.position, dueAt: step.dueAt }
  }
  return null
}

/** `nextDue`'s time, what a store orders its claims by (null: nothing for a worker to do). */
export const nextDueAt = (stored: Pick<StoredSurvey, "survey" | "claim">): Timestamp | null =>
  nextDue(stored)?.dueAt ?? null

/** Ends every pending step (the one in flight excepted) with `outcome`; the survey becomes `status` with `reason`. */
const endPending = (
  stored: StoredSurvey,
  outcome: StepOutcome,
  status: "cancelled" | "skipped",
  reason: string,
  at: Timestamp
): StoredSurvey | undefined => {
  const { survey, claim } = stored
  if (isFinal(survey.status)) return undefined
  if (!survey.steps.some((s) => pending(s, claim))) return undefined
  return {
    ...stored,
    survey: {
      ...survey,
      status: survey.status === "completed" ? "completed" : status,
      reason: survey.status === "completed" ? survey.reason : reason,
      steps: survey.steps.map((s) => pending(s, claim) ? { ...s, doneAt: at, outcome } : s),
      updatedAt: at
    }
  }
}

/** Cancels what is still to be sent (the order was cancelled or deleted, the flow switched off or deleted). */
export const cancelSurvey = (stored: StoredSurvey, reason: string, at: Timestamp): StoredSurvey | undefined =>
  endPending(stored, "cancelled", "cancelled", reason, at)

/** Skips what is still to be sent (the customer opted out or has no address). */
export const skipSurvey = (stored: StoredSurvey, reason: string, at: Timestamp): StoredSurvey | undefined =>
  endPending(stored, "skipped", "skipped", reason, at)

/**
 * Records how the claimed step ended, releases the claim and lays out the steps after it (the waits before it are
 * over by now).
 */
export const completeClaimed = (stored: StoredSurvey, outcome: StepOutcome, at: Timestamp): StoredSurvey => {
  const position = stored.claim?.position
  if (position === undefined) return stored
  const steps = stored.survey.steps.map((s) =>
    s.position === position
      ? { ...s, doneAt: at, outcome }
      : s.position < position && s.doneAt === null && s.outcome === null
      ? { ...s, doneAt: s.dueAt ?? at }
      : s
  )
  const status = outcome === "sent" && stored.survey.status === "scheduled" ? "sent" : stored.survey.status
  return { ...stored, claim: null, survey: schedule({ ...stored.survey, steps, status, updatedAt: at }, at) }
}

/**
 * What recovery does with a claim its worker left behind: a step that was never handed to the transport runs again
 * (nothing is lost); one that may have been is `failed`, never resent.
 */
export const recoverClaim = (stored: StoredSurvey, at: Timestamp): StoredSurvey =>
  stored.claim === null
    ? stored
    : stored.claim.sendingAt === null
    ? { ...stored, claim: null }
    : completeClaimed(stored, "failed", at)

/** Whether the email step at `position` is the survey's first one (the request; the later ones are reminders). */
export const isFirstEmail = (survey: Survey, position: number): boolean =>
  survey.steps.find((s) => s.type === "email")?.position === position

// ---------------------------------------------------------------------------------------------------------------
// Enrolment

/** How enrolment sees an order's customer: one to email, or why not. */
export type ContactKind = "reachable" | "noAddress" | "optedOut"

export const contactKind = (customer: Pick<Customer, "email" | "emailOptOut"> | undefined): ContactKind =>
  customer === undefined || customer.email.trim() === ""
    ? "noAddress"
    : customer.emailOptOut
    ? "optedOut"
    : "reachable"

const unreachableReasons: Readonly<Record<ContactKind, string | undefined>> = {
  reachable: undefined,
  noAddress: "the customer has no email address",
  optedOut: "the customer opted out of email"
}

/** Why nothing is sent to a customer, or undefined when they can be emailed (docs/DECISIONS.md §48). */
export const unreachable = (customer: Pick<Customer, "email" | "emailOptOut"> | undefined): string | undefined =>
  unreachableReasons[contactKind(customer)]

/** A new survey of the order through the flow, starting at `at`: laid out, or skipped when nothing may be sent. */
export const newSurvey = (input: {
  readonly id: SurveyId
  readonly token: string
  readonly url: string
  readonly flow: SurveyFlow
  readonly order: Order
  readonly customer: Pick<Customer, "email" | "emailOptOut"> | undefined
  readonly at: Timestamp
}): StoredSurvey => {
  const { at, flow, order } = input
  const survey: Survey = {
    id: input.id,
    flowId: flow.id,
    orderId: order.id,
    customerId: order.customerId,
    status: "scheduled",
    reason: null,
    products: distinctProducts(order).map((line) => ({
      productId: line.productId,
      productVariantId: line.productVariantId,
      reviewId: null
    })),
    steps: [...flow.steps].sort((a, b) => a.position - b.position).map((step) => ({
      position: step.position,
      type: step.type,
      dueAt: null,
      doneAt: null,
      outcome: null,
      emailTemplateId: step.type === "email" ? step.emailTemplateId : null,
      waitSeconds: step.type === "wait" ? step.waitSeconds : null
    })),
    url: input.url,
    expiresAt: fromMillis(toMillis(at) + SURVEY_LIFETIME_DAYS * 86_400_000),
    completedAt: null,
    createdAt: at,
    updatedAt: at
  }
  const stored: StoredSurvey = { survey, token: input.token, claim: null }
  const reason = unreachable(input.customer)
  if (reason !== undefined) {
    return skipSurvey(stored, reason, at) ?? { ...stored, survey: { ...survey, status: "skipped", reason } }
  }
  return { ...stored, survey: schedule(survey, at) }
}

/** What a new survey of a flow is, whatever its order: its status, steps and next due step as `newSurvey` lays them out. */
export interface SurveyLayout {
  readonly status: Survey["status"]
  readonly reason: string | null
  readonly steps: ReadonlyArray<SurveyStep>
  readonly nextDue: { readonly position: number; readonly dueAt: Timestamp } | null
}

/**
 * One flow's enrolment at `at` (docs/DECISIONS.md §48), what a store needs to create its surveys set-based: the
 * condition, and the survey's layout for each kind of customer. Every survey of the flow enrolled at one moment is
 * laid out alike (its steps depend on the flow, `at` and the customer's kind only), so a store copies the layout of
 * the order's customer's kind and adds the order's own fields (`newSurvey`'s products, the customer, a token).
 */
export interface EnrolmentPlan {
  readonly flow: SurveyFlow
  readonly condition: FilterAst
  readonly at: Timestamp
  readonly expiresAt: Timestamp
  readonly layouts: Readonly<Record<ContactKind, SurveyLayout>>
}

const contactOf: Readonly<Record<ContactKind, Pick<Customer, "email" | "emailOptOut"> | undefined>> = {
  reachable: { email: "someone@example.com", emailOptOut: false },
  noAddress: undefined,
  optedOut: { email: "someone@example.com", emailOptOut: true }
}

/** The flow's enrolment plan at `at`; none when its condition cannot be read (such a condition never holds). */
export const enrolmentPlan = (flow: SurveyFlow, at: Timestamp): EnrolmentPlan | undefined => {
  const condition = parseCondition(flow.condition)
  if (Result.isFailure(condition)) return undefined
  const layoutOf = (kind: ContactKind): SurveyLayout => {
    const stored = newSurvey({
      id: "" as SurveyId,
      token: "",
      url: "",
      flow,
      order: { id: "", customerId: "", lines: [] } as unknown as Order,
      customer: contactOf[kind],
      at
    })
    const { reason, status, steps } = stored.survey
    return { status, reason, steps, nextDue: nextDue(stored) }
  }
  return {
    flow,
    condition: condition.success,
    at,
    expiresAt: fromMillis(toMillis(at) + SURVEY_LIFETIME_DAYS * 86_400_000),
    layouts: { reachable: layoutOf("reachable"), noAddress: layoutOf("noAddress"), optedOut: layoutOf("optedOut") }
  }
}

/** Whether the plan's flow enrolls the order (its condition holds for the order and its customer's email). */
export const planEnrolls = (plan: EnrolmentPlan, order: Order, customerEmail: string | null): boolean =>
  evaluateFilter(plan.condition, orderField(order, customerEmail))

/** Reasons recorded on cancelled and skipped surveys. */
export const surveyReasons = {
  orderCancelled: "the order was cancelled",
  orderDeleted: "the order was deleted",
  flowOff: "the survey flow was switched off",
  flowDeleted: "the survey flow was deleted",
  templateMissing: "its email template no longer exists",
  expired: "the survey expired before the step was due",
  completed: "the survey was completed",
  renderFailed: "an email could not be rendered"
} as const
