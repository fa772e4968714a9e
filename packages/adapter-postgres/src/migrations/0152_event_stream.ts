import type { Migration } from "../kernel/Migrations.ts"

/**
 * The in-process event stream (docs/DECISIONS.md §65) reads the feed of every organization at once in its order,
 * `(tx, seq)`: without this index each of its reads would sort every event kept. It costs each inserted event one
 * more index entry, as the feed's own `(organization_id, tx, seq)` does.
 */
export const eventStreamMigration: Migration = {
  id: 152,
  name: "event_stream",
  statements: [`CREATE INDEX domain_events_stream ON domain_events (tx, seq)`]
}
