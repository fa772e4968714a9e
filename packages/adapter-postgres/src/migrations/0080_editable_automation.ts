import type { Migration } from "../kernel/Migrations.ts"

/**
 * Email templates and survey flows became editable lists (docs/DECISIONS.md §13): their pages are newest first by
 * (created_at, id) within an organization, served by these indexes rather than a sort of every row.
 */
export const editableAutomationMigration: Migration = {
  id: 80,
  name: "editable_automation",
  statements: [
    `CREATE INDEX email_templates_newest_first ON email_templates (organization_id, created_at DESC, id DESC)`,
    `CREATE INDEX survey_flows_newest_first ON survey_flows (organization_id, created_at DESC, id DESC)`
  ]
}
