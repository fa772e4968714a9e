import type { Migration } from "../kernel/Migrations.ts"

/**
 * The fan-out takes organizations in turn (docs/FAIRNESS.md, docs/DECISIONS.md §68): it walks the organizations
 * with events not yet fanned out and takes each one's oldest, so one organization's backlog never fills a unit while
 * another's event waits. This index serves both walks (the next organization, and its events in order); it replaces
 * the index on `seq` alone, which only the fan-out read. Partial: only events waiting for their fan-out are in it.
 * It carries `id`, so an organization's oldest events are read from the index alone: without it the planner, which
 * cannot tell one organization's backlog of 100,000 events from another's few, read them all and sorted them.
 */
export const fanOutInTurnMigration: Migration = {
  id: 156,
  name: "fan_out_in_turn",
  statements: [
    `CREATE INDEX domain_events_fan_out_by_organization ON domain_events (organization_id, seq) INCLUDE (id)
      WHERE fan_out_pending`,
    `DROP INDEX IF EXISTS domain_events_fan_out_pending`
  ]
}
