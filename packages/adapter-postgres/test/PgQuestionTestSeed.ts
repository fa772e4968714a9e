/** TEST SUPPORT ONLY: `QuestionTestSeed` over PostgreSQL (INSERTs catalog rows, scans every table's rows as text). */
import { QuestionTestSeed } from "@feedback/core/testing"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

const jsonb = (v: unknown) => JSON.stringify(v)

export const PgQuestionTestSeed = Layer.effect(QuestionTestSeed, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return QuestionTestSeed.of({
    insertSite: (s) =>
      sql`INSERT INTO sites (organization_id, id, name, domain, created_at, updated_at)
          VALUES (${s.organizationId}, ${s.id}, ${s.name}, ${s.domain}, ${s.createdAt}, ${s.updatedAt})`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    insertProduct: (p) =>
      sql`INSERT INTO products (organization_id, id, slug, title, description, image_url, url, external_id, metadata,
            notes, review_count, published_review_count, average_rating, created_at, updated_at)
          VALUES (${p.organizationId}, ${p.id}, ${p.slug}, ${p.title}, ${p.description}, ${p.imageUrl}, ${p.url},
            ${p.externalId}, ${jsonb(p.metadata)}::jsonb, ${p.notes}, ${p.reviewCount}, ${p.publishedReviewCount},
            ${p.averageRating}, ${p.createdAt}, ${p.updatedAt})`.pipe(Effect.asVoid, Effect.orDie),
    insertCustomer: (c) =>
      sql`INSERT INTO customers (organization_id, id, email, phone, first_name, last_name, country, birthday, metadata,
            notes, email_opt_out, email_opt_out_at, email_opt_out_source, created_at, updated_at)
          VALUES (${c.organizationId}, ${c.id}, ${c.email}, ${c.phone}, ${c.firstName}, ${c.lastName}, ${c.country},
            ${c.birthday}, ${jsonb(c.metadata)}::jsonb, ${c.notes}, ${c.emailOptOut}, ${c.emailOptOutAt},
            ${c.emailOptOutSource}, ${c.createdAt}, ${c.updatedAt})`.pipe(Effect.asVoid, Effect.orDie),
    tablesContaining: (needle) =>
      Effect.gen(function*() {
        const tables = yield* sql<{ tableName: string }>`SELECT table_name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
        const found: Array<string> = []
        for (const { tableName } of tables) {
          const rows = yield* sql<{ hit: boolean }>`SELECT EXISTS (
              SELECT 1 FROM ${sql(tableName)} x WHERE strpos(x::text, ${needle}) > 0) AS hit`
          if (rows[0]?.hit === true) found.push(tableName)
        }
        return found
      }).pipe(Effect.orDie)
  })
}))
