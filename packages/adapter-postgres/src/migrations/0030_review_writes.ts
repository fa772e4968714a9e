import type { Migration } from "../Migrations.ts"

/**
 * The review write side: product review stats are recomputed per product after every change, so reviews are
 * reachable by product; `published` and `rating` ride along so the aggregate reads the index alone.
 */
export const reviewWritesMigration: Migration = {
  id: 30,
  name: "review_writes",
  statements: [
    `CREATE INDEX reviews_by_product ON reviews (organization_id, product_id) INCLUDE (published, rating)`
  ]
}
