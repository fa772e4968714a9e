/**
 * Enrolment and cancellation of surveys (docs/DECISIONS.md §48), run inside the unit of work of the change that calls
 * for them: an order created or moved enrolls it in the active flows its trigger starts; an order cancelled or
 * deleted, a flow switched off or deleted, cancels what is still to be sent. Built from the stores once, by each
 * service that changes such records (`Orders`, `ReviewAutomation`, `Surveys`).
 */
import { Context, Effect, Option } from "effect"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { OrderId, OrganizationId, SurveyFlowId, SurveyId } from "../kernel/Ids.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import { ORDER_STATUSES, type Order, type OrderStatus } from "../orders/Order.ts"
import type { MoveFollowUp } from "../orders/OrderRepository.ts"
import { statusMoves } from "../orders/OrderRules.ts"
import type { ReviewTriggerEvent, SurveyFlow } from "../setup/ReviewsSetupPlan.ts"
import { ReviewAutomationRepository } from "../setup/ReviewAutomationRepository.ts"
import { generateSurveyToken, surveyUrl } from "./Survey.ts"
import { type SurveyContact, SurveyRepository } from "./SurveyRepository.ts"
import { cancelSurvey, enrolmentPlan, newSurvey, type StoredSurvey, triggersOfMove } from "./SurveyRules.ts"

/** Where survey links point: `PUBLIC_API_BASE_URL`, or the server's own URL (docs/DECISIONS.md §48). */
export const SurveyLinks = Context.Reference<{ readonly baseUrl: string }>("feedback/SurveyLinks", {
  defaultValue: () => ({ baseUrl: "http://localhost:3000" })
})

/** An order that reached trigger events. */
export interface OrderTriggers {
  readonly orderId: OrderId
  readonly triggers: ReadonlyArray<ReviewTriggerEvent>
}

export const makeSurveyEnrolment = Effect.gen(function*() {
  const surveys = yield* SurveyRepository
  const automation = yield* ReviewAutomationRepository
  const ids = yield* IdGenerator
  const links = yield* SurveyLinks

  /** A survey of `order` through `flow` starting at `at`, for a customer as found (or not). */
  const surveyOf = (flow: SurveyFlow, order: Order, customer: SurveyContact | undefined, at: Timestamp) =>
    Effect.map(nextIdFrom<SurveyId>(ids), (id) => {
      const token = generateSurveyToken()
      return newSurvey({ id, token, url: surveyUrl(links.baseUrl, token), flow, order, customer, at })
    })

  /**
   * Enrolls each order in the active flows its triggers start (conditions hold), set-based in the store: one call per
   * set of triggers (a bulk update's orders share at most a few). Answers how many surveys were created.
   */
  const enroll = (organizationId: OrganizationId, changes: ReadonlyArray<OrderTriggers>, at: Timestamp) =>
    Effect.gen(function*() {
      const byTriggers = new Map<string, { triggers: ReadonlyArray<ReviewTriggerEvent>; orderIds: Array<OrderId> }>()
      for (const { orderId, triggers } of changes) {
        if (triggers.length === 0) continue
        const key = triggers.join(" ")
        const group = byTriggers.get(key) ?? { triggers, orderIds: [] }
        group.orderIds.push(orderId)
        byTriggers.set(key, group)
      }
      if (byTriggers.size === 0) return 0
      const flows = (yield* automation.listSurveyFlows(organizationId)).filter((f) => f.isActive)
      let created = 0
      for (const { orderIds, triggers } of byTriggers.values()) {
        const plans = flows.filter((f) => (triggers as ReadonlyArray<string>).includes(f.triggerEvent)).flatMap((f) =>
          enrolmentPlan(f, at) ?? []
        )
        if (plans.length > 0) created += yield* surveys.enrollOrders(organizationId, orderIds, plans, links.baseUrl)
      }
      return created
    })

  /**
   * What a bulk move to `to` at `at` enrolls, for the store to do in the move itself (docs/DECISIONS.md §75): for each
   * status an order may move to `to` from, the plans of the active flows that move triggers (none: no flow read).
   */
  const followUpOfMove = (organizationId: OrganizationId, to: OrderStatus, at: Timestamp) =>
    Effect.gen(function*() {
      const moves = ORDER_STATUSES.flatMap((from) => {
        const triggers: ReadonlyArray<string> = triggersOfMove(statusMoves[from][to] ?? [])
        return triggers.length === 0 ? [] : [{ from, triggers }]
      })
      const flows = moves.length === 0 ? [] : (yield* automation.listSurveyFlows(organizationId)).flatMap((flow) => {
        const plan = flow.isActive ? enrolmentPlan(flow, at) : undefined
        return plan === undefined ? [] : [plan]
      })
      const enrol = moves.flatMap(({ from, triggers }) => {
        const plans = flows.filter((plan) => triggers.includes(plan.flow.triggerEvent))
        return plans.length === 0 ? [] : [{ from, plans }]
      })
      return { enrol, linkBase: links.baseUrl, withIds: to === "cancelled" } satisfies MoveFollowUp
    })

  /** A manual enrolment (`POST /surveys`): whatever the trigger and condition; false when the order has one already. */
  const enrollManually = (organizationId: OrganizationId, flow: SurveyFlow, order: Order, at: Timestamp) =>
    Effect.gen(function*() {
      const customers = yield* surveys.contactsOf(organizationId, [order.customerId])
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

  return { enroll, followUpOfMove, enrollManually, cancelForOrders, cancelForFlow }
})

export type SurveyEnrolment = Effect.Success<typeof makeSurveyEnrolment>
