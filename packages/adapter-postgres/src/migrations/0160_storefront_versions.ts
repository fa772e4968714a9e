import type { Migration } from "../kernel/Migrations.ts"

/**
 * Each organization's storefront content version (docs/DECISIONS.md §70): what a storefront read's tag is made of, so a
 * revalidation is answered from one primary-key probe instead of the read. Every statement that writes a table a
 * publishable key can read marks its organizations as changed in this transaction (statement-level triggers with
 * transition tables, as migration 102's counts); at commit, a deferred trigger moves each marked organization's version
 * once. Moving it last keeps its row lock out of the transaction's other locks (no new deadlock between writers), and
 * it commits with the content, so no reader sees the new content under the old version.
 */
const tables = [
  "products",
  "customers",
  "reviews",
  "review_replies",
  "review_files",
  "product_questions",
  "product_question_answers"
] as const

const triggers = tables.flatMap((table) => [
  `CREATE TRIGGER ${table}_storefront_inserted AFTER INSERT ON ${table}
    REFERENCING NEW TABLE AS storefront_changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION feedback_storefront_changed()`,
  `CREATE TRIGGER ${table}_storefront_updated AFTER UPDATE ON ${table}
    REFERENCING NEW TABLE AS storefront_changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION feedback_storefront_changed()`,
  `CREATE TRIGGER ${table}_storefront_deleted AFTER DELETE ON ${table}
    REFERENCING OLD TABLE AS storefront_changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION feedback_storefront_changed()`
])

export const storefrontVersionsMigration: Migration = {
  id: 160,
  name: "storefront_versions",
  statements: [
    `CREATE TABLE storefront_versions (
      organization_id uuid PRIMARY KEY REFERENCES organizations (organization_id) ON DELETE CASCADE,
      version bigint NOT NULL
    )`,
    // One row per (organization, open transaction) that wrote storefront content; gone again at its commit.
    `CREATE TABLE storefront_changes (
      organization_id uuid NOT NULL,
      tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
      PRIMARY KEY (organization_id, tx)
    )`,
    `CREATE FUNCTION feedback_storefront_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO storefront_changes (organization_id)
        SELECT DISTINCT organization_id FROM storefront_changed_rows ORDER BY 1
        ON CONFLICT DO NOTHING;
      RETURN NULL;
    END
    $fn$`,
    // An organization deleted in the same transaction has no version left to move.
    `CREATE FUNCTION feedback_storefront_commit() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO storefront_versions AS v (organization_id, version)
        SELECT NEW.organization_id, 1
        WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.organization_id = NEW.organization_id)
        ON CONFLICT (organization_id) DO UPDATE SET version = v.version + 1;
      DELETE FROM storefront_changes WHERE organization_id = NEW.organization_id AND tx = NEW.tx;
      RETURN NULL;
    END
    $fn$`,
    `CREATE CONSTRAINT TRIGGER storefront_changes_committed AFTER INSERT ON storefront_changes
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION feedback_storefront_commit()`,
    ...triggers
  ]
}
