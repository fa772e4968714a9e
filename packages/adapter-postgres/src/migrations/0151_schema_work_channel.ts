import type { Migration } from "../kernel/Migrations.ts"

/**
 * Each schema's work signals on a channel of its own (docs/DECISIONS.md §58): `feedback_work_channel()` answers
 * `<schema>_work` (`PgSchema.workChannel`), fixed when the schema is migrated, and every function that notified
 * `feedback_work` notifies it instead (named with its schema, whoever's session fires the trigger), so the stores
 * of two schemas in one database never wake each other. The functions are rewritten from their own definitions
 * (`pg_get_functiondef`), the one literal replaced, so their bodies stay exactly those of the migrations that made
 * them.
 */
export const schemaWorkChannelMigration: Migration = {
  id: 151,
  name: "schema_work_channel",
  statements: [
    `DO $do$
    BEGIN
      EXECUTE format(
        'CREATE FUNCTION feedback_work_channel() RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L',
        format('SELECT %L::text', current_schema() || '_work')
      );
    END
    $do$`,
    `DO $do$
    DECLARE
      f oid;
    BEGIN
      FOR f IN SELECT p.oid FROM pg_proc p
        WHERE p.pronamespace = current_schema()::regnamespace AND p.prosrc LIKE '%pg_notify(''feedback_work''%'
      LOOP
        EXECUTE replace(pg_get_functiondef(f), 'pg_notify(''feedback_work''',
          format('pg_notify(%I.feedback_work_channel()', current_schema()));
      END LOOP;
    END
    $do$`
  ]
}
