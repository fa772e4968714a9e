/**
 * Storage of what sends review requests: email templates, survey flows (with their steps) and the organization's
 * review settings (auto-publish). The guided reviews setup writes them; `hasActiveSurveyFlow` reads the flows.
 */
import { Context, type Effect, type Option } from "effect"
import type { EmailTemplateId, OrganizationId, SurveyFlowId } from "../kernel/Ids.ts"
import type { NewestFirstPageRequest } from "../kernel/NewestFirstPage.ts"
import type { EmailTemplate, SurveyFlow } from "./ReviewsSetupPlan.ts"
import type { ReviewSettings } from "./ReviewSettings.ts"
import type { Owned } from "../organizations/StorefrontRecords.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

export class ReviewAutomationRepository extends Context.Service<ReviewAutomationRepository, {
  readonly insertEmailTemplate: (template: Owned<EmailTemplate>) => Effect.Effect<void>
  /** Every template of the organization, oldest first (ties in id order). */
  readonly listEmailTemplates: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<EmailTemplate>>
  /** Inserts the flow with its steps; each email step's template must exist in the same organization. */
  readonly insertSurveyFlow: (flow: Owned<SurveyFlow>) => Effect.Effect<void>
  /** Every flow of the organization with its steps in position order, oldest first (ties in id order). */
  readonly listSurveyFlows: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<SurveyFlow>>
  /** Replaces the organization's review settings. */
  readonly saveReviewSettings: (
    organizationId: OrganizationId,
    settings: ReviewSettings,
    at: Timestamp
  ) => Effect.Effect<void>
  /** The stored review settings; none for an organization that never saved any (it reads the defaults). */
  readonly reviewSettings: (organizationId: OrganizationId) => Effect.Effect<Option.Option<ReviewSettings>>

  // Editing (docs/DECISIONS.md §13). Pages are newest first by (createdAt, id).
  readonly pageEmailTemplates: (
    organizationId: OrganizationId,
    page: NewestFirstPageRequest
  ) => Effect.Effect<ReadonlyArray<EmailTemplate>>
  readonly findEmailTemplate: (
    organizationId: OrganizationId,
    id: EmailTemplateId
  ) => Effect.Effect<Option.Option<EmailTemplate>>
  /** Writes name, subject, body and updatedAt of an existing template. */
  readonly updateEmailTemplate: (template: Owned<EmailTemplate>) => Effect.Effect<void>
  readonly deleteEmailTemplate: (organizationId: OrganizationId, id: EmailTemplateId) => Effect.Effect<void>
  /** The flows with a step that sends the template, oldest first. */
  readonly flowsUsingTemplate: (
    organizationId: OrganizationId,
    id: EmailTemplateId
  ) => Effect.Effect<ReadonlyArray<SurveyFlowId>>
  readonly pageSurveyFlows: (
    organizationId: OrganizationId,
    page: NewestFirstPageRequest
  ) => Effect.Effect<ReadonlyArray<SurveyFlow>>
  readonly findSurveyFlow: (
    organizationId: OrganizationId,
    id: SurveyFlowId
  ) => Effect.Effect<Option.Option<SurveyFlow>>
  /**
   * Writes every field of an existing flow and replaces its steps with `flow.steps`; false, changing nothing, when
   * the flow no longer exists (deleted since it was read).
   */
  readonly replaceSurveyFlow: (flow: Owned<SurveyFlow>) => Effect.Effect<boolean>
  /** Deletes the flow with its steps. */
  readonly deleteSurveyFlow: (organizationId: OrganizationId, id: SurveyFlowId) => Effect.Effect<void>

  // The guided setup, once per organization (docs/SETUP.md).
  /**
   * Holds the organization's guided setup against every other guided setup until the unit of work ends (concurrent
   * calls wait, across processes), and answers the flow the last one created while that flow exists and is active.
   */
  readonly lockGuidedSetup: (organizationId: OrganizationId) => Effect.Effect<Option.Option<SurveyFlowId>>
  /** Records the flow a guided setup created (inside the unit of work holding `lockGuidedSetup`). */
  readonly recordGuidedSetup: (organizationId: OrganizationId, flowId: SurveyFlowId) => Effect.Effect<void>
}>()("feedback/ReviewAutomationRepository") {}
