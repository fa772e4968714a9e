import type { Migration } from "../kernel/Migrations.ts"

/**
 * The claim and the outcomes' write take the outcomes as arrays (docs/DECISIONS.md §41): one array per field,
 * bound as parameters, where a JSON document was parsed by a statement of its own on every turn. The claim
 * answers only what a claimed delivery needs: its outcome fields are
 * empty and its claimer and time are the caller's own, so they no longer travel back.
 *
 * Statements and settings are those of migration 107 otherwise. The functions of migration 107 stay for processes
 * of the previous version still running during a rolling restart; nothing of this version calls them.
 */
const plannerSettings = `
  SET plan_cache_mode = force_generic_plan SET jit = off SET enable_seqscan = off SET enable_sort = off
  SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off`

/** The outcomes of deliveries `dispatcher` holds, field by field (`PgWebhookStore.completeDeliveries`). */
const recordFunction = `CREATE FUNCTION feedback_record_outcomes(
    orgs uuid[], ids uuid[], statuses text[], codes integer[], errors text[], durations integer[], dispatcher uuid)
  RETURNS SETOF uuid
  LANGUAGE plpgsql${plannerSettings}
  AS $fn$
  DECLARE
    held_orgs uuid[]; held_ids uuid[]; claimed_ats timestamptz[];
  BEGIN
    IF cardinality(ids) IS NULL OR cardinality(ids) = 0 THEN
      RETURN;
    END IF;
    WITH done AS (
      DELETE FROM webhook_delivery_queue q
      WHERE q.claimed_by = dispatcher AND q.organization_id = ANY (orgs) AND q.id = ANY (ids)
        AND orgs[array_position(ids, q.id)] = q.organization_id
      RETURNING q.organization_id, q.id, q.attempted_at
    )
    SELECT array_agg(done.organization_id), array_agg(done.id), array_agg(done.attempted_at)
      INTO held_orgs, held_ids, claimed_ats
      FROM done;
    IF held_ids IS NULL THEN
      RETURN;
    END IF;
    -- No join: the records are found by both key columns as arrays, and their outcome by position.
    RETURN QUERY
    WITH recorded AS (
      UPDATE webhook_deliveries d
      SET status = statuses[array_position(ids, d.id)], response_status = codes[array_position(ids, d.id)],
        error = errors[array_position(ids, d.id)], duration_ms = durations[array_position(ids, d.id)],
        claimed_by = dispatcher, attempted_at = claimed_ats[array_position(held_ids, d.id)]
      WHERE d.organization_id = ANY (held_orgs) AND d.id = ANY (held_ids)
        AND held_orgs[array_position(held_ids, d.id)] = d.organization_id
      RETURNING d.id
    )
    SELECT recorded.id FROM recorded;
    -- A finished delivery frees a slot of its webhook and lets its record's next one go: other dispatchers look.
    IF FOUND THEN
      PERFORM pg_notify('feedback_work', 'deliveries');
    END IF;
  END
  $fn$`

/** The claim of migration 107, answering a claimed delivery's own fields only, then the outcomes that came with it. */
const claimFunction = `CREATE FUNCTION feedback_claim_with_outcomes(
    orgs uuid[], ids uuid[], statuses text[], codes integer[], errors text[], durations integer[],
    dispatcher uuid, claimed_at timestamptz, max_claims integer, per_webhook integer)
  RETURNS TABLE (organization_id uuid, id uuid, webhook_id uuid, event_id uuid, event text, idempotency_key uuid,
    payload text, created_at timestamptz, redelivery_of uuid, record_key text, url text, hmac_secret text,
    previous_hmac_secret text, previous_secret_expires_at timestamptz)
  LANGUAGE plpgsql${plannerSettings}
  AS $fn$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH RECURSIVE hooks AS (
      (SELECT q.organization_id, q.webhook_id FROM webhook_delivery_queue q WHERE q.claimed_by IS NULL
       ORDER BY q.organization_id, q.webhook_id LIMIT 1)
      UNION ALL
      SELECT n.organization_id, n.webhook_id FROM hooks h CROSS JOIN LATERAL (
        SELECT q.organization_id, q.webhook_id FROM webhook_delivery_queue q
        WHERE q.claimed_by IS NULL AND (q.organization_id, q.webhook_id) > (h.organization_id, h.webhook_id)
        ORDER BY q.organization_id, q.webhook_id LIMIT 1) n
    ), candidates AS MATERIALIZED (
      SELECT c.organization_id, c.id, c.created_at
      FROM hooks h
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS n FROM webhook_delivery_queue f
        WHERE f.claimed_by IS NOT NULL AND f.organization_id = h.organization_id AND f.webhook_id = h.webhook_id
      ) f
      CROSS JOIN LATERAL (
        SELECT d.organization_id, d.id, d.created_at
        FROM webhook_delivery_queue d
        LEFT JOIN LATERAL (
          SELECT true AS held FROM webhook_delivery_queue e
          WHERE d.record_key IS NOT NULL AND e.organization_id = d.organization_id AND e.webhook_id = d.webhook_id
            AND e.record_key = d.record_key AND (e.event_seq, e.id) < (d.event_seq, d.id)
          ORDER BY e.event_seq, e.id LIMIT 1
        ) earlier ON TRUE
        WHERE d.claimed_by IS NULL AND d.organization_id = h.organization_id AND d.webhook_id = h.webhook_id
          AND earlier.held IS NULL
        ORDER BY d.created_at, d.id
        LIMIT greatest(0, least(per_webhook - f.n, max_claims))
      ) c
    ), picked AS (
      SELECT d.organization_id, d.id, d.ctid
      FROM (SELECT * FROM candidates ORDER BY created_at, id) c
      CROSS JOIN LATERAL (
        SELECT d.organization_id, d.id, d.claimed_by, d.ctid FROM webhook_delivery_queue d
        WHERE d.organization_id = c.organization_id AND d.id = c.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      ) d
      WHERE d.claimed_by IS NULL
      ORDER BY c.created_at, c.id
      LIMIT max_claims
    ), claimed AS (
      UPDATE webhook_delivery_queue q
      SET claimed_by = dispatcher, attempted_at = claimed_at
      WHERE q.ctid = ANY (ARRAY(SELECT p.ctid FROM picked p))
      RETURNING q.organization_id, q.id, q.webhook_id
    )
    SELECT d.organization_id, d.id, d.webhook_id, d.event_id, d.event, d.idempotency_key, d.payload,
      d.created_at, d.redelivery_of, d.record_key, w.url, w.hmac_secret, w.previous_hmac_secret,
      w.previous_secret_expires_at
    FROM claimed c
    CROSS JOIN LATERAL (
      SELECT * FROM webhook_deliveries d WHERE d.organization_id = c.organization_id AND d.id = c.id LIMIT 1
    ) d
    CROSS JOIN LATERAL (
      SELECT * FROM webhooks w WHERE w.organization_id = c.organization_id AND w.id = c.webhook_id LIMIT 1
    ) w;
    PERFORM 1 FROM feedback_record_outcomes(orgs, ids, statuses, codes, errors, durations, dispatcher);
  END
  $fn$`

export const deliveryOutcomesAsArraysMigration: Migration = {
  id: 109,
  name: "delivery_outcomes_as_arrays",
  statements: [recordFunction, claimFunction]
}
