/**
 * Sends the due steps of surveys (docs/DECISIONS.md §48), in the background of any number of processes.
 *
 * - Due steps are claimed from the store (`SurveyRepository.claimDue`, committed before anything is sent), so each
 *   is handled by one worker; a restart loses none: an unclaimed due step waits in the store.
 * - Never twice: claimed steps are marked sending (committed, a wave at a time) just before the transport is called,
 *   and their outcomes are recorded only by the worker that claimed them. A worker that dies leaves its claims; once
 *   older than any send can take, recovery runs again the steps it had not started (nothing is lost) and records
 *   `failed` for those it was sending, never resending them (the mail server may have accepted them); the steps
 *   after them go on.
 * - Before sending, each step is checked against the records as they are when its wave is read: a flow switched off
 *   or deleted (as the claim read it), an order cancelled or deleted cancel the survey; a customer who opted out
 *   skips it; a reminder after the survey was completed is skipped.
 * Time comes from `Clock`, so tests run whole flows with `TestClock`.
 */
import { Cause, Effect, Fiber, Option, Result } from "effect"
import { CatalogRepository } from "../catalog/CatalogRepository.ts"
import type { Customer, Product } from "../catalog/Catalog.ts"
import { Unsubscribes } from "../catalog/Unsubscribes.ts"
import type { OrganizationId, SurveyId } from "../kernel/Ids.ts"
import { fromMillis, now, type Timestamp, toMillis } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import type { Order } from "../orders/Order.ts"
import { OrderRepository } from "../orders/OrderRepository.ts"
import { OrganizationRepository } from "../organizations/OrganizationRepository.ts"
import { type EmailMessage, Mailer, type MailerResult, unsubscribableMessage } from "../questions/Mailer.ts"
import { type EmailRenderError, type EmailVariables, renderEmail } from "../setup/EmailTemplates.ts"
import type { EmailTemplate, SurveyFlow } from "../setup/ReviewsSetupPlan.ts"
import { ReviewAutomationRepository } from "../setup/ReviewAutomationRepository.ts"
import type { StepOutcome, Survey } from "./Survey.ts"
import { type ClaimedSurvey, SurveyRepository } from "./SurveyRepository.ts"
import {
  cancelSurvey,
  completeClaimed,
  isFirstEmail,
  recoverClaim,
  skipSurvey,
  type StoredSurvey,
  surveyReasons,
  unreachable
} from "./SurveyRules.ts"

export interface SurveyWorkerSettings {
  /** Names this worker's claims; unique per process. */
  readonly workerId: string
  /** The longest an idle worker waits before looking again when nothing wakes it. */
  readonly pollIntervalMs: number
  /** A claim older than this is from a worker that died: its step is failed, not resent. */
  readonly interruptedAfterMs: number
  /** Surveys claimed at a time. */
  readonly batchSize: number
  /** Claimed steps handled at once (each at most one message with the transport). */
  readonly concurrency: number
}

export const defaultSurveyWorkerSettings = (workerId: string): SurveyWorkerSettings => ({
  workerId,
  pollIntervalMs: 1_000,
  interruptedAfterMs: 10 * 60_000,
  // Three waves a claim; a wave's reads, mark and record are one statement each (docs/DECISIONS.md §61), so a larger
  // wave makes fewer of them per email.
  batchSize: 48,
  concurrency: 16
})

/**
 * Waves a worker has marked as sending at once (docs/DECISIONS.md §61): the next wave is marked while the previous
 * one is with the transport, so a killed process leaves at most this many waves failed.
 */
export const WAVES_IN_FLIGHT = 2

/** What a template is rendered with (shared DECISIONS §17's variables), as the records are at send time. */
export interface SurveyEmailContext {
  readonly organizationName: string
  readonly survey: Survey
  readonly order: Order
  readonly customer: Customer
  /** The survey's products as found; one deleted since enrolment is left out. */
  readonly products: ReadonlyArray<Product>
  readonly unsubscribeUrl: string
}

/** The variables of shared DECISIONS §17 for one survey email. Pure. */
export const surveyEmailVariables = (context: SurveyEmailContext): EmailVariables => ({
  organization: { name: context.organizationName },
  customer: {
    firstName: context.customer.firstName,
    lastName: context.customer.lastName,
    email: context.customer.email
  },
  order: { orderNumber: context.order.orderNumber, placedAt: context.order.placedAt },
  products: context.products.map((p) => ({ title: p.title, url: p.url, imageUrl: p.imageUrl })),
  survey: { url: context.survey.url },
  unsubscribe: { url: context.unsubscribeUrl }
})

