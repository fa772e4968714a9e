/**
 * The flow engine's pure rules (docs/DECISIONS.md §48): triggers, conditions, how a survey is laid out step by step,
 * how a claimed step ends, cancellation and skipping, and the worker's decision for a claimed step.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Result } from "effect"
import { Kernel, Orders, type Setup, Surveys } from "@feedback/core"

const T0 = "2026-02-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp
const at = (seconds: number) => Kernel.Timestamp.fromMillis(Kernel.Timestamp.toMillis(T0) + seconds * 1_000)
const TEMPLATE = "0190f000-0000-7000-8000-0000000000e1" as Kernel.EmailTemplateId
const order = Orders.newOrder("0190f000-0000-7000-8000-0000000000aa" as Kernel.OrderId, T0, {
  customerId: "0190f000-0000-7000-8000-0000000000bb" as Kernel.CustomerId,
  lines: [{
    productId: "0190f000-0000-7000-8000-000000000001" as Kernel.ProductId,
    productVariantId: null,
    quantity: 1
  }],
  metadata: { channel: "web" }
})

type Step = { readonly type: "wait"; readonly waitSeconds: number } | { readonly type: "email" }
const flowOf = (steps: ReadonlyArray<Step>, extra: Partial<Setup.SurveyFlow> = {}): Setup.SurveyFlow => ({
  id: "0190f000-0000-7000-8000-0000000000f1" as Kernel.SurveyFlowId,
  name: "Flow",
  isActive: true,
  triggerEvent: "order.fulfilled",
  condition: "",
  steps: steps.map((s, position) => ({
    id: `0190f000-0000-7000-8000-0000000001${String(position).padStart(2, "0")}`,
    type: s.type,
    position,
    emailTemplateId: s.type === "email" ? TEMPLATE : null,
    url: null,
    waitSeconds: s.type === "wait" ? s.waitSeconds : null
  })),
  metadata: {},
  createdAt: T0,
  updatedAt: T0,
  ...extra
})
/** A new survey of `flow` for `order`, whose customer is `customer` (undefined: the order has none). */
const surveyFor = (flow: Setup.SurveyFlow, customer: Parameters<typeof Surveys.newSurvey>[0]["customer"]) =>
  Surveys.newSurvey({
    id: "0190f000-0000-7000-8000-0000000000c1" as Kernel.SurveyId,
    token: "t".repeat(43),
    url: "u",
    flow,
    order,
    customer,
    at: T0
  })
const survey = (flow: Setup.SurveyFlow) => surveyFor(flow, { email: "a@example.com", emailOptOut: false })
/** Flows' steps: emails and waits of up to `maxWaitSeconds`. */
const arbSteps = (maxWaitSeconds: number, maxLength: number): fc.Arbitrary<Array<Step>> =>
  fc.array(
    fc.oneof(
      fc.constant({ type: "email" } as const),
      fc.integer({ min: 0, max: maxWaitSeconds }).map((waitSeconds) => ({ type: "wait", waitSeconds }) as const)
    ),
    { maxLength }
  )
const claim = (stored: Surveys.StoredSurvey, claimedAt: Kernel.Timestamp.Timestamp): Surveys.StoredSurvey => ({
  ...stored,
  claim: { workerId: "w", claimedAt, position: Surveys.nextDue(stored)!.position, sendingAt: claimedAt }
})

describe("triggers and conditions", () => {
  it("a creation triggers order.created and each status it passes; a cancellation triggers nothing", () => {
    expect(Surveys.triggersOfCreation(["fulfilledAt", "deliveredAt"])).toEqual([
      "order.created",
      "order.fulfilled",
      "order.delivered"
    ])
    expect(Surveys.triggersOfMove(["cancelledAt"])).toEqual([])
  })
  it("a condition is \"\" or a filter document over the order; anything else names body.condition", () => {
    expect(Result.isSuccess(Surveys.parseCondition(""))).toBe(true)
    expect(Surveys.conditionHolds(JSON.stringify({ "metadata.channel": "web", status: "open" }), order, null)).toBe(
      true
    )
    expect(Surveys.conditionHolds(JSON.stringify({ "customer.email": "x@example.com" }), order, "a@example.com")).toBe(
      false
    )
    for (const bad of ["web", "[1]", "{\"total\":1}", "{\"status\":{\"$foo\":1}}"]) {
      const parsed = Surveys.parseCondition(bad)
      expect(Result.isFailure(parsed) && parsed.failure.issues[0]!.path.startsWith("body.condition")).toBe(true)
    }
  })
})

