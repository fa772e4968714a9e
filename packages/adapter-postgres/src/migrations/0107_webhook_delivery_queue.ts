import type { Migration } from "../kernel/Migrations.ts"

/**
 * The delivery queue (docs/DECISIONS.md §38): the open deliveries (pending or in flight) as narrow rows of their own,
 * so a claim and an outcome write one small table instead of rewriting the delivery record into every index of
 * `webhook_deliveries` twice.
 *
 * - `webhook_delivery_queue` holds one row per delivery that is not finished: inserted with its delivery, claimed by
 *   setting `claimed_by` and `attempted_at`, deleted when its outcome is written (in the same transaction). A claimed
 *   row is the delivery's `in_flight` state; readers of the log derive the status from it (`PgWebhookStore`). Its
 *   rows are only inserted from the fan-out's `RETURNING`, so it has no foreign key (a per-row check on every
 *   insert): a statement trigger deletes the queue rows of deleted records, and `TRUNCATE` empties it.
 *   A claim moves a row between the partial indexes (not HOT); the page's free room keeps the new version near.
 * - The indexes the claim reads (pending per webhook, in flight per webhook, open per record) move there from
 *   `webhook_deliveries`: each index had a predicate on `status`, so every status change inserted the row into every
 *   index of the big table again. The record keeps the indexes of its log, keys and uniqueness, none naming a column
 *   an outcome writes, and free room on each page (fillfactor), so the outcome's update is HOT (no index touched).
 * - Open deliveries move over as they are: an in-flight one keeps its claimer (one with none gets a claimer that is
 *   never alive, so it fails as interrupted rather than being sent again).
 */
/**
 * The claim and the outcomes' write are functions, for the settings their statements run under. A queue is often
 * empty when it is analyzed and full when it is read, so its statistics say nothing about the next claim: with "no
 * rows" estimates the planner scans the primary key for each probe and joins by scanning the whole queue, a cost
 * that grows with the square of a backlog. Sequential and bitmap scans, sorts, hash and merge joins are switched off
 * for these statements alone, so each read is the index probe it is written for whatever the estimates; their plans
 * are generic (planned once per connection, not per turn), and never JIT-compiled.
 */
const plannerSettings = `
  SET plan_cache_mode = force_generic_plan SET jit = off SET enable_seqscan = off SET enable_sort = off
  SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off`

/**
 * The outcomes of deliveries `dispatcher` holds (`PgWebhookStore.completeDeliveries`): their queue rows go, their
 * records get the outcome with the claim's claimer and time, in an update of columns no index names (HOT when the
 * page has room). Returns the ids recorded; an outcome of a delivery the dispatcher no longer holds is ignored. The
 * JSON is parsed once, into arrays that probe the primary keys.
 */