/**
 * The message of an email step: the template rendered with the Liquid renderer (HTML with its plain-text part), and
 * the `List-Unsubscribe` headers pointing at `unsubscribe.url`. A template that hits a bound at send time is an
 * `EmailRenderError`, which fails the step (never retried: the same template would fail again).
 */
export const renderSurveyEmail = (
  id: string,
  template: Pick<EmailTemplate, "subject" | "body">,
  context: SurveyEmailContext
): Result.Result<EmailMessage, EmailRenderError> =>
  Result.map(
    renderEmail(template, surveyEmailVariables(context)),
    (email) => unsubscribableMessage(id, context.customer.email ?? "", email, context.unsubscribeUrl)
  )

/** What to do with a claimed step, given the records as they are now. Pure. */
export type StepDecision =
  | { readonly _tag: "Cancel"; readonly reason: string }
  | { readonly _tag: "Skip"; readonly reason: string }
  | { readonly _tag: "End"; readonly outcome: StepOutcome }
  | { readonly _tag: "Send"; readonly template: EmailTemplate; readonly customer: Customer; readonly order: Order }

export const decideStep = (input: {
  readonly survey: Survey
  readonly position: number
  readonly flow: SurveyFlow | undefined
  readonly order: Order | undefined
  readonly customer: Customer | undefined
  readonly template: EmailTemplate | undefined
  /** Now: a survey past its `expiresAt` sends nothing more (its link no longer works). */
  readonly at: Timestamp
}): StepDecision => {
  const { customer, flow, order, position, survey } = input
  if (input.at >= survey.expiresAt) return { _tag: "Cancel", reason: surveyReasons.expired }
  if (flow === undefined) return { _tag: "Cancel", reason: surveyReasons.flowDeleted }
  if (!flow.isActive) return { _tag: "Cancel", reason: surveyReasons.flowOff }
  if (order === undefined) return { _tag: "Cancel", reason: surveyReasons.orderDeleted }
  if (order.status === "cancelled") return { _tag: "Cancel", reason: surveyReasons.orderCancelled }
  const unsendable = unreachable(customer)
  if (unsendable !== undefined || customer === undefined) {
    return { _tag: "Skip", reason: unsendable ?? "the customer has no email address" }
  }
  if (survey.status === "completed" && !isFirstEmail(survey, position)) return { _tag: "End", outcome: "skipped" }
  if (input.template === undefined) return { _tag: "End", outcome: "failed" }
  return { _tag: "Send", template: input.template, customer, order }
}

/** How the transport's answer ends the step: only an accepted (or, without SMTP, logged) message is `sent`. */
export const stepOutcomeOf = (result: MailerResult): StepOutcome =>
  result._tag === "Sent" || result._tag === "Logged" ? "sent" : "failed"

/** The survey after a decision that sent nothing or after the send's outcome, with the claim released. */
const applyDecision = (
  stored: StoredSurvey,
  decision: StepDecision,
  outcome: StepOutcome | undefined,
  at: Timestamp
): StoredSurvey => {
  const released = { ...stored, claim: null }
  switch (decision._tag) {
    case "Cancel":
      return cancelSurvey(released, decision.reason, at) ?? released
    case "Skip":
      return skipSurvey(released, decision.reason, at) ?? released
    case "End":
      return completeClaimed(stored, decision.outcome, at)
    case "Send":
      return completeClaimed(stored, outcome ?? "failed", at)
  }
}

type SendingServices =
  | SurveyRepository
  | ReviewAutomationRepository
  | OrderRepository
  | CatalogRepository
  | OrganizationRepository
  | Mailer
  | Unsubscribes
  | UnitOfWork

const orUndefined = <A>(o: Option.Option<A>): A | undefined => Option.getOrUndefined(o)

/** How a claimed step ended: its record's change, applied to the survey as it is when recorded. */
interface StepEnd {
  readonly claimed: ClaimedSurvey
  readonly finish: (stored: StoredSurvey) => StoredSurvey
}

