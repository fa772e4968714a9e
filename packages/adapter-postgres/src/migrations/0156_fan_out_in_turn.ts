import type { Migration } from "../kernel/Migrations.ts"

/**
 * The fan-out takes organizations in turn (docs/FAIRNESS.md, docs/DECISIONS.md §56, §59): it walks the organizations
 * with events not yet fanned out and takes each one's oldest, so one organization's backlog never fills a unit while
 * another's event waits. This index serves both walks (the next organization, and its events in order); it replaces
 * the index on `seq` alone, which only the fan-out read. Partial: only events waiting for their fan-out are in it.
 */
export const fanOutInTurnMigration: Migration = {
  id: 156,
  name: "fan_out_in_turn",
  statements: [
    `CREATE INDEX domain_events_fan_out_by_organization ON domain_events (organization_id, seq) WHERE fan_out_pending`,
    `DROP INDEX IF EXISTS domain_events_fan_out_pending`
  ]
}
