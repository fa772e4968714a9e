import type { Migration } from "../kernel/Migrations.ts"

/** The secret a rotation replaced and until when it still signs beside the new one (docs/DECISIONS.md §17). */
export const webhookSecretRotationMigration: Migration = {
  id: 82,
  name: "webhook_secret_rotation",
  statements: [
    `ALTER TABLE webhooks ADD COLUMN previous_hmac_secret text, ADD COLUMN previous_secret_expires_at timestamptz`
  ]
}
