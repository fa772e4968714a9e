import type { Migration } from "../kernel/Migrations.ts"

/**
 * Each product keeps how many of its published reviews have each number of stars (docs/DECISIONS.md §55), beside the
 * count and sum of migration 111, kept in the same statements (`recalculateProductStats`, `addProductStats`), so a
 * storefront's `GET /storefront/ratings` reads one row per product. A rating counts for the nearest whole star,
 * halves up (`floor(rating + 0.5)`, as `starOf` computes it).
 */
export const ratingHistogramMigration: Migration = {
  id: 133,
  name: "rating_histogram",
  statements: [
    `ALTER TABLE products
      ADD COLUMN published_one_star integer NOT NULL DEFAULT 0,
      ADD COLUMN published_two_stars integer NOT NULL DEFAULT 0,
      ADD COLUMN published_three_stars integer NOT NULL DEFAULT 0,
      ADD COLUMN published_four_stars integer NOT NULL DEFAULT 0,
      ADD COLUMN published_five_stars integer NOT NULL DEFAULT 0`,
    `UPDATE products p SET published_one_star = s.h1, published_two_stars = s.h2, published_three_stars = s.h3,
        published_four_stars = s.h4, published_five_stars = s.h5
      FROM (SELECT organization_id, product_id,
              count(*) FILTER (WHERE least(5, greatest(1, floor(rating + 0.5))) = 1) AS h1,
              count(*) FILTER (WHERE least(5, greatest(1, floor(rating + 0.5))) = 2) AS h2,
              count(*) FILTER (WHERE least(5, greatest(1, floor(rating + 0.5))) = 3) AS h3,
              count(*) FILTER (WHERE least(5, greatest(1, floor(rating + 0.5))) = 4) AS h4,
              count(*) FILTER (WHERE least(5, greatest(1, floor(rating + 0.5))) = 5) AS h5
            FROM reviews WHERE published GROUP BY organization_id, product_id) s
      WHERE p.organization_id = s.organization_id AND p.id = s.product_id`,
    // The storefront finds sites by domain for CORS (docs/DECISIONS.md §55).
    `CREATE INDEX IF NOT EXISTS sites_by_domain ON sites (organization_id, lower(domain))`
  ]
}
