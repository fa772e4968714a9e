/** TEST SUPPORT: set-based recalculation of products' review stats, shared by the seed and the data set generator. */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** Review stats (docs/DECISIONS.md §5) of the given products, recalculated from their reviews in one statement. */
export const recalculateProductStats = (
  sql: SqlClient.SqlClient,
  organizationId: string,
  productIds: ReadonlyArray<string> | "all"
) =>
  sql.unsafe(
    `UPDATE products p SET review_count = s.n, published_review_count = s.pn, average_rating = s.average
     FROM (
       SELECT q.id, count(r.id)::int AS n, (count(r.id) FILTER (WHERE r.published))::int AS pn,
              avg(r.rating) FILTER (WHERE r.published) AS average
       FROM products q
       LEFT JOIN reviews r ON r.organization_id = q.organization_id AND r.product_id = q.id
       WHERE q.organization_id = $1
         AND ($2::jsonb IS NULL OR q.id IN (SELECT (jsonb_array_elements_text($2::jsonb))::uuid))
       GROUP BY q.id
     ) s
     WHERE p.organization_id = $1 AND p.id = s.id`,
    [organizationId, productIds === "all" ? null : JSON.stringify(productIds)]
  ).pipe(Effect.asVoid)
