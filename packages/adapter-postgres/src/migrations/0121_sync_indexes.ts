import type { Migration } from "../kernel/Migrations.ts"

/**
 * Incremental sync (docs/DECISIONS.md §48): a consumer lists what changed since its last run with
 * `filter={"updatedAt":{"$gte":…}}&sort=updatedAt`, so reviews and product questions get the keyset index of that sort
 * (orders have theirs from their own migration). One index serves both directions.
 */
export const syncIndexesMigration: Migration = {
  id: 121,
  name: "sync_indexes",
  statements: [
    `CREATE INDEX reviews_by_updated ON reviews (organization_id, updated_at, id)`,
    `CREATE INDEX product_questions_by_updated ON product_questions (organization_id, updated_at, id)`
  ]
}
