import type { Migration } from "../kernel/Migrations.ts"

/**
 * One record per key hash, so authentication finds exactly one key and a revoked secret can never be issued again
 * (the demo seed once re-issued a revoked DEMO_SECRET_KEY on restart). The table stays small and is looked up before
 * the organization is known; under Citus it would be a reference table, where a unique index is allowed.
 *
 * Hashes already stored twice are settled first: the oldest record keeps the hash and is revoked if any copy was;
 * the later copies are revoked and their hash replaced by a value no key hashes to (hex SHA-256 has no `:`).
 */
export const uniqueSecretKeyHashMigration: Migration = {
  id: 71,
  name: "unique_secret_key_hash",
  statements: [
    `WITH copies AS (
      SELECT organization_id, id,
        row_number() OVER (PARTITION BY key_hash ORDER BY created_at, id) AS n,
        min(revoked_at) OVER (PARTITION BY key_hash) AS first_revoked,
        count(*) OVER (PARTITION BY key_hash) AS total
      FROM secret_keys
    )
    UPDATE secret_keys s SET
      key_hash = CASE WHEN c.n = 1 THEN s.key_hash ELSE 'superseded:' || s.id::text END,
      revoked_at = COALESCE(s.revoked_at, c.first_revoked, CASE WHEN c.n > 1 THEN now() END)
    FROM copies c
    WHERE c.total > 1 AND s.organization_id = c.organization_id AND s.id = c.id`,
    `CREATE UNIQUE INDEX secret_keys_key_hash_unique ON secret_keys (key_hash)`,
    `DROP INDEX secret_keys_by_hash`
  ]
}
