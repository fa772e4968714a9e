import type { Migration } from "../kernel/Migrations.ts"

/**
 * Idempotency keys (docs/DECISIONS.md §18): one row per organization and key. `response_status` is null while the
 * claiming request runs; `claim_token` names the attempt that may record. Purged by `expires_at` in batches.
 */
export const idempotencyKeysMigration: Migration = {
  id: 90,
  name: "idempotency_keys",
  statements: [
    `CREATE TABLE idempotency_keys (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      idempotency_key text NOT NULL,
      fingerprint text NOT NULL,
      claim_token text NOT NULL,
      lease_until timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      response_status integer,
      response_content_type text,
      response_body text,
      PRIMARY KEY (organization_id, idempotency_key)
    )`,
    `CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`
  ]
}
