import type { Migration } from "../kernel/Migrations.ts"

/**
 * Review settings (shared DECISIONS §17) are the one home of the auto-publish preference the guided setup wrote:
 * the third field joins its row, off for every organization that has one already (the default).
 */
export const reviewSettingsMigration: Migration = {
  id: 130,
  name: "review_settings",
  statements: [
    `ALTER TABLE review_settings ADD COLUMN auto_publish_verified_only boolean NOT NULL DEFAULT false`
  ]
}
