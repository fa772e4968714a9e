import type { Migration } from "../kernel/Migrations.ts"

/**
 * The guarantees of four foreign keys an import pays row by row, checked once per statement instead (docs/DECISIONS.md
 * §36), as migration 104 did for `domain_events`: each imported review's key to its import job, and each file, survey
 * answer and reply's key to its review, each a row-level check (a query and a `FOR KEY SHARE` lock) for every row
 * an import writes.
 *
 * What each key guaranteed, and what replaces it:
 * - an inserted row's parent exists and cannot be deleted (or re-keyed) before the inserting transaction ends: a
 *   statement trigger reads the statement's new rows (a transition table; `reviews` already keeps one for its value
 *   counts) and locks each distinct parent `FOR KEY SHARE` in one query, in key order, failing with
 *   `foreign_key_violation` (23503) and the key's old name when one is missing. A parent written by the same
 *   transaction (`xmin` is its id) is not locked: no other transaction can see it, let alone delete it, before this
 *   one ends — and an import's children and reviews all refer to parents its own statement just inserted;
 * - a row's key cannot be changed to a missing parent: a row trigger on `UPDATE OF` the key's columns (no ordinary
 *   write sets them, so it never fires on them);
 * - files, answers and replies go with their review (`ON DELETE CASCADE`): a statement trigger on deleting reviews
 *   deletes them (a fresh snapshot per statement under READ COMMITTED, so a child committed while the delete waited
 *   for its inserter's lock goes too), and truncating reviews truncates them;
 * - a review's key, or an import job that reviews refer to, cannot be deleted or changed under them (`NO ACTION`):
 *   row triggers that fail with 23503 if a referencing row remains once the statement (and its cascades) has run;
 *   truncating `import_jobs` fails while any review refers to a job.
 */
const violation = (table: string, constraint: string, detail: string) =>
  `RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = ${table}, CONSTRAINT = ${constraint},
        MESSAGE = format('insert or update on table "%s" violates foreign key constraint "%s"', ${table}, ${constraint}),
        DETAIL = ${detail}`

const referenced = (table: string, constraint: string, child: string) =>
  `RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', TABLE = '${table}', CONSTRAINT = ${constraint},
        MESSAGE = format('update or delete on table "${table}" violates foreign key constraint "%s" on table "%s"', ${constraint}, ${child})`

/**
 * A function that locks the parents (organization_ids[i], ids[i]) — distinct pairs, in key order — `FOR KEY SHARE`,
 * except those this transaction wrote itself, or raises `fail` when one is missing: what a foreign key's row check
 * did, once for a statement's rows.
 */
const requireParents = (
  options: { readonly name: string; readonly ids: string; readonly parent: string; readonly fail: string }
) =>
  `CREATE OR REPLACE FUNCTION ${options.name}
      RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE own integer; found integer; locked integer; me xid := pg_current_xact_id()::xid;
    BEGIN
      SELECT count(*) FILTER (WHERE x.mine), count(*) INTO own, found
        FROM unnest(organization_ids, ${options.ids}) AS k (organization_id, id),
          LATERAL (SELECT p.xmin = me AS mine FROM ${options.parent} p
            WHERE p.organization_id = k.organization_id AND p.id = k.id OFFSET 0) x;
      IF found > own THEN
        PERFORM 1 FROM unnest(organization_ids, ${options.ids}) AS k (organization_id, id),
          LATERAL (SELECT 1 FROM ${options.parent} p
            WHERE p.organization_id = k.organization_id AND p.id = k.id AND p.xmin <> me FOR KEY SHARE) x;
        GET DIAGNOSTICS locked = ROW_COUNT;
        found := own + locked;
      END IF;
      IF found < cardinality(${options.ids}) THEN
        ${options.fail};
      END IF;
    END
    $fn$`

const CHILDREN = ["review_files", "review_answers", "review_replies"] as const

