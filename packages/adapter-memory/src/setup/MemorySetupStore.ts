/**
 * Setup and review automation in memory. Signals read the tables named like the SQL tables (`sites`, `products`,
 * `reviews`, `publishable_keys`, `integrations`, `loyalty_programs`, `wishlists`, `survey_flows`), whose rows are the
 * core record types with an `organizationId`; the capabilities that own sites, products and reviews write them there.
 */
import { type Catalog, Kernel, type Organizations, type Reviews, Setup } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase, type MemoryTable } from "../kernel/MemoryDatabase.ts"

type SetupAreaRow = Setup.AreaDecisions & { readonly organizationId: Kernel.OrganizationId; readonly area: Setup.Area }
type ReviewSettingsRow = Setup.ReviewSettings & {
  readonly organizationId: Kernel.OrganizationId
  readonly updatedAt: Kernel.Timestamp.Timestamp
}

const areaKey = (organizationId: string, area: Setup.Area) => `${organizationId}/${area}`

const anyOwned = <V extends { readonly organizationId: string }>(
  table: MemoryTable<string, V>,
  organizationId: string,
  where: (row: V) => boolean = () => true
): boolean => {
  for (const row of table.values()) if (row.organizationId === organizationId && where(row)) return true
  return false
}

const byCreation = <V extends { readonly createdAt: string; readonly id: string }>(a: V, b: V) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const MemorySetupRepository = Layer.effect(
  Setup.SetupRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const setupAreas = db.table<string, SetupAreaRow>("setup_areas")
    const sites = db.table<string, Organizations.Owned<Catalog.Site>>("sites")
    const publishableKeys = db.table<string, Organizations.Owned<Organizations.PublishableKeyRecord>>(
      "publishable_keys"
    )
    const integrations = db.table<string, Organizations.Owned<Organizations.Integration>>("integrations")
    const products = db.table<string, Organizations.Owned<Catalog.Product>>("products")
    const surveyFlows = db.table<string, Organizations.Owned<Setup.SurveyFlow>>("survey_flows")
    const reviews = db.table<string, Organizations.Owned<Reviews.ReviewRecord>>("reviews")
    const loyaltyPrograms = db.table<string, Organizations.Owned<Organizations.LoyaltyProgram>>("loyalty_programs")
    const wishlists = db.table<string, Organizations.Owned<Organizations.Wishlist>>("wishlists")

    const readDecisions = (organizationId: Kernel.OrganizationId): Setup.SetupDecisions => {
      const of = (area: Setup.Area): Setup.AreaDecisions => {
        const row = setupAreas.get(areaKey(organizationId, area))
        return row === undefined
          ? Setup.emptyAreaDecisions
          : {
            completedAt: row.completedAt,
            dismissedAt: row.dismissedAt,
            widgetBannerDismissedAt: row.widgetBannerDismissedAt,
            widgetHintDismissedAt: row.widgetHintDismissedAt
          }
      }
      return { reviews: of("reviews"), loyalty: of("loyalty"), wishlists: of("wishlists"), site: of("site") }
    }

    return Setup.SetupRepository.of({
      signals: (organizationId) =>
        Effect.sync(() => ({
          hasSite: anyOwned(sites, organizationId),
          hasPublishableKey: anyOwned(publishableKeys, organizationId, (k) => k.revokedAt === null),
          hasIntegration: anyOwned(integrations, organizationId, (i) => i.platform === "shopify"),
          hasProducts: anyOwned(products, organizationId),
          hasActiveSurveyFlow: anyOwned(surveyFlows, organizationId, (f) => f.isActive),
          hasReview: anyOwned(reviews, organizationId),
          hasLoyaltyProgram: anyOwned(loyaltyPrograms, organizationId),
          // Attached to a site that exists in the same organization (a program's siteId is not a foreign key).
          loyaltyProgramOnSite: anyOwned(
            loyaltyPrograms,
            organizationId,
            (p) => p.siteId !== null && sites.get(p.siteId)?.organizationId === organizationId
          ),
          hasWishlist: anyOwned(wishlists, organizationId)
        })),
      decisions: (organizationId) => Effect.sync(() => readDecisions(organizationId)),
      saveDecisions: (organizationId, updates) =>
        db.mutate(() => {
          for (const area of Object.keys(updates) as Array<Setup.Area>) {
            const next = updates[area]
            if (next === undefined) continue
            const key = areaKey(organizationId, area)
            const current = setupAreas.get(key)
            setupAreas.set(key, {
              organizationId,
              area,
              completedAt: current?.completedAt ?? next.completedAt,
              dismissedAt: current?.dismissedAt ?? next.dismissedAt,
              widgetBannerDismissedAt: current?.widgetBannerDismissedAt ?? next.widgetBannerDismissedAt,
              widgetHintDismissedAt: current?.widgetHintDismissedAt ?? next.widgetHintDismissedAt
            })
          }
          return readDecisions(organizationId)
        })
    })
  })
)

