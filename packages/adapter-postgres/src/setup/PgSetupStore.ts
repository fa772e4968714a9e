/** Setup and review automation over PostgreSQL. */
import { jsonValue } from "../kernel/SqlRows.ts"
import { type Kernel, type Organizations, Setup } from "@feedback/core"
import { Array as Arr, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"

interface SetupAreaRow {
  readonly area: Setup.Area
  readonly completedAt: Date | null
  readonly dismissedAt: Date | null
  readonly widgetBannerDismissedAt: Date | null
  readonly widgetHintDismissedAt: Date | null
}

const toDecisions = (rows: ReadonlyArray<SetupAreaRow>): Setup.SetupDecisions => {
  const byArea = new Map(rows.map((r) => [r.area, r]))
  const of = (area: Setup.Area): Setup.AreaDecisions => {
    const r = byArea.get(area)
    return r === undefined
      ? Setup.emptyAreaDecisions
      : {
        completedAt: toNullableTimestamp(r.completedAt),
        dismissedAt: toNullableTimestamp(r.dismissedAt),
        widgetBannerDismissedAt: toNullableTimestamp(r.widgetBannerDismissedAt),
        widgetHintDismissedAt: toNullableTimestamp(r.widgetHintDismissedAt)
      }
  }
  return { reviews: of("reviews"), loyalty: of("loyalty"), wishlists: of("wishlists"), site: of("site") }
}

const PgSetupRepository = Layer.effect(
  Setup.SetupRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const readDecisions = (organizationId: Kernel.OrganizationId) =>
      sql<SetupAreaRow>`SELECT area, completed_at, dismissed_at, widget_banner_dismissed_at, widget_hint_dismissed_at
        FROM setup_areas WHERE organization_id = ${organizationId}`.pipe(Effect.map(toDecisions), orDie)
    return Setup.SetupRepository.of({
      // One round trip; each EXISTS stops at the first row of an index on (organization_id, …).
      signals: (organizationId) =>
        sql<Setup.SetupSignals>`SELECT
          EXISTS (SELECT 1 FROM sites WHERE organization_id = ${organizationId}) AS has_site,
          EXISTS (SELECT 1 FROM publishable_keys WHERE organization_id = ${organizationId} AND revoked_at IS NULL)
            AS has_publishable_key,
          EXISTS (SELECT 1 FROM integrations WHERE organization_id = ${organizationId} AND platform = 'shopify')
            AS has_integration,
          EXISTS (SELECT 1 FROM products WHERE organization_id = ${organizationId}) AS has_products,
          EXISTS (SELECT 1 FROM survey_flows WHERE organization_id = ${organizationId} AND is_active)
            AS has_active_survey_flow,
          EXISTS (SELECT 1 FROM reviews WHERE organization_id = ${organizationId}) AS has_review,
          EXISTS (SELECT 1 FROM loyalty_programs WHERE organization_id = ${organizationId}) AS has_loyalty_program,
          EXISTS (SELECT 1 FROM loyalty_programs p
                  JOIN sites s ON s.organization_id = p.organization_id AND s.id = p.site_id
                  WHERE p.organization_id = ${organizationId}) AS loyalty_program_on_site,
          EXISTS (SELECT 1 FROM wishlists WHERE organization_id = ${organizationId}) AS has_wishlist`.pipe(
          Effect.map((rows): Setup.SetupSignals => {
            const r = rows[0]!
            return {
              hasSite: r.hasSite,
              hasPublishableKey: r.hasPublishableKey,
              hasIntegration: r.hasIntegration,
              hasProducts: r.hasProducts,
              hasActiveSurveyFlow: r.hasActiveSurveyFlow,
              hasReview: r.hasReview,
              hasLoyaltyProgram: r.hasLoyaltyProgram,
              loyaltyProgramOnSite: r.loyaltyProgramOnSite,
              hasWishlist: r.hasWishlist
            }
          }),
          orDie
        ),
      decisions: readDecisions,
      saveDecisions: (organizationId, updates) =>
        Effect.gen(function*() {
          const rows = (Object.keys(updates) as Array<Setup.Area>).flatMap((area) => {
            const d = updates[area]
            return d === undefined ? [] : [{ organizationId, area, ...d }]
          })
          if (Arr.isArrayNonEmpty(rows)) {
            // Fill-only upsert: a concurrent writer that stored a timestamp first keeps it.
            yield* sql`INSERT INTO setup_areas ${sql.insert(rows)}
            ON CONFLICT (organization_id, area) DO UPDATE SET
              completed_at = COALESCE(setup_areas.completed_at, EXCLUDED.completed_at),
              dismissed_at = COALESCE(setup_areas.dismissed_at, EXCLUDED.dismissed_at),
              widget_banner_dismissed_at = COALESCE(setup_areas.widget_banner_dismissed_at,
                EXCLUDED.widget_banner_dismissed_at),
              widget_hint_dismissed_at = COALESCE(setup_areas.widget_hint_dismissed_at, EXCLUDED.widget_hint_dismissed_at)`
          }
          return yield* readDecisions(organizationId)
        }).pipe(orDie)
    })
  })
)

