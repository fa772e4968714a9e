/**
 * Enrolment and cancellation of surveys (docs/DECISIONS.md §48), run inside the unit of work of the change that calls
 * for them: an order created or moved enrolls it in the active flows its trigger starts; an order cancelled or
 * deleted, a flow switched off or deleted, cancels what is still to be sent. Built from the stores once, by each
 * service that changes such records (`Orders`, `ReviewAutomation`, `Surveys`).
 */
import { Context, Effect, Option } from "effect"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { CustomerId, OrderId, OrganizationId, SurveyFlowId, SurveyId } from "../kernel/Ids.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import type { Order } from "../orders/Order.ts"
import type { ReviewTriggerEvent, SurveyFlow } from "../setup/ReviewsSetupPlan.ts"
import { ReviewAutomationRepository } from "../setup/ReviewAutomationRepository.ts"
import { generateSurveyToken, surveyUrl } from "./Survey.ts"
import { type SurveyContact, SurveyRepository } from "./SurveyRepository.ts"
import { cancelSurvey, enrollingFlows, newSurvey, type StoredSurvey } from "./SurveyRules.ts"

/** Where survey links point: `PUBLIC_API_BASE_URL`, or the server's own URL (docs/DECISIONS.md §48). */
export const SurveyLinks = Context.Reference<{ readonly baseUrl: string }>("feedback/SurveyLinks", {
  defaultValue: () => ({ baseUrl: "http://localhost:3000" })
})

/** An order that reached trigger events. */
export interface OrderTriggers {
  readonly order: Order
  readonly triggers: ReadonlyArray<ReviewTriggerEvent>
}

export const makeSurveyEnrolment = Effect.gen(function*() {
  const surveys = yield* SurveyRepository
  const automation = yield* ReviewAutomationRepository
  const ids = yield* IdGenerator
  const links = yield* SurveyLinks

  /** One store call for every customer of the batch (a bulk update may enroll 100,000 orders). */
  const customersOf = (organizationId: OrganizationId, customerIds: Iterable<CustomerId>) =>
    surveys.contactsOf(organizationId, [...new Set(customerIds)])

  /** A survey of `order` through `flow` starting at `at`, for a customer as found (or not). */
  const surveyOf = (flow: SurveyFlow, order: Order, customer: SurveyContact | undefined, at: Timestamp) =>
    Effect.map(nextIdFrom<SurveyId>(ids), (id) => {
      const token = generateSurveyToken()
      return newSurvey({ id, token, url: surveyUrl(links.baseUrl, token), flow, order, customer, at })
    })

  /** Enrolls each order in the active flows its triggers start (conditions hold); answers the surveys created. */
  const enroll = (organizationId: OrganizationId, changes: ReadonlyArray<OrderTriggers>, at: Timestamp) =>
    Effect.gen(function*() {
      const triggered = changes.filter((c) => c.triggers.length > 0)
      if (triggered.length === 0) return [] as ReadonlyArray<StoredSurvey>
      const flows = (yield* automation.listSurveyFlows(organizationId)).filter((f) => f.isActive)
      if (flows.length === 0) return [] as ReadonlyArray<StoredSurvey>
      const customers = yield* customersOf(organizationId, triggered.map((c) => c.order.customerId))
      const built: Array<StoredSurvey> = []
      for (const { order, triggers } of triggered) {
        const customer = customers.get(order.customerId)
        for (const flow of enrollingFlows(flows, triggers, order, customer?.email ?? null)) {
          built.push(yield* surveyOf(flow, order, customer, at))
        }
      }
      if (built.length === 0) return built
      const inserted = yield* surveys.insertSurveys(organizationId, built)
      return built.filter((_, i) => inserted[i] === true)
    })

  /** A manual enrolment (`POST /surveys`): whatever the trigger and condition; false when the order has one already. */
  const enrollManually = (organizationId: OrganizationId, flow: SurveyFlow, order: Order, at: Timestamp) =>
    Effect.gen(function*() {
      const customers = yield* customersOf(organizationId, [order.customerId])
      const stored = yield* surveyOf(flow, order, customers.get(order.customerId), at)
      const [inserted] = yield* surveys.insertSurveys(organizationId, [stored])
      return inserted === true ? Option.some(stored) : Option.none<StoredSurvey>()
    })

  const cancelAll = (
    organizationId: OrganizationId,
    active: ReadonlyArray<StoredSurvey>,
    reason: string,
    at: Timestamp
  ) =>
    Effect.gen(function*() {
      const cancelled = active.flatMap((s) => cancelSurvey(s, reason, at) ?? [])
      if (cancelled.length > 0) yield* surveys.saveSurveys(organizationId, cancelled)
      return cancelled
    })

  /** Cancels the pending steps of the orders' surveys (the orders were cancelled or deleted). */
  const cancelForOrders = (
    organizationId: OrganizationId,
    orderIds: ReadonlyArray<OrderId>,
    reason: string,
    at: Timestamp
  ) =>
    orderIds.length === 0
      ? Effect.succeed([] as ReadonlyArray<StoredSurvey>)
      : Effect.flatMap(surveys.lockActiveOfOrders(organizationId, orderIds), (active) =>
        cancelAll(organizationId, active, reason, at))

  /** Cancels the pending steps of the flow's surveys (it was switched off or deleted). */
  const cancelForFlow = (organizationId: OrganizationId, flowId: SurveyFlowId, reason: string, at: Timestamp) =>
    Effect.flatMap(
      surveys.lockActiveOfFlow(organizationId, flowId),
      (active) => cancelAll(organizationId, active, reason, at)
    )

  return { enroll, enrollManually, cancelForOrders, cancelForFlow }
})

export type SurveyEnrolment = Effect.Success<typeof makeSurveyEnrolment>