export const reviewKeysPerStatementMigration: Migration = {
  id: 105,
  name: "review_keys_per_statement",
  statements: [
    // Locks the reviews (organization_id[i], id[i]) — distinct pairs — or fails naming the child's key.
    requireParents({
      name: "feedback_require_reviews(child text, organization_ids uuid[], review_ids uuid[])",
      ids: "review_ids",
      parent: "reviews",
      fail: violation(
        "child",
        "child || '_organization_id_review_id_fkey'",
        `'Key (organization_id, review_id) is not present in table "reviews".'`
      )
    }),
    requireParents({
      name: "feedback_require_import_jobs(organization_ids uuid[], job_ids uuid[])",
      ids: "job_ids",
      parent: "import_jobs",
      fail: violation(
        "'reviews'",
        "'reviews_organization_id_import_job_id_fkey'",
        `'Key (organization_id, import_job_id) is not present in table "import_jobs".'`
      )
    }),
    // Files, answers and replies: the statement's new rows, then a row whose key moves.
    `CREATE OR REPLACE FUNCTION feedback_review_children_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE orgs uuid[]; ids uuid[];
    BEGIN
      SELECT array_agg(k.organization_id ORDER BY k.organization_id, k.review_id),
          array_agg(k.review_id ORDER BY k.organization_id, k.review_id) INTO orgs, ids
        FROM (SELECT DISTINCT organization_id, review_id FROM new_rows) k;
      IF ids IS NOT NULL THEN
        PERFORM feedback_require_reviews(TG_TABLE_NAME, orgs, ids);
      END IF;
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_review_child_rekeyed() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM feedback_require_reviews(TG_TABLE_NAME, ARRAY[NEW.organization_id], ARRAY[NEW.review_id]);
      RETURN NULL;
    END
    $fn$`,
    // Reviews: the import jobs of the statement's new rows, then of a row whose job moves.
    `CREATE OR REPLACE FUNCTION feedback_reviews_inserted_jobs() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE orgs uuid[]; ids uuid[];
    BEGIN
      SELECT array_agg(k.organization_id ORDER BY k.organization_id, k.import_job_id),
          array_agg(k.import_job_id ORDER BY k.organization_id, k.import_job_id) INTO orgs, ids
        FROM (SELECT DISTINCT organization_id, import_job_id FROM new_reviews WHERE import_job_id IS NOT NULL) k;
      IF ids IS NOT NULL THEN
        PERFORM feedback_require_import_jobs(orgs, ids);
      END IF;
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_review_job_rekeyed() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM feedback_require_import_jobs(ARRAY[NEW.organization_id], ARRAY[NEW.import_job_id]);
      RETURN NULL;
    END
    $fn$`,
    // The parents' side: deleted reviews take their children along; a key still referred to cannot go.
    `CREATE OR REPLACE FUNCTION feedback_reviews_deleted_children() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      ${
      CHILDREN.map((c) =>
        `DELETE FROM ${c} c USING old_reviews o WHERE c.organization_id = o.organization_id AND c.review_id = o.id;`
      ).join("\n      ")
    }
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_reviews_truncated_children() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      TRUNCATE ${CHILDREN.join(", ")};
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_review_rekeyed_children() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      ${
      CHILDREN.map((c) =>
        `IF EXISTS (SELECT 1 FROM ${c} WHERE organization_id = OLD.organization_id AND review_id = OLD.id) THEN
        ${referenced("reviews", `'${c}_organization_id_review_id_fkey'`, `'${c}'`)};
      END IF;`
      ).join("\n      ")
    }
      RETURN NULL;
    END
    $fn$`,
    `CREATE OR REPLACE FUNCTION feedback_import_jobs_referenced() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF (TG_OP = 'TRUNCATE' AND EXISTS (SELECT 1 FROM reviews WHERE import_job_id IS NOT NULL))
        OR (TG_OP <> 'TRUNCATE' AND EXISTS (
          SELECT 1 FROM reviews WHERE organization_id = OLD.organization_id AND import_job_id = OLD.id)) THEN
        ${referenced("import_jobs", "'reviews_organization_id_import_job_id_fkey'", "'reviews'")};
      END IF;
      RETURN NULL;
    END
    $fn$`,
    `ALTER TABLE reviews DROP CONSTRAINT reviews_organization_id_import_job_id_fkey`,
    ...CHILDREN.flatMap((c) => [
      `ALTER TABLE ${c} DROP CONSTRAINT ${c}_organization_id_review_id_fkey`,
      `CREATE TRIGGER ${c}_review_required AFTER INSERT ON ${c} REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION feedback_review_children_inserted()`,
      `CREATE TRIGGER ${c}_review_rekeyed AFTER UPDATE OF organization_id, review_id ON ${c}
        FOR EACH ROW WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.review_id IS DISTINCT FROM NEW.review_id)
        EXECUTE FUNCTION feedback_review_child_rekeyed()`
    ]),
    `CREATE TRIGGER reviews_import_job_required AFTER INSERT ON reviews REFERENCING NEW TABLE AS new_reviews
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_reviews_inserted_jobs()`,
    `CREATE TRIGGER reviews_import_job_rekeyed AFTER UPDATE OF organization_id, import_job_id ON reviews
      FOR EACH ROW WHEN (NEW.import_job_id IS NOT NULL
        AND (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.import_job_id IS DISTINCT FROM NEW.import_job_id))
      EXECUTE FUNCTION feedback_review_job_rekeyed()`,
    `CREATE TRIGGER reviews_children_deleted AFTER DELETE ON reviews REFERENCING OLD TABLE AS old_reviews
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_reviews_deleted_children()`,
    `CREATE TRIGGER reviews_children_truncated AFTER TRUNCATE ON reviews
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_reviews_truncated_children()`,
    `CREATE TRIGGER reviews_children_rekeyed AFTER UPDATE OF organization_id, id ON reviews
      FOR EACH ROW WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.id IS DISTINCT FROM NEW.id)
      EXECUTE FUNCTION feedback_review_rekeyed_children()`,
    `CREATE TRIGGER import_jobs_reviews_deleted AFTER DELETE ON import_jobs
      FOR EACH ROW EXECUTE FUNCTION feedback_import_jobs_referenced()`,
    `CREATE TRIGGER import_jobs_reviews_rekeyed AFTER UPDATE OF organization_id, id ON import_jobs
      FOR EACH ROW WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.id IS DISTINCT FROM NEW.id)
      EXECUTE FUNCTION feedback_import_jobs_referenced()`,
    `CREATE TRIGGER import_jobs_reviews_truncated AFTER TRUNCATE ON import_jobs
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_import_jobs_referenced()`
  ]
}
