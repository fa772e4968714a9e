/** TEST SUPPORT: set-based recalculation of products' review stats, shared by the seed and the data set generator. */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { histogramColumns, starSql } from "../catalog/CatalogRows.ts"

/**
 * Review stats (docs/DECISIONS.md §5) of the given products, recalculated from their reviews in one statement. The
 * data set is also generated on the schema of earlier migrations, to test a migration's backfill on it; before
 * migration 111 products keep no sum of ratings (that migration computes it), so the sum is written only when present.
 */
export const recalculateProductStats = (
  sql: SqlClient.SqlClient,
  organizationId: string,
  productIds: ReadonlyArray<string> | "all"
) =>
  Effect.gen(function*() {
    const column = (name: string) =>
      Effect.map(
        sql.unsafe<{ present: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'products'::regclass
             AND attname = $1 AND NOT attisdropped) AS present`,
          [name]
        ),
        (rows) => rows[0]?.present === true
      )
    const present = yield* column("published_rating_sum")
    // Migration 133 adds the histogram by star.
    const histogram = yield* column("published_one_star")
    yield* sql.unsafe(
      `UPDATE products p SET review_count = s.n, published_review_count = s.pn, average_rating = s.average
         ${present ? ", published_rating_sum = s.total" : ""}
         ${histogram ? ", " + histogramColumns.map((c, i) => `${c} = s.h${i + 1}`).join(", ") : ""}
       FROM (
         SELECT q.id, count(r.id)::int AS n, (count(r.id) FILTER (WHERE r.published))::int AS pn,
                coalesce(sum(r.rating) FILTER (WHERE r.published), 0) AS total, avg(r.rating) FILTER (WHERE r.published) AS average,
                ${
        [1, 2, 3, 4, 5].map((n) =>
          `(count(r.id) FILTER (WHERE r.published AND ${starSql("r.rating")} = ${n}))::int AS h${n}`
        ).join(", ")
      }
         FROM products q
         LEFT JOIN reviews r ON r.organization_id = q.organization_id AND r.product_id = q.id
         WHERE q.organization_id = $1
           AND ($2::jsonb IS NULL OR q.id IN (SELECT (jsonb_array_elements_text($2::jsonb))::uuid))
         GROUP BY q.id
       ) s
       WHERE p.organization_id = $1 AND p.id = s.id`,
      [organizationId, productIds === "all" ? null : JSON.stringify(productIds)]
    )
  })
