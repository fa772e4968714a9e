import type { Migration } from "../kernel/Migrations.ts"

/**
 * Indexes of the review and catalog lists (keyset pages: sort value, then id, within one organization).
 *
 * - The keyset SQL of a NOT NULL sort column carries no NULLS clause (`ColumnRef.notNull`), so one ascending
 *   index serves both directions (a backward scan answers `created_at DESC, id DESC`).
 * - `moderated_at` is nullable and sorted NULLS LAST in both directions, which needs one index per direction.
 * - `product_id` / `customer_id` / `published` lead an index followed by `created_at, id`, so a list narrowed by
 *   them (optionally with a `createdAt` range) reads only its own rows, already in the default order.
 * - Fingerprint and IP address serve the `collisions` include (counts per value) and their filters.
 * - Reply, files and answers of a page are found by their (organization_id, review_id) keys of migration 3.
 */
export const listIndexesMigration: Migration = {
  id: 20,
  name: "list_indexes",
  statements: [
    `CREATE INDEX reviews_by_created ON reviews (organization_id, created_at, id)`,
    `CREATE INDEX reviews_by_rating ON reviews (organization_id, rating, id)`,
    `CREATE INDEX reviews_by_moderated_asc ON reviews (organization_id, moderated_at ASC NULLS LAST, id ASC)`,
    `CREATE INDEX reviews_by_moderated_desc ON reviews (organization_id, moderated_at DESC NULLS LAST, id DESC)`,
    `CREATE INDEX reviews_by_product ON reviews (organization_id, product_id, created_at, id)`,
    `CREATE INDEX reviews_by_customer ON reviews (organization_id, customer_id, created_at, id)
      WHERE customer_id IS NOT NULL`,
    `CREATE INDEX reviews_by_published ON reviews (organization_id, published, created_at, id)`,
    `CREATE INDEX reviews_by_fingerprint ON reviews (organization_id, browser_fingerprint)
      WHERE browser_fingerprint IS NOT NULL`,
    `CREATE INDEX reviews_by_ip ON reviews (organization_id, ip_address) WHERE ip_address IS NOT NULL`,
    `CREATE INDEX sites_by_created ON sites (organization_id, created_at, id)`,
    `CREATE INDEX products_by_created ON products (organization_id, created_at, id)`,
    `CREATE INDEX customers_by_created ON customers (organization_id, created_at, id)`
  ]
}