/**
 * Records how steps ended, in one unit of work (a statement per organization to lock, one to save): each only while
 * its claim is still this worker's (not recovered, not deleted). Surveys are locked per organization in turn, each
 * organization's by id, the order every writer of surveys locks in.
 */
const recordEnds = (ends: ReadonlyArray<StepEnd>, workerId: string) =>
  Effect.gen(function*() {
    if (ends.length === 0) return
    const repo = yield* SurveyRepository
    const byOrganization = new Map<OrganizationId, Map<string, StepEnd>>()
    for (const end of ends) {
      const mine = byOrganization.get(end.claimed.organizationId) ?? new Map<string, StepEnd>()
      mine.set(end.claimed.survey.id, end)
      byOrganization.set(end.claimed.organizationId, mine)
    }
    yield* UnitOfWork.use((uow) =>
      uow.transaction(Effect.forEach(
        [...byOrganization].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        ([organizationId, mine]) =>
          Effect.gen(function*() {
            const orderIds = [...new Set([...mine.values()].map((e) => e.claimed.survey.orderId))]
            const current = yield* repo.lockActiveOfOrders(organizationId, orderIds)
            const finished = current.flatMap((stored) => {
              const end = mine.get(stored.survey.id)
              return end === undefined || stored.claim?.workerId !== workerId ? [] : [end.finish(stored)]
            })
            yield* repo.saveSurveys(organizationId, finished)
          }),
        { discard: true }
      ))
    )
  })

/**
 * Reads the steps of one claimed batch have in common (an organization, its flows and templates, a set of products),
 * made at most once per batch: each is the record as it was when the batch's first step read it.
 */
export type SharedReads = <A, R>(key: string, read: Effect.Effect<A, never, R>) => Effect.Effect<A, never, R>

export const sharedReads = (): SharedReads => {
  const memo = new Map<string, Effect.Effect<any, never, any>>()
  return (key, read) =>
    Effect.suspend(() => {
      const hit = memo.get(key)
      if (hit !== undefined) return hit
      return Effect.flatMap(Effect.cached(read), (cached) => {
        memo.set(key, cached)
        return cached
      })
    })
}

/** The steps of a wave by organization, in wave order: reads and writes of surveys are scoped to one. */
const byOrganization = (wave: ReadonlyArray<ClaimedSurvey>): Map<OrganizationId, Array<ClaimedSurvey>> => {
  const groups = new Map<OrganizationId, Array<ClaimedSurvey>>()
  for (const claimed of wave) {
    const group = groups.get(claimed.organizationId)
    if (group === undefined) groups.set(claimed.organizationId, [claimed])
    else group.push(claimed)
  }
  return groups
}

/** A claimed step decided, and rendered when it sends: what its wave hands to the transport or records at once. */
type PreparedStep =
  | { readonly _tag: "Ended"; readonly end: StepEnd }
  | {
    readonly _tag: "Send"
    readonly claimed: ClaimedSurvey
    readonly decision: Extract<StepDecision, { readonly _tag: "Send" }>
    readonly message: EmailMessage
  }

const ended = (claimed: ClaimedSurvey, decision: StepDecision, at: Timestamp): PreparedStep => ({
  _tag: "Ended",
  end: { claimed, finish: (stored) => applyDecision(stored, decision, undefined, at) }
})

/** A step whose template hit a bound at send time: failed with the reason, never retried; nothing is sent. */
const renderFailed = (claimed: ClaimedSurvey, position: number, error: EmailRenderError, at: Timestamp) =>
  Effect.as(
    Effect.logWarning("survey email not rendered", {
      surveyId: claimed.survey.id,
      position,
      reason: `${surveyReasons.renderFailed}: ${error.message}`
    }),
    {
      _tag: "Ended",
      end: {
        claimed,
        finish: (stored: StoredSurvey) => {
          const failed = completeClaimed(stored, "failed", at)
          return { ...failed, survey: { ...failed.survey, reason: `${surveyReasons.renderFailed}: ${error.message}` } }
        }
      }
    } satisfies PreparedStep
  )

/**
 * Decides one organization's steps of a wave against the records as they are now, and renders the emails of those
 * that send. The orders, the customers and the unsubscribe links are read in one statement each; the flow, the
 * templates, the organization and the products are shared by the claim.
 */
