import type { Migration } from "../kernel/Migrations.ts"

/**
 * Cheaper event rows for the set-based writes (an import or a bulk moderation records one event per review, in the
 * statement that writes the reviews; docs/DECISIONS.md §25):
 *
 * - `feedback_uuid_v7()`: the ids those statements give their events, time-ordered like every id made in Node
 *   (IdGenerator.uuidV7), so 100,000 new keys land at the right edge of the primary key instead of at random leaves.
 *   48-bit Unix milliseconds, version 7, then the random bits (and variant) of a v4 UUID. A plain SQL expression, so
 *   the planner inlines it.
 * - `domain_events_by_seq` goes: every reader of `seq` is served by another index (the dispatcher's partial
 *   `domain_events_fan_out_pending`, the feed's `(organization_id, tx, seq)`), and each index costs every event.
 */
export const bulkEventWritesMigration: Migration = {
  id: 96,
  name: "bulk_event_writes",
  statements: [
    `CREATE OR REPLACE FUNCTION feedback_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE
      AS $fn$ SELECT (lpad(to_hex(floor(date_part('epoch', clock_timestamp()) * 1000)::bigint), 12, '0') || '7'
        || substr(replace(gen_random_uuid()::text, '-', ''), 14))::uuid $fn$`,
    `DROP INDEX IF EXISTS domain_events_by_seq`
  ]
}
