import type { Migration } from "../kernel/Migrations.ts"

/**
 * Wake-ups for the background workers of other processes (docs/DECISIONS.md §23): writes that create work send
 * `NOTIFY feedback_work, '<channel>'`, which PostgreSQL delivers when (and only if) the transaction commits, once per
 * channel per transaction. New events wake fan-out; a delivery created or no longer in flight (its webhook or record
 * may now take the next one) wakes dispatchers; a notice due for sending wakes the email workers; a job ready to
 * run wakes the job workers.
 */
export const workSignalsMigration: Migration = {
  id: 93,
  name: "work_signals",
  statements: [
    `CREATE OR REPLACE FUNCTION feedback_notify_work() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_notify('feedback_work', TG_ARGV[0]);
      RETURN NULL;
    END
    $fn$`,
    `CREATE TRIGGER domain_events_work AFTER INSERT ON domain_events
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_notify_work('events')`,
    `CREATE TRIGGER webhook_deliveries_work AFTER INSERT OR UPDATE OF status ON webhook_deliveries
      FOR EACH ROW WHEN (NEW.status <> 'in_flight') EXECUTE FUNCTION feedback_notify_work('deliveries')`,
    `CREATE TRIGGER email_outbox_work AFTER INSERT OR UPDATE OF status ON email_outbox
      FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION feedback_notify_work('email')`,
    // A job becomes runnable when its upload is complete, or when a stopping worker hands its lease back.
    `CREATE TRIGGER jobs_work AFTER INSERT OR UPDATE OF status, receiving, lease_owner ON jobs
      FOR EACH ROW WHEN (NEW.status IN ('queued', 'running') AND NOT NEW.receiving AND NEW.lease_owner IS NULL)
      EXECUTE FUNCTION feedback_notify_work('jobs')`
  ]
}