const MemoryReviewAutomationRepository = Layer.effect(
  Setup.ReviewAutomationRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const emailTemplates = db.table<string, Organizations.Owned<Setup.EmailTemplate>>("email_templates")
    const surveyFlows = db.table<string, Organizations.Owned<Setup.SurveyFlow>>("survey_flows")
    const reviewSettings = db.table<string, ReviewSettingsRow>("review_settings")
    // The flow each organization's guided setup created. The store's one write lock, held by the unit of work,
    // serializes guided setups.
    const guidedSetups = db.table<string, Setup.SurveyFlow["id"]>("guided_setups")
    const owned = <R extends { readonly organizationId: Kernel.OrganizationId }>(
      table: { values: () => Iterable<R> },
      organizationId: Kernel.OrganizationId
    ) => [...table.values()].filter((r) => r.organizationId === organizationId)
    const ownedBy = <R extends { readonly organizationId: Kernel.OrganizationId }>(
      table: { get: (id: string) => R | undefined },
      organizationId: Kernel.OrganizationId,
      id: string
    ) => {
      const row = table.get(id)
      return row?.organizationId === organizationId ? row : undefined
    }
    const unowned = <R extends { readonly organizationId: Kernel.OrganizationId }>(
      { organizationId: _, ...row }: R
    ): Omit<R, "organizationId"> => row
    const flowsSending = (organizationId: Kernel.OrganizationId, templateId: string) =>
      owned(surveyFlows, organizationId).sort(byCreation).filter((f) =>
        f.steps.some((s) => s.emailTemplateId === templateId)
      ).map((f) => f.id)
    // The same integrity the SQL foreign key gives: an email step names a template of the organization.
    const checkTemplates = (flow: Organizations.Owned<Setup.SurveyFlow>) => {
      for (const step of flow.steps) {
        if (
          step.emailTemplateId !== null &&
          emailTemplates.get(step.emailTemplateId)?.organizationId !== flow.organizationId
        ) {
          throw new Error(`survey flow step refers to a missing email template ${step.emailTemplateId}`)
        }
      }
    }
    return Setup.ReviewAutomationRepository.of({
      insertEmailTemplate: (template) => db.mutate(() => emailTemplates.set(template.id, template)),
      listEmailTemplates: (organizationId) =>
        Effect.sync(() =>
          [...emailTemplates.values()]
            .filter((t) => t.organizationId === organizationId)
            .sort(byCreation)
            .map(({ organizationId: _, ...t }): Setup.EmailTemplate => t)
        ),
      insertSurveyFlow: (flow) =>
        db.mutate(() => {
          checkTemplates(flow)
          surveyFlows.set(flow.id, { ...flow, steps: [...flow.steps].sort((a, b) => a.position - b.position) })
        }),
      listSurveyFlows: (organizationId) =>
        Effect.sync(() =>
          [...surveyFlows.values()]
            .filter((f) => f.organizationId === organizationId)
            .sort(byCreation)
            .map(({ organizationId: _, ...f }): Setup.SurveyFlow => f)
        ),
      saveReviewSettings: (organizationId, settings, at) =>
        db.mutate(() =>
          reviewSettings.set(organizationId, {
            organizationId,
            autoPublish: settings.autoPublish,
            autoPublishMinRating: settings.autoPublishMinRating,
            autoPublishVerifiedOnly: settings.autoPublishVerifiedOnly,
            updatedAt: at
          })
        ),
      reviewSettings: (organizationId) =>
        Effect.sync(() =>
          Option.map(Option.fromUndefinedOr(reviewSettings.get(organizationId)), (r): Setup.ReviewSettings => ({
            autoPublish: r.autoPublish,
            autoPublishMinRating: r.autoPublishMinRating,
            autoPublishVerifiedOnly: r.autoPublishVerifiedOnly
          }))
        ),
      pageEmailTemplates: (organizationId, page) =>
        Effect.sync(() => Kernel.takeNewestFirst(owned(emailTemplates, organizationId), page).map(unowned)),
      findEmailTemplate: (organizationId, id) =>
        Effect.sync(() => Option.map(Option.fromUndefinedOr(ownedBy(emailTemplates, organizationId, id)), unowned)),
      updateEmailTemplate: (template) =>
        db.mutate(() => {
          if (ownedBy(emailTemplates, template.organizationId, template.id) !== undefined) {
            emailTemplates.set(template.id, template)
          }
        }),
      deleteEmailTemplate: (organizationId, id) =>
        db.mutate(() => {
          // The SQL foreign key's RESTRICT: a template a step sends is never deleted underneath it.
          if (flowsSending(organizationId, id).length > 0) {
            throw new Error(`email template ${id} is still sent by a survey flow`)
          }
          if (ownedBy(emailTemplates, organizationId, id) !== undefined) emailTemplates.delete(id)
        }),
      flowsUsingTemplate: (organizationId, id) => Effect.sync(() => flowsSending(organizationId, id)),
      pageSurveyFlows: (organizationId, page) =>
        Effect.sync(() => Kernel.takeNewestFirst(owned(surveyFlows, organizationId), page).map(unowned)),
      lockGuidedSetup: (organizationId) =>
        db.mutate(() => {
          const flowId = guidedSetups.get(organizationId)
          return Option.fromUndefinedOr(
            flowId !== undefined && ownedBy(surveyFlows, organizationId, flowId)?.isActive === true ? flowId : undefined
          )
        }),
      recordGuidedSetup: (organizationId, flowId) => db.mutate(() => void guidedSetups.set(organizationId, flowId)),
      findSurveyFlow: (organizationId, id) =>
        Effect.sync(() => Option.map(Option.fromUndefinedOr(ownedBy(surveyFlows, organizationId, id)), unowned)),
      replaceSurveyFlow: (flow) =>
        db.mutate(() => {
          if (ownedBy(surveyFlows, flow.organizationId, flow.id) === undefined) return false
          checkTemplates(flow)
          surveyFlows.set(flow.id, { ...flow, steps: [...flow.steps].sort((a, b) => a.position - b.position) })
          return true
        }),
      deleteSurveyFlow: (organizationId, id) =>
        db.mutate(() => {
          if (ownedBy(surveyFlows, organizationId, id) !== undefined) surveyFlows.delete(id)
        })
    })
  })
)

/** Both setup services (one entry for `MemoryStoreLayer`). */
export const MemorySetupStore = Layer.mergeAll(MemorySetupRepository, MemoryReviewAutomationRepository)