describe("a survey's steps", () => {
  it("lays out the waits up to the first email; the rest waits for it", () => {
    const s = survey(
      flowOf([{ type: "wait", waitSeconds: 60 }, { type: "email" }, { type: "wait", waitSeconds: 30 }, {
        type: "email"
      }])
    )
    expect(s.survey.steps.map((x) => x.dueAt)).toEqual([at(60), at(60), null, null])
    expect(Surveys.nextDue(s)).toEqual({ position: 1, dueAt: at(60) })
    const done = Surveys.completeClaimed(claim(s, at(70)), "sent", at(75))
    expect(done.claim).toBeNull()
    expect(done.survey.status).toBe("sent")
    expect(done.survey.steps.map((x) => [x.dueAt, x.doneAt, x.outcome])).toEqual([
      [at(60), at(60), null],
      [at(60), at(75), "sent"],
      [at(105), null, null],
      [at(105), null, null]
    ])
    const last = Surveys.completeClaimed(claim(done, at(105)), "failed", at(106))
    expect(Surveys.nextDue(last)).toBeNull()
    expect(last.survey.status).toBe("sent")
  })

  it("a survey whose customer cannot be emailed is skipped with its reason; nothing is due", () => {
    const s = surveyFor(flowOf([{ type: "email" }]), { email: "a@example.com", emailOptOut: true })
    expect([s.survey.status, s.survey.reason, s.survey.steps[0]!.outcome, Surveys.nextDue(s)]).toEqual([
      "skipped",
      "the customer opted out of email",
      "skipped",
      null
    ])
  })

  it("cancelling ends every pending step but the one in flight; a cancelled survey is never due again", () => {
    const s = claim(survey(flowOf([{ type: "email" }, { type: "wait", waitSeconds: 10 }, { type: "email" }])), T0)
    const cancelled = Surveys.cancelSurvey(s, "the order was cancelled", at(1))!
    expect(cancelled.survey.steps.map((x) => x.outcome)).toEqual([null, "cancelled", "cancelled"])
    expect(cancelled.survey.status).toBe("cancelled")
    const finished = Surveys.completeClaimed(cancelled, "sent", at(2))
    expect(finished.survey.steps.map((x) => x.outcome)).toEqual(["sent", "cancelled", "cancelled"])
    expect([finished.survey.status, Surveys.nextDue(finished), Surveys.cancelSurvey(finished, "again", at(3))]).toEqual(
      [
        "cancelled",
        null,
        undefined
      ]
    )
  })

  it("whatever the flow and the outcomes, each email step is due at most once and ends once", () => {
    fc.assert(
      fc.property(
        arbSteps(1_000, 8),
        fc.array(fc.constantFrom("sent", "failed", "skipped"), { minLength: 8, maxLength: 8 }),
        (steps, outcomes) => {
          let s = survey(flowOf(steps))
          const ran: Array<number> = []
          let clock = 0
          for (let i = 0; i < 20; i++) {
            const due = Surveys.nextDue(s)
            if (due === null) break
            expect(ran).not.toContain(due.position)
            ran.push(due.position)
            clock = Math.max(clock, (Kernel.Timestamp.toMillis(due.dueAt) - Kernel.Timestamp.toMillis(T0)) / 1_000) + 1
            s = Surveys.completeClaimed(claim(s, at(clock)), outcomes[i % outcomes.length] as "sent", at(clock))
          }
          expect(ran).toEqual(steps.flatMap((step, position) => step.type === "email" ? [position] : []))
          expect(s.survey.steps.every((x) => x.doneAt !== null)).toBe(true)
          expect(["sent", "skipped"]).toContain(s.survey.status)
        }
      )
    )
  })
})

