import type { Migration } from "../kernel/Migrations.ts"

/**
 * When each organization last had a job claimed: the job claim takes the runnable job of the organization served
 * longest ago (never first), so organizations take turns and one organization's backlog waits behind another's
 * single job, never the reverse (docs/FAIRNESS.md).
 */
export const jobTurnsMigration: Migration = {
  id: 142,
  name: "job_turns",
  statements: [
    `CREATE TABLE job_turns (
      organization_id uuid PRIMARY KEY REFERENCES organizations (organization_id) ON DELETE CASCADE,
      last_claim bigint NOT NULL
    )`,
    // A counter, not the clock: claims within one millisecond (or under a test clock) still take turns.
    `CREATE SEQUENCE job_turn_seq`
  ]
}
