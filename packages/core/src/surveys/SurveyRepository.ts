/**
 * Storage of surveys (docs/DECISIONS.md §48). Every read and write is scoped to one organization, except what the
 * background worker needs across organizations: claiming due steps, the time of the next one, and finding claims
 * left behind by a worker that died. A store keeps `nextDueAt` (computed by `SurveyRules.nextDueAt`) beside each
 * survey and claims by it.
 *
 * At most one survey exists per order and flow: the store enforces it (a unique key), so concurrent enrolments of
 * the same order cannot both succeed.
 */
import { Context, type Effect, type Option } from "effect"
import type { CustomerId, OrderId, OrganizationId, SurveyFlowId, SurveyId } from "../kernel/Ids.ts"
import type { ListRequest, Page } from "../kernel/ListQuery.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import type { Survey } from "./Survey.ts"
import type { EnrolmentPlan, StoredSurvey } from "./SurveyRules.ts"

/** What enrolment needs of a customer. */
export interface SurveyContact {
  readonly email: string
  readonly emailOptOut: boolean
}

/** A claimed survey with its organization: what a worker works on. */
export interface ClaimedSurvey extends StoredSurvey {
  readonly organizationId: OrganizationId
}

export class SurveyRepository extends Context.Service<SurveyRepository, {
  /**
   * Inserts the surveys; one answer per survey, false when the order already has a survey of that flow (nothing is
   * written for it).
   */
  readonly insertSurveys: (
    organizationId: OrganizationId,
    surveys: ReadonlyArray<StoredSurvey>
  ) => Effect.Effect<ReadonlyArray<boolean>>
  /**
   * Enrolls these orders of the organization in each plan's flow whose condition holds for the order (as it is now,
   * with its customer's email): a survey laid out as the plan says for the order's customer, with the order's
   * distinct products in line order, a new token and its `surveyUrl(linkBase, token)`; nothing where the order already
   * has a survey of that flow. Set-based: one statement on a SQL store, whatever the number of orders (a bulk update
   * enrolls 100,000). Answers how many surveys were created.
   */
  readonly enrollOrders: (
    organizationId: OrganizationId,
    orderIds: ReadonlyArray<OrderId>,
    plans: ReadonlyArray<EnrolmentPlan>,
    linkBase: string
  ) => Effect.Effect<number>
  readonly findSurvey: (organizationId: OrganizationId, id: SurveyId) => Effect.Effect<Option.Option<Survey>>
  /** The email address and opt-out of each of these customers that exists (what enrolment decides by). */
  readonly contactsOf: (
    organizationId: OrganizationId,
    customerIds: ReadonlyArray<CustomerId>
  ) => Effect.Effect<ReadonlyMap<string, SurveyContact>>
  /** The survey as stored, held until the unit of work ends (concurrent changes of it take turns). */
  readonly lockSurvey: (organizationId: OrganizationId, id: SurveyId) => Effect.Effect<Option.Option<StoredSurvey>>
  /** The survey of this `/r/{token}` page, held like `lockSurvey`; none for another organization's token. */
  /**
   * The organization of the survey with this link token, in whichever organization: the hosted page `/r/{token}` is
   * reached by the token alone (its URL names no organization). Tokens carry 128 random bits, so at most one matches.
   */
  readonly organizationOfToken: (token: string) => Effect.Effect<Option.Option<OrganizationId>>
  readonly lockSurveyByToken: (
    organizationId: OrganizationId,
    token: string
  ) => Effect.Effect<Option.Option<StoredSurvey>>
  /** The surveys of these orders with a step still to run (or in flight), each held like `lockSurvey`. */
  readonly lockActiveOfOrders: (
    organizationId: OrganizationId,
    orderIds: ReadonlyArray<OrderId>
  ) => Effect.Effect<ReadonlyArray<StoredSurvey>>
  /** The flow's surveys with a step still to run (or in flight), each held like `lockSurvey`. */
  readonly lockActiveOfFlow: (
    organizationId: OrganizationId,
    flowId: SurveyFlowId
  ) => Effect.Effect<ReadonlyArray<StoredSurvey>>
  /** Writes each (existing) survey whole: record, claim and the `nextDueAt` it implies. */
  readonly saveSurveys: (organizationId: OrganizationId, surveys: ReadonlyArray<StoredSurvey>) => Effect.Effect<void>
  readonly deleteSurvey: (organizationId: OrganizationId, id: SurveyId) => Effect.Effect<Option.Option<Survey>>
  readonly listSurveys: (organizationId: OrganizationId, request: ListRequest) => Effect.Effect<Page<Survey>>

  /**
   * Claims up to `limit` surveys whose next step is due at `at` and not claimed, oldest due first, for `workerId`:
   * each is marked in flight (its step, the worker, the time) and returned. Commits on its own, before anything is
   * sent; concurrent workers in any process never claim the same survey.
   */
  readonly claimDue: (workerId: string, at: Timestamp, limit: number) => Effect.Effect<ReadonlyArray<ClaimedSurvey>>
  /**
   * Marks the claimed steps of these surveys as being handed to the transport now, in one write that commits on its
   * own; answers the surveys whose claim is still this worker's. Any other (recovered, or the survey deleted) is left
   * as it is, and nothing may be sent for it.
   */
  readonly markSending: (
    workerId: string,
    at: Timestamp,
    surveys: ReadonlyArray<{ readonly organizationId: OrganizationId; readonly id: SurveyId }>
  ) => Effect.Effect<ReadonlySet<SurveyId>>
  /** The earliest `nextDueAt` of any unclaimed survey (when an idle worker next has work). */
  readonly nextDueAt: Effect.Effect<Option.Option<Timestamp>>
  /**
   * Surveys whose claim's last sign of life (the send started, or else the claim) is before `claimedBefore`: their
   * worker died before recording the outcome.
   */
  readonly staleClaims: (
    claimedBefore: Timestamp
  ) => Effect.Effect<ReadonlyArray<{ readonly organizationId: OrganizationId; readonly id: SurveyId }>>
}>()("feedback/SurveyRepository") {}