describe("recoverClaim", () => {
  it("runs again a claimed step never handed to the transport; fails one that may have been sent", () => {
    const s = survey(flowOf([{ type: "email" }, { type: "email" }]))
    const claimed = claim(s, T0)
    const released = Surveys.recoverClaim({ ...claimed, claim: { ...claimed.claim!, sendingAt: null } }, at(600))
    expect([released.claim, Surveys.nextDue(released)]).toEqual([null, { position: 0, dueAt: T0 }])
    const failed = Surveys.recoverClaim(claimed, at(600))
    expect([failed.survey.steps[0]!.outcome, Surveys.nextDue(failed)]).toEqual(["failed", {
      position: 1,
      dueAt: at(600)
    }])
  })
})

describe("decideStep", () => {
  const s = survey(flowOf([{ type: "email" }, { type: "email" }])).survey
  const base = {
    survey: s,
    position: 0,
    flow: flowOf([]),
    order,
    customer: { id: order.customerId, email: "a@example.com", emailOptOut: false } as never,
    template: { id: TEMPLATE, name: "n", type: "reviewRequest", subject: "S", body: "B", createdAt: T0, updatedAt: T0 },
    at: T0
  }
  it("sends only when the flow is on, the order stands, the customer can be emailed and the template exists", () => {
    expect(Surveys.decideStep(base)._tag).toBe("Send")
    expect(Surveys.decideStep({ ...base, flow: undefined })).toEqual({
      _tag: "Cancel",
      reason: "the survey flow was deleted"
    })
    expect(Surveys.decideStep({ ...base, flow: flowOf([], { isActive: false }) })).toEqual({
      _tag: "Cancel",
      reason: "the survey flow was switched off"
    })
    expect(Surveys.decideStep({ ...base, order: { ...order, status: "cancelled" } })).toEqual({
      _tag: "Cancel",
      reason: "the order was cancelled"
    })
    expect(Surveys.decideStep({ ...base, order: undefined })).toEqual({
      _tag: "Cancel",
      reason: "the order was deleted"
    })
    expect(Surveys.decideStep({ ...base, customer: { email: "a@example.com", emailOptOut: true } as never })._tag).toBe(
      "Skip"
    )
    expect(Surveys.decideStep({ ...base, template: undefined })).toEqual({ _tag: "End", outcome: "failed" })
    expect(Surveys.decideStep({ ...base, at: s.expiresAt })).toEqual({
      _tag: "Cancel",
      reason: "the survey expired before the step was due"
    })
  })
  it("after completion, the request still goes out but a reminder is skipped", () => {
    const completed = { ...s, status: "completed" as const }
    expect(Surveys.decideStep({ ...base, survey: completed, position: 0 })._tag).toBe("Send")
    expect(Surveys.decideStep({ ...base, survey: completed, position: 1 })).toEqual({ _tag: "End", outcome: "skipped" })
  })
})

describe("enrolment plans", () => {
  it("a plan lays out every survey of the flow at its moment as newSurvey does, by the customer's kind", () => {
    fc.assert(fc.property(
      arbSteps(10 ** 7, 6),
      fc.constantFrom(
        { email: "a@example.com", emailOptOut: false },
        { email: "a@example.com", emailOptOut: true },
        { email: "  ", emailOptOut: false },
        undefined
      ),
      (steps, customer) => {
        const flow = flowOf(steps)
        const plan = Surveys.enrolmentPlan(flow, T0)!
        const stored = surveyFor(flow, customer)
        const layout = plan.layouts[Surveys.contactKind(customer)]
        expect(layout).toEqual({
          status: stored.survey.status,
          reason: stored.survey.reason,
          steps: stored.survey.steps,
          nextDue: Surveys.nextDue(stored)
        })
        expect([plan.expiresAt, plan.at]).toEqual([stored.survey.expiresAt, stored.survey.createdAt])
      }
    ))
  })

  it("a plan holds the flow's condition; an unreadable stored condition makes no plan", () => {
    const plan = Surveys.enrolmentPlan(
      flowOf([{ type: "email" }], { condition: "{\"metadata.channel\":\"web\"}" }),
      T0
    )!
    expect(Surveys.planEnrolls(plan, order, null)).toBe(true)
    expect(Surveys.planEnrolls(plan, { ...order, metadata: { channel: "pos" } }, null)).toBe(false)
    expect(Surveys.enrolmentPlan(flowOf([{ type: "email" }], { condition: "web only" }), T0)).toBeUndefined()
  })
})
