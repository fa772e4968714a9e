/** TEST SUPPORT ONLY: `SetupTestSeed` over the `sites`, `products` and `reviews` tables of migration 0003. */
import { SetupTestSeed } from "@feedback/core/testing"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

export const PgSetupTestSeed = Layer.effect(SetupTestSeed, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const remove = (table: string, organizationId: string, id: string) =>
    sql<{ id: string }>`DELETE FROM ${sql(table)} WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
  return SetupTestSeed.of({
    insertSite: (s) =>
      sql`INSERT INTO sites (organization_id, id, name, domain, created_at, updated_at)
          VALUES (${s.organizationId}, ${s.id}, ${s.name}, ${s.domain}, ${s.createdAt}, ${s.updatedAt})`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    deleteSite: (org, id) => remove("sites", org, id),
    insertProduct: (p) =>
      sql`INSERT INTO products (organization_id, id, slug, title, metadata, created_at, updated_at)
          VALUES (${p.organizationId}, ${p.id}, ${p.slug}, ${p.title}, ${JSON.stringify(p.metadata)}::jsonb,
                  ${p.createdAt}, ${p.updatedAt})`.pipe(Effect.asVoid, Effect.orDie),
    deleteProduct: (org, id) => remove("products", org, id),
    insertReview: (r) =>
      sql`INSERT INTO reviews (organization_id, id, site_id, product_id, title, body, rating, published, created_at,
              updated_at)
          VALUES (${r.organizationId}, ${r.id}, ${r.siteId}, ${r.productId}, ${r.title}, ${r.body}, ${r.rating},
                  ${r.published}, ${r.createdAt}, ${r.updatedAt})`.pipe(Effect.asVoid, Effect.orDie),
    deleteReview: (org, id) => remove("reviews", org, id)
  })
}))
