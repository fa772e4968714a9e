import type { Migration } from "../kernel/Migrations.ts"

/**
 * Unsubscribe tokens (shared DECISIONS §17): one per customer, deleted with it. The key starts with `organization_id`
 * like every tenant table's; the token is also unique on its own, because `/u/{token}` names no organization and is
 * looked up by the token alone (256 random bits, so the constraint only ever guards against a defect).
 */
export const unsubscribeTokensMigration: Migration = {
  id: 131,
  name: "unsubscribe_tokens",
  statements: [
    `CREATE TABLE unsubscribe_tokens (
      organization_id uuid NOT NULL,
      customer_id uuid NOT NULL,
      token text NOT NULL CHECK (token ~ '^[A-Za-z0-9_-]{22,64}$'),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, customer_id),
      FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id) ON DELETE CASCADE
    )`,
    `CREATE UNIQUE INDEX unsubscribe_tokens_token ON unsubscribe_tokens (token)`
  ]
}
