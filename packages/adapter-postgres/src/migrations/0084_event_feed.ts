import type { Migration } from "../kernel/Migrations.ts"

/**
 * The event feed (docs/DECISIONS.md §17). `seq` is taken when a row is inserted, not when its transaction commits,
 * so a feed ordered by `seq` alone could hand out position N before a transaction holding N-1 commits, and a consumer
 * would skip that event for good. Each row therefore records the id of the transaction that wrote it (`tx`); the feed
 * orders by (tx, seq) and shows only transactions older than every one still running (`pg_snapshot_xmin`), whose
 * rows can no longer change — so a position, once handed out, is final.
 */
export const eventFeedMigration: Migration = {
  id: 84,
  name: "event_feed",
  statements: [
    `ALTER TABLE domain_events ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id()`,
    `CREATE INDEX domain_events_feed ON domain_events (organization_id, tx, seq)`,
    `CREATE INDEX domain_events_by_time ON domain_events (occurred_at) WHERE NOT fan_out_pending`
  ]
}
