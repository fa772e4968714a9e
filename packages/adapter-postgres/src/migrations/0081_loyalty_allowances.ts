import type { Migration } from "../kernel/Migrations.ts"

/**
 * The plan's loyalty allowances (spec: Limits, per-endpoint buckets): null means the bucket's own defaults apply.
 * They live on the organization row beside `api_requests_per_minute`, so authentication reads the whole plan at once.
 */
export const loyaltyAllowancesMigration: Migration = {
  id: 81,
  name: "loyalty_allowances",
  statements: [
    `ALTER TABLE organizations
      ADD COLUMN loyalty_events_per_minute integer CHECK (loyalty_events_per_minute > 0),
      ADD COLUMN loyalty_stamps_per_minute integer CHECK (loyalty_stamps_per_minute > 0)`
  ]
}
