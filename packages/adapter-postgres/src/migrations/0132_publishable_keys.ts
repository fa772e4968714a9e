import type { Migration } from "../kernel/Migrations.ts"

/**
 * Publishable keys become credentials of their own (docs/DECISIONS.md §55): a signing secret for signed customer
 * calls (kept as is, as webhook secrets are: an HMAC is verified with the secret itself; keys made before have none),
 * revocation, and a lookup by key text, unique so that a presented key names one organization. A revocation (any
 * update, delete or truncate) announces itself on commit like a secret key's (migration 101), so every process drops
 * the publishable keys it keeps. The organization gains the plan values of the storefront buckets.
 */
export const publishableKeysMigration: Migration = {
  id: 132,
  name: "publishable_keys",
  statements: [
    `ALTER TABLE publishable_keys ADD COLUMN signing_secret text, ADD COLUMN revoked_at timestamptz`,
    `CREATE UNIQUE INDEX publishable_keys_by_key ON publishable_keys (key)`,
    // The storefront buckets' plan values; null: the defaults (600 reads a minute, 20 submissions an hour).
    `ALTER TABLE organizations
      ADD COLUMN storefront_reads_per_minute integer CHECK (storefront_reads_per_minute > 0),
      ADD COLUMN storefront_submissions_per_hour integer CHECK (storefront_submissions_per_hour > 0)`,
    `CREATE TRIGGER publishable_keys_credentials AFTER UPDATE OR DELETE OR TRUNCATE ON publishable_keys
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_notify_credentials()`
  ]
}
