import type { Migration } from "../kernel/Migrations.ts"

/**
 * Each product keeps the sum of its published reviews' ratings beside their count (docs/DECISIONS.md §46), so new
 * reviews are added to its stats (`PgReviewWriteStore.addProductStats`) without reading its other reviews, and the
 * average stays exactly the sum over the count, as `avg` computes it. Every recomputation writes the sum too.
 *
 * Half of each page of `products` is left free: a batch of an import updates the stats of every product it touches,
 * and with no room beside a row its new version went to another page and into every index (the title's trigram
 * index too), so a job's batches left the table and its indexes growing. With room, the update stays on the page
 * and touches no index (HOT), and the next batch prunes the versions the last one left.
 */
export const productRatingSumsMigration: Migration = {
  id: 111,
  name: "product_rating_sums",
  statements: [
    `ALTER TABLE products ADD COLUMN published_rating_sum double precision NOT NULL DEFAULT 0`,
    `ALTER TABLE products SET (fillfactor = 50)`,
    `UPDATE products p SET published_rating_sum = s.total
      FROM (SELECT organization_id, product_id, sum(rating) AS total FROM reviews WHERE published
            GROUP BY organization_id, product_id) s
      WHERE p.organization_id = s.organization_id AND p.id = s.product_id`
  ]
}
