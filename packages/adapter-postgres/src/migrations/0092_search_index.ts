import { Kernel } from "@feedback/core"
import type { Migration } from "../kernel/Migrations.ts"

/**
 * Review search served by trigram indexes (docs/DECISIONS.md §4): `search_fold` is the search's case folding
 * (`Search.ts`: A-Z and the Latin-1 capitals, whatever the database's locale) as an immutable function, so an index can hold its value, and `pg_trgm` GIN indexes over the folded
 * title, body, customer email and names and product title answer `LIKE '%term%'` without reading every review.
 * `pg_trgm` ships with PostgreSQL (contrib, a trusted extension) and with PGlite; where a server lacks it, the
 * migration still succeeds and search keeps scanning (same answers, slower).
 */
export const searchIndexMigration: Migration = {
  id: 92,
  name: "search_index",
  statements: [
    // `translate` with the 56-letter table is slow per value; text without a Latin-1 capital (nearly all) is
    // folded by the C collation's ASCII-only `lower` instead, which gives the same result (FilterSql.compileSearch).
    // Not STRICT: a strict function whose body (a CASE) is not strict is never inlined, and runs several times slower.
    `CREATE OR REPLACE FUNCTION search_fold(value text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $fn$ SELECT CASE WHEN value ~ '[${
      Kernel.foldFrom.slice(26)
    }]' THEN translate(value, '${Kernel.foldFrom}', '${Kernel.foldTo}')
        ELSE lower(value COLLATE "C") END $fn$`,
    // The extension is the database's, not the store schema's (another schema's store may use it too): made in
    // `public` when missing, and found wherever a host installed it.
    `DO $do$
    DECLARE
      trgm_schema text;
    BEGIN
      BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available (%): search works without its indexes', SQLERRM;
      END;
      SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
      IF trgm_schema IS NOT NULL THEN
        PERFORM set_config('search_path', current_setting('search_path') || ', ' || quote_ident(trgm_schema), true);
        CREATE INDEX IF NOT EXISTS reviews_search_title ON reviews USING gin (search_fold(title) gin_trgm_ops);
        CREATE INDEX IF NOT EXISTS reviews_search_body ON reviews USING gin (search_fold(body) gin_trgm_ops);
        CREATE INDEX IF NOT EXISTS customers_search_email ON customers USING gin (search_fold(email) gin_trgm_ops);
        CREATE INDEX IF NOT EXISTS customers_search_first_name ON customers USING gin (search_fold(first_name) gin_trgm_ops);
        CREATE INDEX IF NOT EXISTS customers_search_last_name ON customers USING gin (search_fold(last_name) gin_trgm_ops);
        CREATE INDEX IF NOT EXISTS products_search_title ON products USING gin (search_fold(title) gin_trgm_ops);
      END IF;
    END
    $do$`
  ]
}