const recordFunction = `CREATE FUNCTION feedback_record_deliveries(outcomes json, dispatcher uuid) RETURNS SETOF uuid
  LANGUAGE plpgsql${plannerSettings}
  AS $fn$
  DECLARE
    orgs uuid[]; ids uuid[]; statuses text[]; codes integer[]; errors text[]; durations integer[];
    held_orgs uuid[]; held_ids uuid[]; claimed_ats timestamptz[];
  BEGIN
    SELECT array_agg(v.organization_id), array_agg(v.id), array_agg(v.status), array_agg(v.response_status),
        array_agg(v.error), array_agg(v.duration_ms)
      INTO orgs, ids, statuses, codes, errors, durations
      FROM json_to_recordset(outcomes)
        AS v(organization_id uuid, id uuid, status text, response_status integer, error text, duration_ms integer);
    IF orgs IS NULL THEN
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

/**
 * The claim (`PgWebhookStore.claimDeliveries`, docs/DECISIONS.md §24, §30, §38): up to `max_claims` of the oldest
 * claimable deliveries, at most `per_webhook` in flight per webhook, then the outcomes that came with it. The claim
 * runs first, so it still sees those deliveries in flight, as when both were one statement (docs/DECISIONS.md §30).
 */
const claimFunction = `CREATE FUNCTION feedback_claim_deliveries(
    outcomes json, dispatcher uuid, claimed_at timestamptz, max_claims integer, per_webhook integer)
  RETURNS TABLE (organization_id uuid, id uuid, webhook_id uuid, event_id uuid, event text, idempotency_key uuid,
    payload text, response_status integer, error text, duration_ms integer, created_at timestamptz,
    attempted_at timestamptz, claimed_by uuid, redelivery_of uuid, record_key text, url text, hmac_secret text,
    previous_hmac_secret text, previous_secret_expires_at timestamptz)
  LANGUAGE plpgsql${plannerSettings}
  AS $fn$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH RECURSIVE hooks AS (
      -- The webhooks with pending deliveries, one index probe each (a skip scan of the pending index).
      (SELECT q.organization_id, q.webhook_id FROM webhook_delivery_queue q WHERE q.claimed_by IS NULL
       ORDER BY q.organization_id, q.webhook_id LIMIT 1)
      UNION ALL
      SELECT n.organization_id, n.webhook_id FROM hooks h CROSS JOIN LATERAL (
        SELECT q.organization_id, q.webhook_id FROM webhook_delivery_queue q
        WHERE q.claimed_by IS NULL AND (q.organization_id, q.webhook_id) > (h.organization_id, h.webhook_id)
        ORDER BY q.organization_id, q.webhook_id LIMIT 1) n
    ), candidates AS MATERIALIZED (
      -- Each webhook's oldest claimable deliveries, as many as it has free slots (and the claim can take): the
      -- limit is the free slots themselves, which the forced plan allows (docs/DECISIONS.md §38).
      SELECT c.organization_id, c.id, c.created_at
      FROM hooks h
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS n FROM webhook_delivery_queue f
        WHERE f.claimed_by IS NOT NULL AND f.organization_id = h.organization_id AND f.webhook_id = h.webhook_id
      ) f
      CROSS JOIN LATERAL (
        SELECT d.organization_id, d.id, d.created_at
        FROM webhook_delivery_queue d
        -- One record's deliveries go out one at a time, in event order: an earlier one still queued (pending or in
        -- flight) holds it back. A lateral with an order (not EXISTS, whose order and limit the planner drops) keeps
        -- it a probe of the by-record index: the primary key, the other index it could use, has no such order.
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
      -- Oldest first across webhooks; each row locked by primary key as it is taken, up to the limit, and checked
      -- on the locked row.
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
      -- By the locked rows' addresses: joined by key, a queue the planner takes for empty is scanned whole per claim.
      WHERE q.ctid = ANY (ARRAY(SELECT p.ctid FROM picked p))
      RETURNING q.organization_id, q.id, q.webhook_id, q.claimed_by, q.attempted_at
    )
    SELECT d.organization_id, d.id, d.webhook_id, d.event_id, d.event, d.idempotency_key, d.payload,
      d.response_status, d.error, d.duration_ms, d.created_at, c.attempted_at, c.claimed_by, d.redelivery_of,
      d.record_key, w.url, w.hmac_secret, w.previous_hmac_secret, w.previous_secret_expires_at
    FROM claimed c
    -- Laterals, so each is a probe of a primary key by both its columns: as a join, the generic plan probed the
    -- records by organization alone and filtered every delivery of the organization per claimed row.
    CROSS JOIN LATERAL (
      SELECT * FROM webhook_deliveries d WHERE d.organization_id = c.organization_id AND d.id = c.id LIMIT 1
    ) d
    CROSS JOIN LATERAL (
      SELECT * FROM webhooks w WHERE w.organization_id = c.organization_id AND w.id = c.webhook_id LIMIT 1
    ) w;
    PERFORM 1 FROM feedback_record_deliveries(outcomes, dispatcher);
  END
  $fn$`

export const webhookDeliveryQueueMigration: Migration = {
  id: 107,
  name: "webhook_delivery_queue",
  statements: [
    `CREATE TABLE webhook_delivery_queue (
      organization_id uuid NOT NULL,
      id uuid NOT NULL,
      webhook_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      record_key text,
      event_seq bigint,
      claimed_by uuid,
      attempted_at timestamptz,
      PRIMARY KEY (organization_id, id)
    ) WITH (fillfactor = 80)`,
    `CREATE INDEX webhook_delivery_queue_pending ON webhook_delivery_queue (organization_id, webhook_id, created_at, id)
      WHERE claimed_by IS NULL`,
    `CREATE INDEX webhook_delivery_queue_in_flight ON webhook_delivery_queue (organization_id, webhook_id)
      WHERE claimed_by IS NOT NULL`,
    `CREATE INDEX webhook_delivery_queue_by_record ON webhook_delivery_queue
      (organization_id, webhook_id, record_key, event_seq, id) WHERE record_key IS NOT NULL`,
    `INSERT INTO webhook_delivery_queue (organization_id, id, webhook_id, created_at, record_key, event_seq, claimed_by,
        attempted_at)
      SELECT organization_id, id, webhook_id, created_at, record_key, event_seq,
        CASE WHEN status = 'in_flight' THEN coalesce(claimed_by, '00000000-0000-0000-0000-000000000000') END,
        CASE WHEN status = 'in_flight' THEN attempted_at END
      FROM webhook_deliveries WHERE status IN ('pending', 'in_flight')`,
    `DROP INDEX webhook_deliveries_pending_by_webhook`,
    `DROP INDEX webhook_deliveries_in_flight`,
    `DROP INDEX webhook_deliveries_open_by_record`,
    `ALTER TABLE webhook_deliveries SET (fillfactor = 50)`,
    `CREATE FUNCTION feedback_delivery_queue_follow() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        TRUNCATE webhook_delivery_queue;
      ELSE
        DELETE FROM webhook_delivery_queue q USING deleted_deliveries d
          WHERE q.organization_id = d.organization_id AND q.id = d.id;
      END IF;
      RETURN NULL;
    END
    $fn$`,
    `CREATE TRIGGER webhook_deliveries_queue_deleted AFTER DELETE ON webhook_deliveries
      REFERENCING OLD TABLE AS deleted_deliveries
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_delivery_queue_follow()`,
    `CREATE TRIGGER webhook_deliveries_queue_truncated AFTER TRUNCATE ON webhook_deliveries
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_delivery_queue_follow()`,
    recordFunction,
    claimFunction,
    // The `deliveries` wake-up (docs/DECISIONS.md §23) no longer reads the records' transition tables, which copied every
    // inserted or finished row (payload included): a queue insert wakes once per statement, an outcome or a failure
    // written by the functions and statements of `PgWebhookStore` sends it itself, a claim sends none.
    `DROP TRIGGER webhook_deliveries_inserted_work ON webhook_deliveries`,
    `DROP TRIGGER webhook_deliveries_updated_work ON webhook_deliveries`,
    `CREATE TRIGGER webhook_delivery_queue_work AFTER INSERT ON webhook_delivery_queue
      FOR EACH STATEMENT EXECUTE FUNCTION feedback_notify_work('deliveries')`
  ]
}
