/**
 * Webhooks, deliveries and dispatcher leases over PostgreSQL (schema: `migrations/0010_webhooks.ts`).
 *
 * The two hand-offs that make delivery at most once across processes are single statements that lock with
 * `FOR UPDATE SKIP LOCKED`: taking outbox events for fan-out (inside the fan-out's transaction, so the mark and the
 * deliveries commit together) and claiming pending deliveries (one statement, committed before any POST).
 */
import {
  type ClaimedDelivery,
  type CompletedDelivery,
  type DomainEvent,
  type OrganizationId,
  type WebhookDeliveryRecord,
  type WebhookListPosition,
  type WebhookRecord,
  WebhookRepository,
  previousSecretOf
} from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"
import { withoutTransforms } from "../kernel/RawRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"

interface WebhookRow {
  readonly organizationId: string
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly hmacSecret: string | null
  readonly previousHmacSecret: string | null
  readonly previousSecretExpiresAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

const toWebhookRecord = (r: WebhookRow): WebhookRecord => ({
  id: r.id as WebhookRecord["id"],
  organizationId: r.organizationId as OrganizationId,
  url: r.url,
  events: r.events as WebhookRecord["events"],
  hmacSecret: r.hmacSecret,
  previousHmacSecret: r.previousHmacSecret,
  previousSecretExpiresAt: r.previousSecretExpiresAt === null ? null : toTimestamp(r.previousSecretExpiresAt),
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

interface DeliveryRow {
  readonly organizationId: string
  readonly id: string
  readonly webhookId: string
  readonly eventId: string
  readonly event: string
  readonly idempotencyKey: string
  readonly status: WebhookDeliveryRecord["status"]
  readonly payload: string
  readonly responseStatus: number | null
  readonly error: string | null
  readonly durationMs: number | null
  readonly createdAt: Date
  readonly attemptedAt: Date | null
  readonly claimedBy: string | null
  readonly redeliveryOf: string | null
  readonly recordKey: string | null
}

const toDeliveryRecord = (r: DeliveryRow): WebhookDeliveryRecord => ({
  id: r.id as WebhookDeliveryRecord["id"],
  organizationId: r.organizationId as OrganizationId,
  webhookId: r.webhookId as WebhookDeliveryRecord["webhookId"],
  eventId: r.eventId as WebhookDeliveryRecord["eventId"],
  event: r.event,
  idempotencyKey: r.idempotencyKey,
  status: r.status,
  body: r.payload,
  responseStatus: r.responseStatus === null ? null : Number(r.responseStatus),
  error: r.error,
  durationMs: r.durationMs === null ? null : Number(r.durationMs),
  createdAt: toTimestamp(r.createdAt),
  attemptedAt: toNullableTimestamp(r.attemptedAt),
  claimedBy: r.claimedBy,
  redeliveryOf: r.redeliveryOf as WebhookDeliveryRecord["redeliveryOf"],
  recordKey: r.recordKey
})

interface EventRow {
  readonly organizationId: string
  readonly id: string
  readonly seq: string | number | bigint
  readonly event: string
  readonly data: unknown
  readonly occurredAt: Date
}

const oldestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/** Rows per INSERT statement (one JSON parameter of about half a megabyte at most). */
const INSERT_CHUNK = 1_000

/** PostgreSQL text cannot hold NUL, which a receiver's answer quoted in an outcome's `error` might: it becomes U+FFFD. */
const storableError = (error: string | null): string | null => error === null ? null : error.replaceAll("\u0000", "\uFFFD")

/** Outcomes as one JSON parameter. */
const outcomesJson = (completed: ReadonlyArray<CompletedDelivery>): string =>
  JSON.stringify(completed.map(({ id, organizationId, outcome }) => ({
    organization_id: organizationId,
    id,
    status: outcome.status,
    response_status: outcome.responseStatus,
    error: storableError(outcome.error),
    duration_ms: outcome.durationMs
  })))

export const PgWebhookRepository = Layer.effect(WebhookRepository, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const raw = withoutTransforms(sql)
  /**
   * A claim's limits as literals: the planner then knows them in every plan (a parameter's LIMIT is guessed at a
   * tenth of the rows), so its estimate stays small and under `jit_above_cost`. JIT compiling the claim cost 30-100 ms
   * per execution for a statement that runs in 1-2 ms.
   */
  const count = (n: number) => sql.literal(String(Math.max(0, Math.floor(n))))

  const eventsArray = (events: ReadonlyArray<string>) => sql`string_to_array(${events.join(",")}, ',')`
  const olderThan = (after: WebhookListPosition | undefined) =>
    after === undefined
      ? sql`TRUE`
      : sql`(created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`

  return WebhookRepository.of({
    insert: (w) =>
      sql`INSERT INTO webhooks (organization_id, id, url, events, hmac_secret, previous_hmac_secret,
            previous_secret_expires_at, created_at, updated_at)
          VALUES (${w.organizationId}, ${w.id}, ${w.url}, ${eventsArray(w.events)}, ${w.hmacSecret},
                  ${w.previousHmacSecret}, ${w.previousSecretExpiresAt}, ${w.createdAt}, ${w.updatedAt})`.pipe(Effect.asVoid, orDie),
    update: (w) =>
      sql`UPDATE webhooks SET url = ${w.url}, events = ${eventsArray(w.events)}, hmac_secret = ${w.hmacSecret},
            previous_hmac_secret = ${w.previousHmacSecret}, previous_secret_expires_at = ${w.previousSecretExpiresAt},
            updated_at = ${w.updatedAt}
          WHERE organization_id = ${w.organizationId} AND id = ${w.id}`.pipe(Effect.asVoid, orDie),
    remove: (organizationId, id) =>
      sql<{ id: string }>`DELETE FROM webhooks WHERE organization_id = ${organizationId} AND id = ${id}
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), orDie),
    findById: (organizationId, id) =>
      sql<WebhookRow>`SELECT * FROM webhooks WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toWebhookRecord)),
        orDie
      ),
    list: (organizationId, page) =>
      sql<WebhookRow>`SELECT * FROM webhooks
          WHERE organization_id = ${organizationId} AND ${olderThan(page.after)}
          ORDER BY created_at DESC, id DESC LIMIT ${page.limit}`.pipe(
        Effect.map((rows) => rows.map(toWebhookRecord)),
        orDie
      ),
    listDeliveries: (organizationId, webhookId, page) =>
      sql<DeliveryRow>`SELECT * FROM webhook_deliveries
          WHERE organization_id = ${organizationId} AND webhook_id = ${webhookId} AND ${olderThan(page.after)}
          ORDER BY created_at DESC, id DESC LIMIT ${page.limit}`.pipe(
        Effect.map((rows) => rows.map(toDeliveryRecord)),
        orDie
      ),

    takeUndispatchedEvents: (limit) =>
      sql<EventRow>`UPDATE domain_events SET fan_out_pending = false
          WHERE (organization_id, id) IN (
            SELECT organization_id, id FROM domain_events WHERE fan_out_pending
            ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING organization_id, id, seq, event, data, occurred_at`.pipe(
        Effect.map((rows) =>
          [...rows]
            .sort((a, b) => Number(a.seq) - Number(b.seq))
            .map((r): DomainEvent => ({
              id: r.id as DomainEvent["id"],
              organizationId: r.organizationId as OrganizationId,
              event: r.event,
              data: typeof r.data === "string" ? JSON.parse(r.data) : r.data,
              occurredAt: toTimestamp(r.occurredAt)
            }))
        ),
        orDie
      ),
    webhooksOf: (organizationIds) =>
      organizationIds.length === 0
        ? Effect.succeed([])
        : sql<WebhookRow>`SELECT * FROM webhooks WHERE ${sql.in("organization_id", organizationIds)}`.pipe(
          Effect.map((rows) => rows.map(toWebhookRecord)),
          orDie
        ),
    findDelivery: (organizationId, webhookId, id) =>
      sql<DeliveryRow>`SELECT * FROM webhook_deliveries
          WHERE organization_id = ${organizationId} AND id = ${id} AND webhook_id = ${webhookId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toDeliveryRecord)),
        orDie
      ),
    // One statement per chunk, the rows as one JSON parameter. Ordered deliveries take their event's place in the
    // outbox (`seq`) as they are inserted: fan-outs of several processes may commit out of order, the events of one
    // record cannot (docs/DECISIONS.md §17). (A separate UPDATE of the new rows wrote every row twice and re-ran its
    // foreign-key check; rows as a JSON document cost the server about what bound parameters do, and the process
    // far less than 16 parameters a row, docs/DECISIONS.md §30.)
    insertDeliveries: (deliveries) =>
      Effect.forEach(
        Array.from({ length: Math.ceil(deliveries.length / INSERT_CHUNK) }, (_, i) =>
          deliveries.slice(i * INSERT_CHUNK, (i + 1) * INSERT_CHUNK)),
        (chunk) =>
          sql`INSERT INTO webhook_deliveries (organization_id, id, webhook_id, event_id, event, idempotency_key, status,
                payload, response_status, error, duration_ms, created_at, attempted_at, claimed_by, redelivery_of,
                record_key, event_seq)
              SELECT v.*, CASE WHEN v.record_key IS NOT NULL THEN (
                  SELECT e.seq FROM domain_events e WHERE e.organization_id = v.organization_id AND e.id = v.event_id)
                END
              FROM json_to_recordset(${
            JSON.stringify(chunk.map((d) => ({
              organization_id: d.organizationId,
              id: d.id,
              webhook_id: d.webhookId,
              event_id: d.eventId,
              event: d.event,
              idempotency_key: d.idempotencyKey,
              status: d.status,
              payload: d.body,
              response_status: d.responseStatus,
              error: storableError(d.error),
              duration_ms: d.durationMs,
              created_at: d.createdAt,
              attempted_at: d.attemptedAt,
              claimed_by: d.claimedBy,
              redelivery_of: d.redeliveryOf,
              record_key: d.recordKey
            })))
          }::json) AS v(organization_id uuid, id uuid, webhook_id uuid, event_id uuid, event text, idempotency_key uuid,
                status text, payload text, response_status integer, error text, duration_ms integer,
                created_at timestamptz, attempted_at timestamptz, claimed_by uuid, redelivery_of uuid, record_key text)
              ON CONFLICT (organization_id, webhook_id, event_id) WHERE redelivery_of IS NULL DO NOTHING`,
        { discard: true }
      ).pipe(orDie),
    // `done` records the outcomes that come with the claim (docs/DECISIONS.md §30), always present (an empty
    // list when there are none) so the statement's text, and its plan, stay the same. The claim's snapshot still
    // shows those rows in flight: they count against their webhook's slots and hold their record's next delivery
    // until the next claim, as when the two ran side by side. (Counting them as finished would let the process that
    // records them take their slots again at once, every time, and leave other processes' dispatchers nothing.)
    // Read without the client's renames (the columns are named as the client would name them): the claim's rows are
    // the dispatcher's hottest read (docs/DECISIONS.md §34).
    claimDeliveries: ({ at, completed = [], dispatcherId, limit, perWebhookLimit }) =>
      raw<DeliveryRow & { url: string; hmacSecret: string | null; previousHmacSecret: string | null; previousSecretExpiresAt: Date | null }>`
          WITH RECURSIVE done AS (
            UPDATE webhook_deliveries d
            SET status = v.status, response_status = v.response_status, error = v.error, duration_ms = v.duration_ms
            FROM json_to_recordset(${outcomesJson(completed)}::json)
              AS v(organization_id uuid, id uuid, status text, response_status integer, error text, duration_ms integer)
            WHERE d.organization_id = v.organization_id AND d.id = v.id AND d.status = 'in_flight'
              AND d.claimed_by = ${dispatcherId}
            RETURNING d.organization_id, d.webhook_id
          ), hooks AS (
            -- The webhooks with pending deliveries, one index probe each (a skip scan of the pending index).
            (SELECT organization_id, webhook_id FROM webhook_deliveries WHERE status = 'pending'
             ORDER BY organization_id, webhook_id LIMIT 1)
            UNION ALL
            SELECT n.organization_id, n.webhook_id FROM hooks h CROSS JOIN LATERAL (
              SELECT organization_id, webhook_id FROM webhook_deliveries
              WHERE status = 'pending' AND (organization_id, webhook_id) > (h.organization_id, h.webhook_id)
              ORDER BY organization_id, webhook_id LIMIT 1) n
          ), candidates AS MATERIALIZED (
            -- Each webhook's oldest claimable deliveries, as many as it has free slots. Computed once: inlined, the
            -- planner may run it once per pending row when its estimates are off (a young or just-updated table).
            SELECT c.organization_id, c.id, c.created_at
            FROM hooks h
            CROSS JOIN LATERAL (
              SELECT count(*)::int AS n FROM webhook_deliveries f
              WHERE f.status = 'in_flight' AND f.organization_id = h.organization_id AND f.webhook_id = h.webhook_id
            ) f
            CROSS JOIN LATERAL (
              SELECT d.organization_id, d.id, d.created_at, row_number() OVER (ORDER BY d.created_at, d.id) AS slot
              FROM webhook_deliveries d
              WHERE d.status = 'pending' AND d.organization_id = h.organization_id AND d.webhook_id = h.webhook_id
                -- One record's deliveries go out one at a time, in event order: an earlier one pending or in flight waits.
                -- The OR and the ORDER BY keep it a probe of the open-by-record index per row, whatever the estimates.
                AND (d.record_key IS NULL OR NOT EXISTS (
                  SELECT 1 FROM webhook_deliveries e
                  WHERE e.organization_id = d.organization_id AND e.webhook_id = d.webhook_id
                    AND e.record_key = d.record_key AND e.status IN ('pending', 'in_flight')
                    AND (e.event_seq, e.id) < (d.event_seq, d.id)
                  ORDER BY e.event_seq, e.id LIMIT 1))
              ORDER BY d.created_at, d.id
              LIMIT ${count(perWebhookLimit)}
            ) c
            WHERE c.slot <= ${count(perWebhookLimit)} - f.n
          ), picked AS (
            -- Oldest first across webhooks; each row locked by primary key as it is taken, up to the limit.
            -- The status is checked on the locked row outside the lock's query, which then is a primary-key lookup
            -- (its LIMIT keeps the planner from pushing the check down into a scan of the pending index).
            SELECT d.organization_id, d.id
            FROM (SELECT * FROM candidates ORDER BY created_at, id) c
            CROSS JOIN LATERAL (
              SELECT d.organization_id, d.id, d.status FROM webhook_deliveries d
              WHERE d.organization_id = c.organization_id AND d.id = c.id
              LIMIT 1
              FOR UPDATE SKIP LOCKED
            ) d
            WHERE d.status = 'pending'
            ORDER BY c.created_at, c.id
            LIMIT ${count(limit)}
          ), claimed AS (
            -- Joined with its webhook only after the update, so the update itself is a primary-key lookup per row.
            UPDATE webhook_deliveries d
            SET status = 'in_flight', claimed_by = ${dispatcherId}, attempted_at = ${at}
            FROM picked p
            WHERE d.organization_id = p.organization_id AND d.id = p.id
            RETURNING d.*
          )
          SELECT c.organization_id AS "organizationId", c.id, c.webhook_id AS "webhookId", c.event_id AS "eventId",
            c.event, c.idempotency_key AS "idempotencyKey", c.status, c.payload, c.response_status AS "responseStatus",
            c.error, c.duration_ms AS "durationMs", c.created_at AS "createdAt", c.attempted_at AS "attemptedAt",
            c.claimed_by AS "claimedBy", c.redelivery_of AS "redeliveryOf", c.record_key AS "recordKey", w.url,
            w.hmac_secret AS "hmacSecret", w.previous_hmac_secret AS "previousHmacSecret",
            w.previous_secret_expires_at AS "previousSecretExpiresAt"
          FROM claimed c JOIN webhooks w ON w.organization_id = c.organization_id AND w.id = c.webhook_id`.pipe(
        Effect.map((rows) =>
          rows
            .map((r): ClaimedDelivery => ({
              delivery: toDeliveryRecord(r),
              url: r.url,
              hmacSecret: r.hmacSecret,
              previousSecret: previousSecretOf({
                previousHmacSecret: r.previousHmacSecret,
                previousSecretExpiresAt: r.previousSecretExpiresAt === null ? null : toTimestamp(r.previousSecretExpiresAt)
              })
            }))
            .sort((a, b) => oldestFirst(a.delivery, b.delivery))
        ),
        orDie
      ),
    completeDelivery: (dispatcherId, organizationId, id, outcome) =>
      sql<{ id: string }>`UPDATE webhook_deliveries
          SET status = ${outcome.status}, response_status = ${outcome.responseStatus}, error = ${storableError(outcome.error)},
              duration_ms = ${outcome.durationMs}
          WHERE organization_id = ${organizationId} AND id = ${id} AND status = 'in_flight'
            AND claimed_by = ${dispatcherId}
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), orDie),
    // One statement for the batch; the rows travel as one JSON parameter (NUL in `error` becomes U+FFFD).
    completeDeliveries: (dispatcherId, completed) =>
      completed.length === 0
        ? Effect.succeed([])
        : sql<{ id: string }>`UPDATE webhook_deliveries d
            SET status = v.status, response_status = v.response_status, error = v.error, duration_ms = v.duration_ms
            FROM json_to_recordset(${outcomesJson(completed)}::json) AS v(organization_id uuid, id uuid, status text, response_status integer, error text, duration_ms integer)
            WHERE d.organization_id = v.organization_id AND d.id = v.id AND d.status = 'in_flight'
              AND d.claimed_by = ${dispatcherId}
            RETURNING d.id`.pipe(Effect.map((rows) => rows.map((r) => r.id as WebhookDeliveryRecord["id"])), orDie),
    releaseDeliveries: (dispatcherId, released) =>
      released.length === 0
        ? Effect.succeed(0)
        : sql<{ id: string }>`UPDATE webhook_deliveries d
            SET status = 'pending', claimed_by = NULL, attempted_at = NULL
            FROM json_to_recordset(${
          JSON.stringify(released.map(({ id, organizationId }) => ({ organization_id: organizationId, id })))
        }::json) AS v(organization_id uuid, id uuid)
            WHERE d.organization_id = v.organization_id AND d.id = v.id AND d.status = 'in_flight'
              AND d.claimed_by = ${dispatcherId}
            RETURNING d.id`.pipe(Effect.map((rows) => rows.length), orDie),
    dispatcherAlive: (since) =>
      sql<{ alive: boolean }>`SELECT EXISTS (SELECT 1 FROM webhook_dispatchers WHERE heartbeat_at >= ${since}) AS alive`.pipe(
        Effect.map((rows) => rows[0]?.alive === true),
        orDie
      ),
    heartbeat: (dispatcherId, at) =>
      sql`INSERT INTO webhook_dispatchers (id, heartbeat_at) VALUES (${dispatcherId}, ${at})
          ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at`.pipe(Effect.asVoid, orDie),
    removeDispatcher: (dispatcherId) =>
      sql`DELETE FROM webhook_dispatchers WHERE id = ${dispatcherId}`.pipe(Effect.asVoid, orDie),
    failInterrupted: (staleBefore, error) =>
      sql<{ id: string }>`UPDATE webhook_deliveries d
          SET status = 'failed', error = ${error}, response_status = NULL, duration_ms = NULL
          WHERE d.status = 'in_flight' AND NOT EXISTS (
            SELECT 1 FROM webhook_dispatchers h WHERE h.id = d.claimed_by AND h.heartbeat_at >= ${staleBefore})
          RETURNING d.id`.pipe(Effect.map((rows) => rows.length), orDie)
  })
}))
