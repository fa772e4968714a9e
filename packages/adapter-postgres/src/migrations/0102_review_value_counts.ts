import type { Migration } from "../kernel/Migrations.ts"

/**
 * How many reviews of an organization hold each browser fingerprint and IP address: what the `collisions` include
 * reads, kept up to date on write instead of counted on read (docs/DECISIONS.md §28). Counting on read probed every
 * review sharing each value of the page, so its cost grew with the data; one primary-key probe per value does not.
 *
 * Statement-level triggers with transition tables maintain the table, so every write path — single writes, imports,
 * bulk updates, deletions and the cascade of an organization's deletion — changes the counts in the statement's own
 * transaction, set-based (one aggregated upsert per statement, in key order so that concurrent writers lock count
 * rows in the same order). A count that reaches 0 is removed, so the table holds only values some review holds and
 * an organization's deletion leaves nothing behind (no foreign key to `organizations`: the cascade to `reviews`
 * empties it). `TRUNCATE reviews` empties it too.
 */
const applyDelta = (changed: string) => `
    DECLARE emptied_orgs uuid[]; emptied_kinds text[]; emptied_values text[];
    BEGIN
      WITH changed AS (${changed}),
      delta AS (
        SELECT organization_id, v.kind, v.value, sum(changed.d)::int AS n
          FROM changed,
            LATERAL (VALUES ('browser_fingerprint', changed.browser_fingerprint), ('ip_address', changed.ip_address)) AS v (kind, value)
          WHERE v.value IS NOT NULL
          GROUP BY organization_id, v.kind, v.value
          HAVING sum(changed.d) <> 0
      ),
      applied AS (
        INSERT INTO review_value_counts AS c (organization_id, kind, value, reviews)
          SELECT organization_id, kind, value, n FROM delta ORDER BY organization_id, kind, value
          ON CONFLICT (organization_id, kind, value) DO UPDATE SET reviews = c.reviews + excluded.reviews
          RETURNING c.organization_id, c.kind, c.value, c.reviews
      )
      SELECT array_agg(organization_id), array_agg(kind), array_agg(value)
        INTO emptied_orgs, emptied_kinds, emptied_values
        FROM applied WHERE reviews <= 0;
      IF emptied_orgs IS NOT NULL THEN
        DELETE FROM review_value_counts c
          USING unnest(emptied_orgs, emptied_kinds, emptied_values) AS e (organization_id, kind, value)
          WHERE c.organization_id = e.organization_id AND c.kind = e.kind AND c.value = e.value AND c.reviews <= 0;
      END IF;
      RETURN NULL;
    END`

const newRows = `SELECT organization_id, browser_fingerprint, ip_address, 1 AS d FROM new_reviews`
const oldRows = `SELECT organization_id, browser_fingerprint, ip_address, -1 AS d FROM old_reviews`

export const reviewValueCountsMigration: Migration = {
  id: 102,
  name: "review_value_counts",
  statements: [
    `CREATE TABLE review_value_counts (
      organization_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('browser_fingerprint', 'ip_address')),
      value text NOT NULL,
      reviews integer NOT NULL,
      PRIMARY KEY (organization_id, kind, value)
    )`,
    `CREATE FUNCTION feedback_count_reviews_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$${
      applyDelta(newRows)
    }$fn$`,
    `CREATE FUNCTION feedback_count_reviews_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$${
      applyDelta(oldRows)
    }$fn$`,
    // Only rows whose fingerprint or address changed contribute: a bulk publish of many reviews writes no count.
    `CREATE FUNCTION feedback_count_reviews_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$${
      applyDelta(`
        SELECT x.organization_id, x.browser_fingerprint, x.ip_address, x.d
          FROM new_reviews n JOIN old_reviews o ON o.organization_id = n.organization_id AND o.id = n.id,
            LATERAL (VALUES (n.organization_id, n.browser_fingerprint, n.ip_address, 1),
                            (o.organization_id, o.browser_fingerprint, o.ip_address, -1))
              AS x (organization_id, browser_fingerprint, ip_address, d)
          WHERE n.browser_fingerprint IS DISTINCT FROM o.browser_fingerprint OR n.ip_address IS DISTINCT FROM o.ip_address`)
    }$fn$`,
    `CREATE FUNCTION feedback_count_reviews_truncated() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      TRUNCATE review_value_counts;
      RETURN NULL;
    END
    $fn$`,
    `CREATE TRIGGER reviews_value_counts_inserted AFTER INSERT ON reviews
      REFERENCING NEW TABLE AS new_reviews
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_count_reviews_inserted()`,
    `CREATE TRIGGER reviews_value_counts_deleted AFTER DELETE ON reviews
      REFERENCING OLD TABLE AS old_reviews
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_count_reviews_deleted()`,
    `CREATE TRIGGER reviews_value_counts_updated AFTER UPDATE ON reviews
      REFERENCING OLD TABLE AS old_reviews NEW TABLE AS new_reviews
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_count_reviews_updated()`,
    `CREATE TRIGGER reviews_value_counts_truncated AFTER TRUNCATE ON reviews
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_count_reviews_truncated()`,
    // The reviews stored before this migration; the triggers above (same transaction) count every later write.
    `INSERT INTO review_value_counts (organization_id, kind, value, reviews)
      SELECT organization_id, 'browser_fingerprint', browser_fingerprint, count(*) FROM reviews
        WHERE browser_fingerprint IS NOT NULL GROUP BY organization_id, browser_fingerprint
      UNION ALL
      SELECT organization_id, 'ip_address', ip_address, count(*) FROM reviews
        WHERE ip_address IS NOT NULL GROUP BY organization_id, ip_address`
  ]
}
