import type { Migration } from "../kernel/Migrations.ts"

/**
 * The review write side: product review stats are recomputed per product after every change, so reviews are
 * reachable by product. `published` is deliberately not in the index (no INCLUDE): moderation rewrites `published`
 * on many rows, and an indexed column would rule out HOT updates and add an index write to each of them; the
 * aggregate's heap reads are cheap next to that.
 */
export const reviewWritesMigration: Migration = {
  id: 30,
  name: "review_writes",
  statements: [
    // Migration 20 (list indexes) already creates reviews_by_product (organization_id, product_id, created_at, id),
    // which serves the per-product recompute too; this only ensures the index exists.
    `CREATE INDEX IF NOT EXISTS reviews_by_product ON reviews (organization_id, product_id)`
  ]
}
