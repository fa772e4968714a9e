import type { Migration } from "../kernel/Migrations.ts"

/**
 * The survey claim takes organizations in turn (docs/FAIRNESS.md): it walks the organizations with scheduled steps
 * and takes each one's oldest due steps, so one organization's backlog never fills a claim while another's step waits.
 * This index serves both walks (the next organization, and its steps oldest due first).
 */
export const fairSurveyClaimsMigration: Migration = {
  id: 145,
  name: "fair_survey_claims",
  statements: [
    `CREATE INDEX surveys_due_by_organization ON surveys (organization_id, next_due_at, id)
      WHERE next_due_at IS NOT NULL AND claimed_by IS NULL`
  ]
}
