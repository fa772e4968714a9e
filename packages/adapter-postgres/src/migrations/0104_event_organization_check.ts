import type { Migration } from "../kernel/Migrations.ts"

/**
 * The guarantee of `domain_events`' foreign key to `organizations`, checked once per statement instead of once per
 * row (docs/DECISIONS.md §29): an import or a bulk moderation inserts up to 100,000 events in one statement, and
 * the key's row-level check is a query and a row lock per event.
 *
 * What the key guaranteed, and what replaces each part:
 * - an inserted event's organization exists and cannot be deleted before the inserting transaction ends: the
 *   statement's new rows (a transition table) are checked in one query that locks each distinct organization
 *   `FOR KEY SHARE`, the lock the key's check takes; a missing one fails with `foreign_key_violation` (23503);
 * - an event's `organization_id` cannot be changed to a missing organization: a row trigger on `UPDATE OF
 *   organization_id` (no ordinary write sets that column, so it never fires on them);
 * - deleting an organization deletes its events (`ON DELETE CASCADE`), and truncating it truncates them; an
 *   organization's id cannot change while it has events (`NO ACTION` on update).
 * The statement trigger also sends the fan-out wake-up of migration 93, so the events' statement fires one trigger.
 */
export const eventOrganizationCheckMigration: Migration = {
  id: 104,
  name: "event_organization_check",
  statements: [
    `CREATE OR REPLACE FUNCTION feedback_require_organizations(organization_ids uuid[]) RETURNS void
      LANGUAGE plpgsql AS $fn$
    DECLARE locked integer;
    BEGIN
      PERFORM 1 FROM organizations WHERE organization_id = ANY (organization_ids)
        ORDER BY organization_id FOR KEY SHARE;
      GET DIAGNOSTICS locked = ROW_COUNT;
      IF locked < cardinality(organization_ids) THEN
        RAISE EXCEPTION 'insert or update on table "domain_events" violates foreign key constraint "domain_events_organization_id_fkey"'
          USING ERRCODE = 'foreign_key_violation', TABLE = 'domain_events',
            CONSTRAINT = 'domain_events_organization_id_fkey',
            DETAIL = 'Key (organization_id) is not present in table "organizations".';
      END IF;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_events_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM feedback_require_organizations(ARRAY(SELECT DISTINCT organization_id FROM inserted_events));
      PERFORM pg_notify('feedback_work', 'events');
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_event_organization_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM feedback_require_organizations(ARRAY[NEW.organization_id]);
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_organization_events_follow() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        TRUNCATE domain_events;
      ELSIF TG_OP = 'DELETE' THEN
        DELETE FROM domain_events WHERE organization_id = OLD.organization_id;
      ELSIF EXISTS (SELECT 1 FROM domain_events WHERE organization_id = OLD.organization_id) THEN
        RAISE EXCEPTION 'update or delete on table "organizations" violates foreign key constraint "domain_events_organization_id_fkey" on table "domain_events"'
          USING ERRCODE = 'foreign_key_violation', TABLE = 'organizations',
            CONSTRAINT = 'domain_events_organization_id_fkey';
      END IF;
      RETURN NULL;
    END
    $fn$`,
    `ALTER TABLE domain_events DROP CONSTRAINT domain_events_organization_id_fkey`,
    `DROP TRIGGER domain_events_work ON domain_events`,
    `CREATE TRIGGER domain_events_inserted AFTER INSERT ON domain_events REFERENCING NEW TABLE AS inserted_events
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_events_inserted()`,
    `CREATE TRIGGER domain_events_organization_changed AFTER UPDATE OF organization_id ON domain_events
      FOR EACH ROW WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id)
      EXECUTE FUNCTION feedback_event_organization_changed()`,
    `CREATE TRIGGER organizations_events_deleted AFTER DELETE ON organizations
      FOR EACH ROW EXECUTE FUNCTION feedback_organization_events_follow()`,
    `CREATE TRIGGER organizations_events_truncated AFTER TRUNCATE ON organizations
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_organization_events_follow()`,
    `CREATE TRIGGER organizations_events_rekeyed AFTER UPDATE OF organization_id ON organizations
      FOR EACH ROW WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id)
      EXECUTE FUNCTION feedback_organization_events_follow()`
  ]
}
