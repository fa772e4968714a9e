import type { Migration } from "../kernel/Migrations.ts"

/**
 * The claim takes organizations in turn and holds each to its delivery slots (docs/FAIRNESS.md): an organization
 * with `per_organization` deliveries in flight (any dispatcher's) gets no more, and the candidates are locked in
 * turn order (every organization's oldest, then every organization's next), so one organization's backlog never
 * fills a claim while another waits. Otherwise the statement and settings of migration 109's claim, which stays for
 * processes of the previous version during a rolling restart.
 */
const plannerSettings = `
  SET plan_cache_mode = force_generic_plan SET jit = off SET enable_seqscan = off SET enable_sort = off
  SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off`

const claimFunction = `CREATE FUNCTION feedback_claim_fairly(
    orgs uuid[], ids uuid[], statuses text[], codes integer[], errors text[], durations integer[],
    dispatcher uuid, claimed_at timestamptz, max_claims integer, per_webhook integer, per_organization integer)
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
    ), busy AS MATERIALIZED (
      -- Each organization's deliveries in flight, counted once per organization with pending work.
      SELECT o.organization_id, f.n
      FROM (SELECT DISTINCT h.organization_id FROM hooks h) o
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS n FROM webhook_delivery_queue f
        WHERE f.claimed_by IS NOT NULL AND f.organization_id = o.organization_id
      ) f
    ), candidates AS MATERIALIZED (
      SELECT c.organization_id, c.id, c.created_at, b.n AS org_busy
      FROM hooks h
      CROSS JOIN LATERAL (SELECT b.n FROM busy b WHERE b.organization_id = h.organization_id) b
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
        LIMIT greatest(0, least(per_webhook - f.n, per_organization - b.n, max_claims))
      ) c
    ), turns AS (
      -- Each organization's candidates oldest first, numbered: the claim takes turn 1 of every organization, then
      -- turn 2, and none beyond the organization's free slots.
      SELECT c.organization_id, c.id, c.created_at,
        row_number() OVER (PARTITION BY c.organization_id ORDER BY c.created_at, c.id) AS turn, c.org_busy
      FROM candidates c
    ), picked AS (
      SELECT d.organization_id, d.id, d.ctid
      FROM (SELECT * FROM turns t WHERE t.turn <= per_organization - t.org_busy ORDER BY t.turn, t.created_at, t.id) c
      CROSS JOIN LATERAL (
        SELECT d.organization_id, d.id, d.claimed_by, d.ctid FROM webhook_delivery_queue d
        WHERE d.organization_id = c.organization_id AND d.id = c.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      ) d
      WHERE d.claimed_by IS NULL
      ORDER BY c.turn, c.created_at, c.id
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

export const fairDeliveryClaimsMigration: Migration = {
  id: 141,
  name: "fair_delivery_claims",
  statements: [claimFunction]
}