const prepareSteps = (organizationId: OrganizationId, steps: ReadonlyArray<ClaimedSurvey>, shared: SharedReads) =>
  Effect.gen(function*() {
    const automation = yield* ReviewAutomationRepository
    const [orders, customers] = yield* Effect.all([
      OrderRepository.use((r) => r.findOrders(organizationId, steps.map((c) => c.survey.orderId))),
      CatalogRepository.use((r) => r.findCustomers(organizationId, steps.map((c) => c.survey.customerId)))
    ], { concurrency: 2 })
    const orderById = new Map(orders.map((o) => [o.id, o]))
    const customerById = new Map(customers.map((c) => [c.id, c]))
    const at = yield* now
    const decided: Array<{ readonly claimed: ClaimedSurvey; readonly position: number; decision: StepDecision }> = []
    for (const claimed of steps) {
      const { survey } = claimed
      const position = claimed.claim!.position
      const templateId = survey.steps.find((s) => s.position === position)?.emailTemplateId
      const flow = orUndefined(
        yield* shared(
          `flow:${organizationId}:${survey.flowId}`,
          automation.findSurveyFlow(organizationId, survey.flowId)
        )
      )
      const template = templateId == null ? undefined : orUndefined(
        yield* shared(
          `template:${organizationId}:${templateId}`,
          automation.findEmailTemplate(organizationId, templateId)
        )
      )
      const decision = decideStep({
        survey,
        position,
        flow,
        order: orderById.get(survey.orderId),
        customer: customerById.get(survey.customerId),
        template,
        at
      })
      decided.push({ claimed, position, decision })
    }
    const sending = decided.flatMap((d) => d.decision._tag === "Send" ? [d.claimed.survey.customerId] : [])
    const unsubscribeUrls = sending.length === 0
      ? new Map<string, string>()
      : yield* Unsubscribes.use((u) => u.urlsFor(organizationId, [...new Set(sending)]))
    const organization = sending.length === 0 ? Option.none() : yield* shared(
      `organization:${organizationId}`,
      OrganizationRepository.use((r) => r.findById(organizationId))
    )
    const prepared: Array<PreparedStep> = []
    for (const { claimed, decision, position } of decided) {
      const { survey } = claimed
      const unsubscribeUrl = unsubscribeUrls.get(survey.customerId)
      if (decision._tag !== "Send") {
        prepared.push(ended(claimed, decision, at))
        continue
      }
      if (unsubscribeUrl === undefined) {
        // The customer was deleted since the read: decided as if the read had missed them.
        prepared.push(ended(claimed, { _tag: "Skip", reason: unreachable(undefined)! }, at))
        continue
      }
      const productIds = survey.products.map((p) => p.productId)
      const products = yield* shared(
        `products:${organizationId}:${productIds.join(",")}`,
        CatalogRepository.use((r) => r.findProducts(organizationId, productIds))
      )
      const byId = new Map(products.map((p) => [p.id, p]))
      const rendered = renderSurveyEmail(`${survey.id}/${position}`, decision.template, {
        organizationName: Option.match(organization, { onNone: () => "", onSome: (o) => o.name }),
        survey,
        order: decision.order,
        customer: decision.customer,
        // In the survey's order (the order's lines), whatever order the store answers in.
        products: survey.products.flatMap((p) => {
          const product = byId.get(p.productId)
          return product === undefined ? [] : [product]
        }),
        unsubscribeUrl
      })
      prepared.push(
        Result.isFailure(rendered)
          ? yield* renderFailed(claimed, position, rendered.failure, at)
          : { _tag: "Send", claimed, decision, message: rendered.success }
      )
    }
    return prepared
  })

/**
 * Reads, decides and renders a wave of claimed steps (rendered before they are marked sending, so a template that
 * cannot render fails its step and nothing reaches the transport).
 */
const prepareWave = (wave: ReadonlyArray<ClaimedSurvey>, shared: SharedReads) =>
  Effect.map(
    Effect.forEach(byOrganization(wave), ([organizationId, steps]) => prepareSteps(organizationId, steps, shared)),
    (groups) => groups.flat()
  )

/**
 * Sends a prepared wave: marks the steps that send as sending in one committed write, hands them to the transport at
 * once, and records every step's end in one unit of work. A step whose claim is no longer this worker's is neither
 * sent nor recorded.
 */
