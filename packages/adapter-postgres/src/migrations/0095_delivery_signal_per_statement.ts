import type { Migration } from "../kernel/Migrations.ts"

/**
 * The dispatcher records outcomes in batches (one UPDATE for many deliveries), and the row-level trigger of migration
 * 93 ran PL/pgSQL and `pg_notify` once per row — most of that statement's time. The same signal now comes once per
 * statement that leaves a delivery claimable or finished (any row whose new status is not `in_flight`), read from the
 * statement's transition table. PostgreSQL still delivers it on commit only, and folds repeats in one transaction.
 * (A trigger with a transition table cannot name columns, so an UPDATE of other columns of finished rows — a privacy
 * redaction — also wakes the dispatchers once: harmless, they look and find nothing.)
 */
export const deliverySignalPerStatementMigration: Migration = {
  id: 95,
  name: "delivery_signal_per_statement",
  statements: [
    `CREATE OR REPLACE FUNCTION feedback_notify_deliveries() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF EXISTS (SELECT 1 FROM changed_deliveries WHERE status <> 'in_flight') THEN
        PERFORM pg_notify('feedback_work', 'deliveries');
      END IF;
      RETURN NULL;
    END
    $fn$`,
    `DROP TRIGGER webhook_deliveries_work ON webhook_deliveries`,
    `CREATE TRIGGER webhook_deliveries_inserted_work AFTER INSERT ON webhook_deliveries
      REFERENCING NEW TABLE AS changed_deliveries
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_notify_deliveries()`,
    `CREATE TRIGGER webhook_deliveries_updated_work AFTER UPDATE ON webhook_deliveries
      REFERENCING NEW TABLE AS changed_deliveries
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_notify_deliveries()`
  ]
}
