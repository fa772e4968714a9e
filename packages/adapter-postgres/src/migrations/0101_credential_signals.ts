import type { Migration } from "../kernel/Migrations.ts"

/**
 * Announcements of changes to what a secret key authenticates as (docs/DECISIONS.md §27): any update, delete or
 * truncate of `secret_keys` or `organizations` sends `NOTIFY feedback_work, 'credentials'` when its transaction commits, so
 * every process drops the keys it keeps before it can answer from them again. Inserts need none: a new key or
 * organization cannot be in anybody's cache.
 */
export const credentialSignalsMigration: Migration = {
  id: 101,
  name: "credential_signals",
  statements: [
    `CREATE OR REPLACE FUNCTION feedback_notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_notify('feedback_work', 'credentials');
      RETURN NULL;
    END
    $fn$`,
    `CREATE TRIGGER secret_keys_credentials AFTER UPDATE OR DELETE OR TRUNCATE ON secret_keys
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_notify_credentials()`,
    `CREATE TRIGGER organizations_credentials AFTER UPDATE OR DELETE OR TRUNCATE ON organizations
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_notify_credentials()`
  ]
}