const sendWave = (prepared: ReadonlyArray<PreparedStep>, settings: SurveyWorkerSettings) =>
  Effect.gen(function*() {
    const sends = prepared.flatMap((p) => p._tag === "Send" ? [p] : [])
    // Committed before the transport is called: from here on, a crash means `failed`, never a second send.
    const ours = sends.length === 0 ?
      new Set<SurveyId>() :
      yield* SurveyRepository.use((r) =>
        Effect.flatMap(now, (at) =>
          r.markSending(
            settings.workerId,
            at,
            sends.map((p) => ({ organizationId: p.claimed.organizationId, id: p.claimed.survey.id }))
          ))
      )
    const mailer = yield* Mailer
    const sent = yield* Effect.forEach(
      sends.filter((p) => ours.has(p.claimed.survey.id)),
      (p) =>
        mailer.send(p.message).pipe(
          Effect.catchCause((cause) =>
            Effect.succeed<MailerResult>({ _tag: "Uncertain", error: Cause.pretty(cause).split("\n")[0] ?? "defect" })
          ),
          Effect.flatMap((result) =>
            Effect.map(now, (at): StepEnd => ({
              claimed: p.claimed,
              finish: (stored) => applyDecision(stored, p.decision, stepOutcomeOf(result), at)
            }))
          )
        ),
      { concurrency: "unbounded" }
    )
    yield* recordEnds([...prepared.flatMap((p) => p._tag === "Ended" ? [p.end] : []), ...sent], settings.workerId)
  })

/**
 * Claims and runs due steps, a batch at a time, until a claim finds none; answers how many ran.
 *
 * A claim runs in waves of `concurrency` steps, each wave's outcomes recorded together; the claim hands out
 * organizations in turn, so each organization's first steps are in the first wave. While one wave is with the
 * transport the next is read and rendered, then marked and sent: at most two waves in flight, so neither the store
 * nor the mail server waits on the other. A wave is uninterruptible from its mark to its record: a claimed step is
 * sent and recorded, or (at a crash) recovered as failed; stopping the worker waits for the waves in flight.
 */
export const runDueSurveySteps = (settings: SurveyWorkerSettings): Effect.Effect<number, never, SendingServices> =>
  Effect.gen(function*() {
    const repo = yield* SurveyRepository
    const inFlight: Array<Fiber.Fiber<void>> = []
    let handled = 0
    return yield* Effect.gen(function*() {
      while (true) {
        const claimed = yield* repo.claimDue(settings.workerId, yield* now, settings.batchSize)
        const shared = sharedReads()
        for (let i = 0; i < claimed.length; i += settings.concurrency) {
          const prepared = yield* prepareWave(claimed.slice(i, i + settings.concurrency), shared)
          inFlight.push(yield* Effect.forkChild(sendWave(prepared, settings), { uninterruptible: true }))
          if (inFlight.length >= WAVES_IN_FLIGHT) {
            yield* Fiber.join(inFlight[0]!)
            inFlight.shift()
          }
        }
        handled += claimed.length
        // Only an empty claim means none is due: a short one may be short because concurrent claims held rows.
        if (claimed.length === 0) break
      }
      while (inFlight.length > 0) {
        yield* Fiber.join(inFlight[0]!)
        inFlight.shift()
      }
      return handled
    }).pipe(Effect.ensuring(Effect.suspend(() => Effect.forEach(inFlight, Fiber.await, { discard: true }))))
  })

/** Recovers the claims of workers that died between claim and outcome (see the module comment). */
export const failInterruptedSurveySteps = (
  settings: Pick<SurveyWorkerSettings, "interruptedAfterMs">
): Effect.Effect<number, never, SurveyRepository | UnitOfWork> =>
  Effect.gen(function*() {
    const repo = yield* SurveyRepository
    const at = yield* now
    const before = fromMillis(toMillis(at) - settings.interruptedAfterMs)
    const stale = yield* repo.staleClaims(before)
    for (const { id, organizationId } of stale) {
      yield* UnitOfWork.use((uow) =>
        uow.transaction(Effect.gen(function*() {
          const current = Option.getOrUndefined(yield* repo.lockSurvey(organizationId, id))
          const claim = current?.claim
          // A claim is as old as its last sign of life: the send started, or else the claim itself.
          if (current === undefined || claim == null || (claim.sendingAt ?? claim.claimedAt) >= before) return
          yield* repo.saveSurveys(organizationId, [recoverClaim(current, at)])
        }))
      )
    }
    return stale.length
  })