interface EmailTemplateRow {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly subject: string
  readonly body: string
  readonly createdAt: Date
  readonly updatedAt: Date
}

interface SurveyFlowRow {
  readonly id: string
  readonly name: string
  readonly isActive: boolean
  readonly triggerEvent: string
  readonly condition: string
  readonly metadata: unknown
  readonly createdAt: Date
  readonly updatedAt: Date
}

interface SurveyFlowStepRow {
  readonly id: string
  readonly surveyFlowId: string
  readonly position: number
  readonly type: string
  readonly emailTemplateId: string | null
  readonly url: string | null
  readonly waitSeconds: number | null
}

const toEmailTemplate = (r: EmailTemplateRow): Setup.EmailTemplate => ({
  id: r.id as Setup.EmailTemplate["id"],
  name: r.name,
  type: r.type,
  subject: r.subject,
  body: r.body,
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

/** Flows with their steps (the steps of every flow in `flows`, in any order). */
const toSurveyFlows = (
  flows: ReadonlyArray<SurveyFlowRow>,
  steps: ReadonlyArray<SurveyFlowStepRow>
): ReadonlyArray<Setup.SurveyFlow> =>
  flows.map((r): Setup.SurveyFlow => ({
    id: r.id as Setup.SurveyFlow["id"],
    name: r.name,
    isActive: r.isActive,
    triggerEvent: r.triggerEvent,
    condition: r.condition,
    steps: steps.filter((s) => s.surveyFlowId === r.id).sort((a, b) => Number(a.position) - Number(b.position)).map((
      s
    ) => ({
      id: s.id,
      type: s.type,
      position: Number(s.position),
      emailTemplateId: s.emailTemplateId as Setup.SurveyFlow["steps"][number]["emailTemplateId"],
      url: s.url,
      waitSeconds: s.waitSeconds === null ? null : Number(s.waitSeconds)
    })),
    metadata: jsonValue(r.metadata) as Setup.SurveyFlow["metadata"],
    createdAt: toTimestamp(r.createdAt),
    updatedAt: toTimestamp(r.updatedAt)
  }))

const PgReviewAutomationRepository = Layer.effect(
  Setup.ReviewAutomationRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const templateColumns = sql`id, name, type, subject, body, created_at, updated_at`
    const flowColumns = sql`id, name, is_active, trigger_event, condition, metadata, created_at, updated_at`
    /** Keyset condition of a newest-first page. */
    const olderThan = (page: Kernel.NewestFirstPageRequest) =>
      page.after === undefined ? sql`TRUE` : sql`(created_at, id) < (${page.after.createdAt}, ${page.after.id})`
    const stepsOf = (organizationId: Kernel.OrganizationId, flowIds: ReadonlyArray<string>) =>
      flowIds.length === 0
        ? Effect.succeed([] as ReadonlyArray<SurveyFlowStepRow>)
        : sql<SurveyFlowStepRow>`SELECT id, survey_flow_id, position, type, email_template_id, url, wait_seconds
          FROM survey_flow_steps WHERE organization_id = ${organizationId} AND ${sql.in("survey_flow_id", flowIds)}`
    const flowsWithSteps = (organizationId: Kernel.OrganizationId, rows: ReadonlyArray<SurveyFlowRow>) =>
      Effect.map(stepsOf(organizationId, rows.map((r) => r.id)), (steps) => toSurveyFlows(rows, steps))
    const insertSteps = (f: Organizations.Owned<Setup.SurveyFlow>) => {
      const steps = f.steps.map((s) => ({
        organizationId: f.organizationId,
        id: s.id,
        surveyFlowId: f.id,
        position: s.position,
        type: s.type,
        emailTemplateId: s.emailTemplateId,
        url: s.url,
        waitSeconds: s.waitSeconds
      }))
      return Arr.isArrayNonEmpty(steps)
        ? Effect.asVoid(sql`INSERT INTO survey_flow_steps ${sql.insert(steps)}`)
        : Effect.void
    }
    return Setup.ReviewAutomationRepository.of({
      insertEmailTemplate: (t) =>
        sql`INSERT INTO email_templates (organization_id, id, name, type, subject, body, created_at, updated_at)
          VALUES (${t.organizationId}, ${t.id}, ${t.name}, ${t.type}, ${t.subject}, ${t.body}, ${t.createdAt},
                  ${t.updatedAt})`.pipe(Effect.asVoid, orDie),
      listEmailTemplates: (organizationId) =>
        sql<EmailTemplateRow>`SELECT ${templateColumns} FROM email_templates
          WHERE organization_id = ${organizationId} ORDER BY created_at, id`.pipe(
          Effect.map((rows) => rows.map(toEmailTemplate)),
          orDie
        ),
      insertSurveyFlow: (f) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO survey_flows (organization_id, id, name, is_active, trigger_event, condition, metadata,
              created_at, updated_at)
            VALUES (${f.organizationId}, ${f.id}, ${f.name}, ${f.isActive}, ${f.triggerEvent}, ${f.condition},
                    ${JSON.stringify(f.metadata)}::jsonb, ${f.createdAt}, ${f.updatedAt})`
          yield* insertSteps(f)
        }).pipe(orDie),
      listSurveyFlows: (organizationId) =>
        Effect.gen(function*() {
          const flows = yield* sql<SurveyFlowRow>`SELECT ${flowColumns}
            FROM survey_flows WHERE organization_id = ${organizationId} ORDER BY created_at, id`
          const steps = yield* sql<SurveyFlowStepRow>`SELECT id, survey_flow_id, position, type, email_template_id, url,
              wait_seconds
            FROM survey_flow_steps WHERE organization_id = ${organizationId}`
          return toSurveyFlows(flows, steps)
        }).pipe(orDie),
      pageEmailTemplates: (organizationId, page) =>
        sql<EmailTemplateRow>`SELECT ${templateColumns} FROM email_templates
          WHERE organization_id = ${organizationId} AND ${olderThan(page)}
          ORDER BY created_at DESC, id DESC LIMIT ${page.limit}`.pipe(
          Effect.map((rows) => rows.map(toEmailTemplate)),
          orDie
        ),
      findEmailTemplate: (organizationId, id) =>
        sql<EmailTemplateRow>`SELECT ${templateColumns} FROM email_templates
          WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
          Effect.map((rows) => Option.map(Arr.head(rows), toEmailTemplate)),
          orDie
        ),
      updateEmailTemplate: (t) =>
        sql`UPDATE email_templates SET name = ${t.name}, subject = ${t.subject}, body = ${t.body}, updated_at = ${t.updatedAt}
          WHERE organization_id = ${t.organizationId} AND id = ${t.id}`.pipe(Effect.asVoid, orDie),
      deleteEmailTemplate: (organizationId, id) =>
        sql`DELETE FROM email_templates WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
          Effect.asVoid,
          orDie
        ),
      flowsUsingTemplate: (organizationId, id) =>
        sql<{ readonly id: string }>`SELECT f.id FROM survey_flows f
          WHERE f.organization_id = ${organizationId} AND EXISTS (
            SELECT 1 FROM survey_flow_steps s
            WHERE s.organization_id = f.organization_id AND s.survey_flow_id = f.id AND s.email_template_id = ${id})
          ORDER BY f.created_at, f.id`.pipe(
          Effect.map((rows) => rows.map((r) => r.id as Setup.SurveyFlow["id"])),
          orDie
        ),
      pageSurveyFlows: (organizationId, page) =>
        sql<SurveyFlowRow>`SELECT ${flowColumns} FROM survey_flows
          WHERE organization_id = ${organizationId} AND ${olderThan(page)}
          ORDER BY created_at DESC, id DESC LIMIT ${page.limit}`.pipe(
          Effect.flatMap((rows) => flowsWithSteps(organizationId, rows)),
          orDie
        ),
      // The organization's row of guided_setups (migration 143), inserted if missing and locked: a concurrent setup
      // waits for this unit of work, then sees the flow it recorded.
      lockGuidedSetup: (organizationId) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO guided_setups (organization_id) VALUES (${organizationId}) ON CONFLICT (organization_id) DO NOTHING`
          const [held] = yield* sql<
            { readonly flowId: string | null }
          >`SELECT survey_flow_id AS "flowId" FROM guided_setups
            WHERE organization_id = ${organizationId} FOR UPDATE`
          const flowId = held?.flowId ?? null
          if (flowId === null) return Option.none<Kernel.SurveyFlowId>()
          const exists =
            yield* sql`SELECT 1 FROM survey_flows WHERE organization_id = ${organizationId} AND id = ${flowId} AND is_active`
          return exists.length > 0 ? Option.some(flowId as Kernel.SurveyFlowId) : Option.none<Kernel.SurveyFlowId>()
        }).pipe(orDie),
      recordGuidedSetup: (organizationId, flowId) =>
        sql`UPDATE guided_setups SET survey_flow_id = ${flowId} WHERE organization_id = ${organizationId}`.pipe(
          Effect.asVoid,
          orDie
        ),
      findSurveyFlow: (organizationId, id) =>
        sql<
          SurveyFlowRow
        >`SELECT ${flowColumns} FROM survey_flows WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
          Effect.flatMap((rows) => flowsWithSteps(organizationId, rows)),
          Effect.map(Arr.head),
          orDie
        ),
      replaceSurveyFlow: (f) =>
        Effect.gen(function*() {
          // The update locks the flow; a flow deleted since the use-case read it is left alone (as in memory), since
          // steps inserted for it would break their foreign key (found by the fuzz: PATCH racing DELETE, a 500).
          const kept =
            yield* sql`UPDATE survey_flows SET name = ${f.name}, is_active = ${f.isActive}, trigger_event = ${f.triggerEvent},
              condition = ${f.condition}, metadata = ${JSON.stringify(f.metadata)}::jsonb, updated_at = ${f.updatedAt}
            WHERE organization_id = ${f.organizationId} AND id = ${f.id} RETURNING id`
          if (kept.length === 0) return false
          yield* sql`DELETE FROM survey_flow_steps WHERE organization_id = ${f.organizationId} AND survey_flow_id = ${f.id}`
          yield* insertSteps(f)
          return true
        }).pipe(orDie),
      deleteSurveyFlow: (organizationId, id) =>
        sql`DELETE FROM survey_flows WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
          Effect.asVoid,
          orDie
        ),
      saveReviewSettings: (organizationId, settings, at) =>
        sql`INSERT INTO review_settings (organization_id, auto_publish, auto_publish_min_rating, auto_publish_verified_only, updated_at)
          VALUES (${organizationId}, ${settings.autoPublish}, ${settings.autoPublishMinRating}, ${settings.autoPublishVerifiedOnly}, ${at})
          ON CONFLICT (organization_id) DO UPDATE SET auto_publish = EXCLUDED.auto_publish,
            auto_publish_min_rating = EXCLUDED.auto_publish_min_rating,
            auto_publish_verified_only = EXCLUDED.auto_publish_verified_only, updated_at = EXCLUDED.updated_at`.pipe(
          Effect.asVoid,
          orDie
        ),
      reviewSettings: (organizationId) =>
        sql<
          { autoPublish: boolean; autoPublishMinRating: number; autoPublishVerifiedOnly: boolean }
        >`SELECT auto_publish,
            auto_publish_min_rating, auto_publish_verified_only
          FROM review_settings WHERE organization_id = ${organizationId}`.pipe(
          Effect.map((rows) =>
            Option.map(Option.fromUndefinedOr(rows[0]), (r) => ({
              autoPublish: r.autoPublish,
              autoPublishMinRating: Number(r.autoPublishMinRating),
              autoPublishVerifiedOnly: r.autoPublishVerifiedOnly
            }))
          ),
          orDie
        )
    })
  })
)

/** Both setup services (one entry for `PgStoreServices`). */
export const PgSetupStore = Layer.mergeAll(PgSetupRepository, PgReviewAutomationRepository)
