import type { Migration } from "../kernel/Migrations.ts"

/**
 * Organization setup: the merchant's decisions per area, and what the guided reviews setup creates (email templates,
 * survey flows with their steps, the auto-publish preference). Keys lead with organization_id.
 */
export const setupMigration: Migration = {
  id: 50,
  name: "setup",
  statements: [
    // One row per area that was ever decided or observed; an absent row means every field is null. Fields are
    // only ever filled (COALESCE on upsert), never overwritten or cleared.
    `CREATE TABLE setup_areas (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      area text NOT NULL CHECK (area IN ('reviews', 'loyalty', 'wishlists', 'site')),
      completed_at timestamptz,
      dismissed_at timestamptz,
      widget_banner_dismissed_at timestamptz,
      widget_hint_dismissed_at timestamptz,
      PRIMARY KEY (organization_id, area)
    )`,
    `CREATE TABLE email_templates (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      name text NOT NULL,
      type text NOT NULL,
      subject text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    `CREATE TABLE survey_flows (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      name text NOT NULL,
      is_active boolean NOT NULL,
      trigger_event text NOT NULL,
      condition text NOT NULL DEFAULT '',
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    // hasActiveSurveyFlow is an EXISTS over this.
    `CREATE INDEX survey_flows_active ON survey_flows (organization_id) WHERE is_active`,
    `CREATE TABLE survey_flow_steps (
      organization_id uuid NOT NULL,
      id uuid NOT NULL,
      survey_flow_id uuid NOT NULL,
      position integer NOT NULL CHECK (position >= 0),
      type text NOT NULL,
      email_template_id uuid,
      url text,
      wait_seconds integer CHECK (wait_seconds >= 0),
      PRIMARY KEY (organization_id, id),
      UNIQUE (organization_id, survey_flow_id, position),
      FOREIGN KEY (organization_id, survey_flow_id) REFERENCES survey_flows (organization_id, id) ON DELETE CASCADE,
      FOREIGN KEY (organization_id, email_template_id) REFERENCES email_templates (organization_id, id)
    )`,
    `CREATE INDEX survey_flow_steps_by_template ON survey_flow_steps (organization_id, email_template_id)
      WHERE email_template_id IS NOT NULL`,
    `CREATE TABLE review_settings (
      organization_id uuid PRIMARY KEY REFERENCES organizations (organization_id) ON DELETE CASCADE,
      auto_publish boolean NOT NULL,
      auto_publish_min_rating integer NOT NULL CHECK (auto_publish_min_rating BETWEEN 1 AND 5),
      updated_at timestamptz NOT NULL
    )`
  ]
}
