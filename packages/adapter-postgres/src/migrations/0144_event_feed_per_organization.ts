import type { Migration } from "../kernel/Migrations.ts"

/** An advisory-lock class for "the event feed of one organization" (the second key is a hash of the organization). */
export const FEED_LOCK_CLASS = 7_240_115

/**
 * The event feed's visibility per organization (docs/DECISIONS.md §17, docs/FAIRNESS.md). A transaction's events of
 * one organization take their feed position when the transaction commits, not when they are written: the
 * statement trigger registers each (organization, transaction) in `event_commits`, and a deferred trigger gives the
 * registration the next `event_commit_seq` value at commit, holding the organization's feed lock shared until the
 * commit is visible. A feed read holds that lock exclusively while it reads, so every position taken before the
 * read is committed and every later one is greater: a position is final and nothing that commits late is skipped,
 * and neither another organization's transactions nor this organization's own long one hold the read back.
 *
 * Positions stay `<first>:<seq>`: events recorded before this migration keep their transaction id as the first
 * part, and the sequence starts above every transaction id so far, so cursors already handed out stay valid.
 */
export const eventFeedPerOrganizationMigration: Migration = {
  id: 144,
  name: "event_feed_per_organization",
  statements: [
    `CREATE TABLE event_commits (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      tx xid8 NOT NULL,
      feed_position bigint,
      PRIMARY KEY (organization_id, tx)
    )`,
    `CREATE INDEX event_commits_feed ON event_commits (organization_id, feed_position)`,
    `CREATE SEQUENCE event_commit_seq AS bigint`,
    `SELECT setval('event_commit_seq', pg_current_xact_id()::text::bigint + 1)`,
    `INSERT INTO event_commits (organization_id, tx, feed_position)
      SELECT DISTINCT organization_id, tx, tx::text::bigint FROM domain_events`,
    `CREATE OR REPLACE FUNCTION feedback_events_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM feedback_require_organizations(ARRAY(SELECT DISTINCT organization_id FROM inserted_events));
      INSERT INTO event_commits (organization_id, tx)
        SELECT DISTINCT organization_id, pg_current_xact_id() FROM inserted_events
        ON CONFLICT DO NOTHING;
      PERFORM pg_notify('feedback_work', 'events');
      RETURN NULL;
    END
    $fn$`,
    // Runs at commit, after the transaction's last statement: the lock is held from here to the commit's end only.
    `CREATE FUNCTION feedback_event_commit_position() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(${FEED_LOCK_CLASS}, hashtext(NEW.organization_id::text));
      UPDATE event_commits SET feed_position = nextval('event_commit_seq')
        WHERE organization_id = NEW.organization_id AND tx = NEW.tx;
      RETURN NULL;
    END
    $fn$`,
    `CREATE CONSTRAINT TRIGGER event_commits_position AFTER INSERT ON event_commits
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION feedback_event_commit_position()`,
    // VOLATILE: the query takes its snapshot after the lock is granted, so it sees every position taken before.
    `CREATE FUNCTION feedback_event_feed(org uuid, after_position bigint, after_seq bigint, names text[], max integer)
      RETURNS TABLE (organization_id uuid, id uuid, event text, data jsonb, occurred_at timestamptz,
        feed_position bigint, seq bigint)
      LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      PERFORM pg_advisory_xact_lock(${FEED_LOCK_CLASS}, hashtext(org::text));
      RETURN QUERY SELECT e.organization_id, e.id, e.event, e.data, e.occurred_at, c.feed_position, e.seq
        FROM event_commits c JOIN domain_events e ON e.organization_id = c.organization_id AND e.tx = c.tx
        WHERE c.organization_id = org AND c.feed_position >= after_position
          AND (c.feed_position, e.seq) > (after_position, after_seq)
          AND (names IS NULL OR e.event = ANY (names))
        ORDER BY c.feed_position, e.seq
        LIMIT max;
    END
    $fn$`
  ]
}
