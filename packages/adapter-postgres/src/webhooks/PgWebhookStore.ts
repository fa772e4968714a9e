/**
 * Webhooks, deliveries and dispatcher leases over PostgreSQL (schema: `migrations/0010_webhooks.ts`).
 *
 * The two hand-offs that make delivery at most once across processes are single statements that lock with
 * `FOR UPDATE SKIP LOCKED`: taking outbox events for fan-out (inside the fan-out's transaction, so the mark and the
 * deliveries commit together) and claiming pending deliveries (one statement, committed before any POST).
 *
 * A delivery that is not finished also has a row in `webhook_delivery_queue` (migration 107, docs/DECISIONS.md §38):
 * claims read and write only that narrow table, and the outcome deletes it and writes the record once. The record's
 * `status` says `pending` until then; readers take `pending` or `in_flight` from the queue row (`openState`).
 */
import { type Kernel, Webhooks } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { numberArrayLiteral, textArrayLiteral } from "../kernel/ArrayLiterals.ts"
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

const toWebhookRecord = (r: WebhookRow): Webhooks.WebhookRecord => ({
  id: r.id as Webhooks.WebhookRecord["id"],
  organizationId: r.organizationId as Kernel.OrganizationId,
  url: r.url,
  events: r.events as Webhooks.WebhookRecord["events"],
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
  readonly status: Webhooks.WebhookDeliveryRecord["status"]
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

/** The columns of a delivery that every read of one has, its outcome aside. */
type DeliveryColumns = Pick<
  DeliveryRow,
  | "organizationId"
  | "id"
  | "webhookId"
  | "eventId"
  | "event"
  | "idempotencyKey"
  | "payload"
  | "createdAt"
  | "redeliveryOf"
  | "recordKey"
>

/**
 * A delivery record from the columns every read has, and its outcome fields as given: the stored ones for a read, a
 * claim's own (in flight, its claimer and time) for a claimed delivery, whose outcome columns the claim does not read.
 */
const deliveryRecord = (
  r: DeliveryColumns,
  status: Webhooks.WebhookDeliveryRecord["status"],
  responseStatus: number | null,
  error: string | null,
  durationMs: number | null,
  attemptedAt: Webhooks.WebhookDeliveryRecord["attemptedAt"],
  claimedBy: string | null
): Webhooks.WebhookDeliveryRecord => ({
  id: r.id as Webhooks.WebhookDeliveryRecord["id"],
  organizationId: r.organizationId as Kernel.OrganizationId,
  webhookId: r.webhookId as Webhooks.WebhookDeliveryRecord["webhookId"],
  eventId: r.eventId as Webhooks.WebhookDeliveryRecord["eventId"],
  event: r.event,
  idempotencyKey: r.idempotencyKey,
  status,
  body: r.payload,
  responseStatus,
  error,
  durationMs,
  createdAt: toTimestamp(r.createdAt),
  attemptedAt,
  claimedBy,
  redeliveryOf: r.redeliveryOf as Webhooks.WebhookDeliveryRecord["redeliveryOf"],
  recordKey: r.recordKey
})

const toDeliveryRecord = (r: DeliveryRow): Webhooks.WebhookDeliveryRecord =>
  deliveryRecord(
    r,
    r.status,
    r.responseStatus === null ? null : Number(r.responseStatus),
    r.error,
    r.durationMs === null ? null : Number(r.durationMs),
    toNullableTimestamp(r.attemptedAt),
    r.claimedBy
  )

/** A claimed delivery as the claim answers it (migration 109): no outcome fields, no claimer or time. */
type ClaimRow = DeliveryColumns & {
  readonly url: string
  readonly hmacSecret: string | null
  readonly previousHmacSecret: string | null
  readonly previousSecretExpiresAt: Date | null
}

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

/** The claimer of an open delivery inserted as in flight without one: never alive, so it fails as interrupted. */
const NO_DISPATCHER = "00000000-0000-0000-0000-000000000000"

/** Pending deliveries of an organization at which its fan-out waits (docs/DECISIONS.md §59). */
const QUEUE_CAP = Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION

/** Rows per INSERT statement (one JSON parameter of about half a megabyte at most). */
const INSERT_CHUNK = 1_000

/** PostgreSQL text cannot hold NUL, which a receiver's answer quoted in an outcome's `error` might: it becomes U+FFFD. */
const storableError = (error: string | null): string | null =>
  error === null ? null : error.replaceAll("\u0000", "\uFFFD")

/**
 * A fan-out's deliveries as two JSON parameters. An event's deliveries have the same body but for the idempotency
 * key (`envelopeBodies`), so each body travels as the part before the key and the part after it, once per event
 * (`parts`), and each row carries its key (its body is `prefix || payload || suffix`): the server parses an event's
 * data once, not once per subscribed webhook (docs/DECISIONS.md §38). A body without its key travels whole.
 */
const deliveryRows = (
  deliveries: ReadonlyArray<Webhooks.WebhookDeliveryRecord>
): { readonly parts: string; readonly rows: string } => {
  const parts: Array<{ p: number; prefix: string; suffix: string }> = []
  const byPrefix = new Map<string, Array<{ p: number; suffix: string }>>()
  const partOf = (prefix: string, suffix: string): number => {
    const known = byPrefix.get(prefix)
    const found = known?.find((k) => k.suffix === suffix)
    if (found !== undefined) return found.p
    const p = parts.length
    parts.push({ p, prefix, suffix })
    if (known === undefined) byPrefix.set(prefix, [{ p, suffix }])
    else known.push({ p, suffix })
    return p
  }
  const rows = deliveries.map((d) => {
    const key = JSON.stringify(d.idempotencyKey)
    const at = d.body.indexOf(key)
    return {
      organization_id: d.organizationId,
      id: d.id,
      webhook_id: d.webhookId,
      event_id: d.eventId,
      event: d.event,
      idempotency_key: d.idempotencyKey,
      status: d.status,
      p: at < 0 ? null : partOf(d.body.slice(0, at), d.body.slice(at + key.length)),
      payload: at < 0 ? d.body : key,
      response_status: d.responseStatus,
      error: storableError(d.error),
      duration_ms: d.durationMs,
      created_at: d.createdAt,
      attempted_at: d.attemptedAt,
      claimed_by: d.claimedBy,
      redelivery_of: d.redeliveryOf,
      record_key: d.recordKey
    }
  })
  return { parts: JSON.stringify(parts), rows: JSON.stringify(rows) }
}

/** A uuid in the form PostgreSQL prints it: then `key::uuid::text` gives back the same characters. */
const canonicalUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Whether a delivery is new and open (what a fan-out and a redelivery write): pending, never attempted, with a key
 * the server prints back byte for byte. Such rows travel in the narrow form (`freshDeliveryRows`).
 */
const isFresh = (d: Webhooks.WebhookDeliveryRecord): boolean =>
  d.status === "pending" && d.attemptedAt === null && d.claimedBy === null && d.responseStatus === null &&
  d.error === null && d.durationMs === null && canonicalUuid.test(d.idempotencyKey)

interface FreshGroup {
  readonly g: number
  readonly organization_id: string
  readonly event_id: string
  readonly event: string
  readonly record_key: string | null
  readonly redelivery_of: string | null
  readonly created_at: string
  readonly keyed: boolean
  readonly prefix: string
  readonly suffix: string
}

const sameGroup = (a: FreshGroup, b: Omit<FreshGroup, "g">): boolean =>
  a.organization_id === b.organization_id && a.event_id === b.event_id && a.event === b.event &&
  a.record_key === b.record_key && a.redelivery_of === b.redelivery_of && a.created_at === b.created_at &&
  a.keyed === b.keyed && a.prefix === b.prefix && a.suffix === b.suffix

/**
 * New pending deliveries in their narrow form (docs/DECISIONS.md §41): what a delivery shares with the others of its
 * event (keys, name, record, time, redelivery, and the body around the idempotency key) once per event, as a JSON
 * group; per delivery only its id, webhook, key and group, as array literals (uuids need no quoting). The server
 * parses four arrays instead of a 17-field JSON object a row, and reads the event's place in the outbox once per
 * event. A body without its key is its group's whole `prefix` (`keyed` false).
 */
const freshDeliveryRows = (deliveries: ReadonlyArray<Webhooks.WebhookDeliveryRecord>): {
  readonly groups: string
  readonly ids: string
  readonly webhookIds: string
  readonly keys: string
  readonly groupOf: string
} => {
  const groups: Array<FreshGroup> = []
  // A fan-out writes an event's deliveries one after another: the last group matches, else one of the event's.
  const byEvent = new Map<string, Array<FreshGroup>>()
  const ids: Array<string> = []
  const webhookIds: Array<string> = []
  const keys: Array<string> = []
  const groupOf: Array<number> = []
  for (const d of deliveries) {
    const quoted = `"${d.idempotencyKey}"`
    const at = d.body.indexOf(quoted)
    const shape = {
      organization_id: d.organizationId,
      event_id: d.eventId,
      event: d.event,
      record_key: d.recordKey,
      redelivery_of: d.redeliveryOf,
      created_at: d.createdAt,
      keyed: at >= 0,
      prefix: at < 0 ? d.body : d.body.slice(0, at),
      suffix: at < 0 ? "" : d.body.slice(at + quoted.length)
    }
    const last = groups[groups.length - 1]
    let group = last !== undefined && sameGroup(last, shape)
      ? last
      : byEvent.get(d.eventId)?.find((g) => sameGroup(g, shape))
    if (group === undefined) {
      group = { g: groups.length + 1, ...shape }
      groups.push(group)
      const known = byEvent.get(d.eventId)
      if (known === undefined) byEvent.set(d.eventId, [group])
      else known.push(group)
    }
    ids.push(d.id)
    webhookIds.push(d.webhookId)
    keys.push(d.idempotencyKey)
    groupOf.push(group.g)
  }
  const literal = (xs: ReadonlyArray<string | number>) => `{${xs.join(",")}}`
  return {
    groups: JSON.stringify(groups),
    ids: literal(ids),
    webhookIds: literal(webhookIds),
    keys: literal(keys),
    groupOf: literal(groupOf)
  }
}

/**
 * Outcomes as one array parameter per field (`feedback_record_outcomes`, migration 109, docs/DECISIONS.md §41):
 * the server binds them as they are, where a JSON document took a statement of its own to parse every turn.
 */
const outcomeArrays = (completed: ReadonlyArray<Webhooks.CompletedDelivery>) => {
  const orgs: Array<string> = []
  const ids: Array<string> = []
  const statuses: Array<string> = []
  const codes: Array<number | null> = []
  const errors: Array<string | null> = []
  const durations: Array<number | null> = []
  for (const { id, organizationId, outcome } of completed) {
    orgs.push(organizationId)
    ids.push(id)
    statuses.push(outcome.status)
    codes.push(outcome.responseStatus)
    errors.push(storableError(outcome.error))
    durations.push(outcome.durationMs)
  }
  return {
    orgs: `{${orgs.join(",")}}`,
    ids: `{${ids.join(",")}}`,
    statuses: textArrayLiteral(statuses),
    codes: numberArrayLiteral(codes),
    errors: textArrayLiteral(errors),
    durations: numberArrayLiteral(durations)
  }
}

export const PgWebhookRepository = Layer.effect(
  Webhooks.WebhookRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const raw = withoutTransforms(sql)
    /** A count as a whole, non-negative number. */
    const whole = (n: number) => Math.max(0, Math.floor(n))
    /** No limit per organization: the largest `integer`. */
    const NO_LIMIT = 2_147_483_647
    /**
     * The end of a statement whose CTE `changed` returns the deliveries it released or failed: answers their count as
     * `n`, and sends the `deliveries` wake-up once when there was any (the records' triggers are gone, migration 107).
     */
    const countedWakingDispatchers = (changed: "released" | "failed") =>
      sql.literal(
        `woken AS (SELECT pg_notify(feedback_work_channel(), 'deliveries') FROM (SELECT 1 FROM ${changed} LIMIT 1) c)
      SELECT (SELECT count(*) FROM ${changed})::int AS n, (SELECT count(*) FROM woken)::int AS woken`
      )

    const eventsArray = (events: ReadonlyArray<string>) => sql`string_to_array(${events.join(",")}, ',')`
    const olderThan = (after: Webhooks.WebhookListPosition | undefined, table: "" | "d." = "") =>
      after === undefined
        ? sql`TRUE`
        : sql`(${sql.literal(table)}created_at, ${
          sql.literal(table)
        }id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`
    /**
     * A delivery's state while it is open comes from its queue row: claimed is `in_flight` (with its claimer and time),
     * unclaimed is `pending`. Finished records have none, and skip the probe.
     */
    const openState = sql.literal(`LEFT JOIN LATERAL (
      SELECT q.claimed_by, q.attempted_at FROM webhook_delivery_queue q
      WHERE q.organization_id = d.organization_id AND q.id = d.id AND d.status IN ('pending', 'in_flight')
    ) q ON TRUE`)
    const deliveryColumns = sql.literal(`d.organization_id, d.id, d.webhook_id, d.event_id, d.event, d.idempotency_key,
      CASE WHEN d.status NOT IN ('pending', 'in_flight') THEN d.status
        WHEN q.claimed_by IS NOT NULL THEN 'in_flight' ELSE 'pending' END AS status,
      d.payload, d.response_status, d.error, d.duration_ms, d.created_at,
      CASE WHEN d.status IN ('pending', 'in_flight') THEN q.attempted_at ELSE d.attempted_at END AS attempted_at,
      CASE WHEN d.status IN ('pending', 'in_flight') THEN q.claimed_by ELSE d.claimed_by END AS claimed_by,
      d.redelivery_of, d.record_key`)

    /**
     * A delivery whose webhook was deleted meanwhile (a ping, a redelivery or a fan-out racing the delete) is not
     * stored: it happened before the delete, whose cascade would have removed it. The row lock waits for a deleting
     * transaction, so the foreign key never breaks.
     */
    const webhookExists = (organizationColumn: string) =>
      sql.literal(`EXISTS (SELECT 1 FROM webhooks w WHERE w.organization_id = ${organizationColumn}
      AND w.id = v.webhook_id FOR KEY SHARE)`)

    /** Any deliveries, each row whole (`deliveryRows`). */
    const insertAny = (chunk: ReadonlyArray<Webhooks.WebhookDeliveryRecord>) => {
      const { parts, rows } = deliveryRows(chunk)
      return sql`WITH parts AS (
              SELECT * FROM json_to_recordset(${parts}::json) AS part(p integer, prefix text, suffix text)
            ), inserted AS (
              INSERT INTO webhook_deliveries (organization_id, id, webhook_id, event_id, event, idempotency_key, status,
                payload, response_status, error, duration_ms, created_at, attempted_at, claimed_by, redelivery_of,
                record_key, event_seq)
              SELECT v.organization_id, v.id, v.webhook_id, v.event_id, v.event, v.idempotency_key, v.status,
                CASE WHEN v.p IS NULL THEN v.payload ELSE part.prefix || v.payload || part.suffix END,
                v.response_status, v.error, v.duration_ms, v.created_at, v.attempted_at, v.claimed_by, v.redelivery_of,
                v.record_key,
                CASE WHEN v.record_key IS NOT NULL THEN (
                  SELECT e.seq FROM domain_events e WHERE e.organization_id = v.organization_id AND e.id = v.event_id)
                END
              FROM json_to_recordset(${rows}::json) AS v(organization_id uuid, id uuid, webhook_id uuid, event_id uuid,
                event text, idempotency_key uuid, status text, p integer, payload text, response_status integer,
                error text, duration_ms integer, created_at timestamptz, attempted_at timestamptz, claimed_by uuid,
                redelivery_of uuid, record_key text)
              LEFT JOIN parts part ON part.p = v.p
              WHERE ${webhookExists("v.organization_id")}
              ON CONFLICT (organization_id, webhook_id, event_id) WHERE redelivery_of IS NULL DO NOTHING
              RETURNING organization_id, id, webhook_id, created_at, record_key, event_seq, status, claimed_by, attempted_at
            )
            INSERT INTO webhook_delivery_queue (organization_id, id, webhook_id, created_at, record_key, event_seq,
              claimed_by, attempted_at)
            SELECT organization_id, id, webhook_id, created_at, record_key, event_seq,
              CASE WHEN status = 'in_flight' THEN coalesce(claimed_by, ${NO_DISPATCHER}) END,
              CASE WHEN status = 'in_flight' THEN attempted_at END
            FROM inserted WHERE status IN ('pending', 'in_flight')`
    }
    /**
     * New pending deliveries in their narrow form (`freshDeliveryRows`, docs/DECISIONS.md §41): the rows `insertAny`
     * would write for them, with the event's place in the outbox read once per event.
     */
    const insertFresh = (chunk: ReadonlyArray<Webhooks.WebhookDeliveryRecord>) => {
      const { groupOf, groups, ids, keys, webhookIds } = freshDeliveryRows(chunk)
      return sql`WITH groups AS MATERIALIZED (
        SELECT g.*, CASE WHEN g.record_key IS NOT NULL THEN (
            SELECT e.seq FROM domain_events e WHERE e.organization_id = g.organization_id AND e.id = g.event_id)
          END AS event_seq
        FROM json_to_recordset(${groups}::json) AS g(g integer, organization_id uuid, event_id uuid, event text,
          record_key text, redelivery_of uuid, created_at timestamptz, keyed boolean, prefix text, suffix text)
      ), inserted AS (
        INSERT INTO webhook_deliveries (organization_id, id, webhook_id, event_id, event, idempotency_key, status,
          payload, created_at, redelivery_of, record_key, event_seq)
        SELECT g.organization_id, v.id, v.webhook_id, g.event_id, g.event, v.k, 'pending',
          CASE WHEN g.keyed THEN g.prefix || '"' || v.k::text || '"' || g.suffix ELSE g.prefix END,
          g.created_at, g.redelivery_of, g.record_key, g.event_seq
        FROM unnest(${ids}::uuid[], ${webhookIds}::uuid[], ${keys}::uuid[], ${groupOf}::int[]) AS v(id, webhook_id, k, g)
        JOIN groups g ON g.g = v.g
        WHERE ${webhookExists("g.organization_id")}
        ON CONFLICT (organization_id, webhook_id, event_id) WHERE redelivery_of IS NULL DO NOTHING
        RETURNING organization_id, id, webhook_id, created_at, record_key, event_seq
      )
      INSERT INTO webhook_delivery_queue (organization_id, id, webhook_id, created_at, record_key, event_seq)
      SELECT organization_id, id, webhook_id, created_at, record_key, event_seq FROM inserted`
    }

    /** Writes outcomes of deliveries the dispatcher holds; answers the ids recorded. */
    const recordOutcomes = (dispatcherId: string, completed: ReadonlyArray<Webhooks.CompletedDelivery>) => {
      const o = outcomeArrays(completed)
      return sql<{ id: string }>`SELECT r AS id FROM feedback_record_outcomes(${o.orgs}::uuid[], ${o.ids}::uuid[],
        ${o.statuses}::text[], ${o.codes}::integer[], ${o.errors}::text[], ${o.durations}::integer[],
        ${dispatcherId}::uuid) r`.pipe(
        Effect.map((rows) => rows.map((r) => r.id as Webhooks.WebhookDeliveryRecord["id"])),
        orDie
      )
    }

    return Webhooks.WebhookRepository.of({
      insert: (w) =>
        sql`INSERT INTO webhooks (organization_id, id, url, events, hmac_secret, previous_hmac_secret,
            previous_secret_expires_at, created_at, updated_at)
          VALUES (${w.organizationId}, ${w.id}, ${w.url}, ${eventsArray(w.events)}, ${w.hmacSecret},
                  ${w.previousHmacSecret}, ${w.previousSecretExpiresAt}, ${w.createdAt}, ${w.updatedAt})`.pipe(
          Effect.asVoid,
          orDie
        ),
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
        sql<DeliveryRow>`SELECT ${deliveryColumns} FROM webhook_deliveries d ${openState}
          WHERE d.organization_id = ${organizationId} AND d.webhook_id = ${webhookId} AND ${olderThan(page.after, "d.")}
          ORDER BY d.created_at DESC, d.id DESC LIMIT ${page.limit}`.pipe(
          Effect.map((rows) => rows.map(toDeliveryRecord)),
          orDie
        ),

      // Organizations in turn (`fairClaimOrder`'s order, docs/DECISIONS.md §68): the walk visits each organization
      // with events waiting (migration 156), passes over one with `MAX_QUEUED_DELIVERIES_PER_ORGANIZATION` pending
      // deliveries (its events wait in order, §59), numbers each other one's oldest events, and locks them turn by
      // turn, skipping rows another fan-out holds, until the unit is full: only the rows taken are locked.
      takeUndispatchedEvents: (limit) =>
        sql<EventRow>`WITH RECURSIVE orgs AS (
            (SELECT organization_id FROM domain_events WHERE fan_out_pending ORDER BY organization_id LIMIT 1)
            UNION ALL
            SELECT n.organization_id FROM orgs o CROSS JOIN LATERAL (
              SELECT e.organization_id FROM domain_events e
              WHERE e.fan_out_pending AND e.organization_id > o.organization_id
              ORDER BY e.organization_id LIMIT 1) n
          ), open AS MATERIALIZED (
            SELECT o.organization_id FROM orgs o
            WHERE (SELECT count(*) FROM (
              SELECT 1 FROM webhook_delivery_queue q
              WHERE q.organization_id = o.organization_id AND q.claimed_by IS NULL LIMIT ${QUEUE_CAP}) queued) < ${QUEUE_CAP}
          ), turns AS (
            SELECT c.organization_id, c.id, c.seq,
              row_number() OVER (PARTITION BY c.organization_id ORDER BY c.seq) AS turn
            FROM open o CROSS JOIN LATERAL (
              SELECT e.organization_id, e.id, e.seq FROM domain_events e
              WHERE e.organization_id = o.organization_id AND e.fan_out_pending
              ORDER BY e.seq LIMIT ${whole(limit)}) c
          ), taken AS (
            SELECT d.organization_id, d.id
            FROM (SELECT * FROM turns ORDER BY turn, seq) c
            CROSS JOIN LATERAL (
              SELECT e.organization_id, e.id, e.fan_out_pending FROM domain_events e
              WHERE e.organization_id = c.organization_id AND e.id = c.id
              FOR UPDATE SKIP LOCKED) d
            WHERE d.fan_out_pending
            ORDER BY c.turn, c.seq LIMIT ${whole(limit)}
          )
          UPDATE domain_events e SET fan_out_pending = false
          FROM taken WHERE e.organization_id = taken.organization_id AND e.id = taken.id
          RETURNING e.organization_id, e.id, e.seq, e.event, e.data, e.occurred_at`.pipe(
          Effect.map((rows) =>
            [...rows]
              .sort((a, b) => Number(a.seq) - Number(b.seq))
              .map((r): Kernel.DomainEvent => ({
                id: r.id as Kernel.DomainEvent["id"],
                organizationId: r.organizationId as Kernel.OrganizationId,
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
        sql<DeliveryRow>`SELECT ${deliveryColumns} FROM webhook_deliveries d ${openState}
          WHERE d.organization_id = ${organizationId} AND d.id = ${id} AND d.webhook_id = ${webhookId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toDeliveryRecord)),
          orDie
        ),
      // One statement per chunk, the rows as JSON parameters (`deliveryRows`), each open delivery with its queue row.
      // Ordered deliveries take their event's place in the outbox (`seq`) as they are inserted: fan-outs of several
      // processes may commit out of order, the events of one record cannot (docs/DECISIONS.md §17). (A separate
      // UPDATE of the new rows would write every row twice and re-run its foreign-key check, docs/DECISIONS.md §30;
      // new open deliveries take the narrow form instead, docs/DECISIONS.md §41.)
      insertDeliveries: (deliveries) => {
        const fresh = deliveries.filter(isFresh)
        const other = fresh.length === deliveries.length ? [] : deliveries.filter((d) => !isFresh(d))
        const chunks = (rows: ReadonlyArray<Webhooks.WebhookDeliveryRecord>) =>
          Array.from(
            { length: Math.ceil(rows.length / INSERT_CHUNK) },
            (_, i) => rows.slice(i * INSERT_CHUNK, (i + 1) * INSERT_CHUNK)
          )
        const writes = Effect.andThen(
          Effect.forEach(chunks(fresh), insertFresh, { discard: true }),
          Effect.forEach(chunks(other), insertAny, { discard: true })
        )
        // A fan-out writes fresh rows only; a batch of both kinds is still all or nothing.
        return (fresh.length > 0 && other.length > 0 ? sql.withTransaction(writes) : writes).pipe(orDie)
      },
      // The claim is a function (migration 107, organizations in turn since 141), for the planner settings its statement needs (docs/DECISIONS.md §38):
      // it records the outcomes that come with it (docs/DECISIONS.md §30), then reads and locks only the queue, and
      // reads the records of the claimed rows by primary key. Read without the client's renames (the columns are named
      // as the client would name them): the claim's rows are the dispatcher's hottest read (docs/DECISIONS.md §34).
      claimDeliveries: ({ at, completed = [], dispatcherId, limit, perOrganizationLimit, perWebhookLimit }) => {
        const o = outcomeArrays(completed)
        return raw<ClaimRow>`
          SELECT organization_id AS "organizationId", id, webhook_id AS "webhookId", event_id AS "eventId", event,
            idempotency_key AS "idempotencyKey", payload, created_at AS "createdAt", redelivery_of AS "redeliveryOf",
            record_key AS "recordKey", url, hmac_secret AS "hmacSecret", previous_hmac_secret AS "previousHmacSecret",
            previous_secret_expires_at AS "previousSecretExpiresAt"
          FROM feedback_claim_fairly(${o.orgs}::uuid[], ${o.ids}::uuid[], ${o.statuses}::text[],
            ${o.codes}::integer[], ${o.errors}::text[], ${o.durations}::integer[], ${dispatcherId}::uuid,
            ${at}::timestamptz, ${whole(limit)}::int, ${whole(perWebhookLimit)}::int,
            ${whole(perOrganizationLimit ?? NO_LIMIT)}::int)`.pipe(
          Effect.map((rows) =>
            Webhooks.fairClaimOrder(
              rows.map((r): Webhooks.ClaimedDelivery => ({
                // A claimed delivery is in flight for this claim: its claimer and time are the caller's own.
                delivery: deliveryRecord(r, "in_flight", null, null, null, at, dispatcherId),
                url: r.url,
                hmacSecret: r.hmacSecret,
                previousSecret: Webhooks.previousSecretOf({
                  previousHmacSecret: r.previousHmacSecret,
                  previousSecretExpiresAt: r.previousSecretExpiresAt === null
                    ? null
                    : toTimestamp(r.previousSecretExpiresAt)
                })
              })).sort((a, b) => oldestFirst(a.delivery, b.delivery)),
              (c) => c.delivery.organizationId
            )
          ),
          orDie
        )
      },
      completeDelivery: (dispatcherId, organizationId, id, outcome) =>
        recordOutcomes(dispatcherId, [{ organizationId, id, outcome }]).pipe(Effect.map((ids) => ids.length > 0)),
      // One statement for the batch (a function of migration 109); NUL in `error` becomes U+FFFD.
      completeDeliveries: (dispatcherId, completed) =>
        completed.length === 0 ? Effect.succeed([]) : recordOutcomes(dispatcherId, completed),
      // Pending again, unclaimed: only the queue row changes. The record's triggers do not see it, so the statement
      // sends the `deliveries` wake-up itself (docs/DECISIONS.md §23), once, when it released something.
      releaseDeliveries: (dispatcherId, released) =>
        released.length === 0
          ? Effect.succeed(0)
          : sql<{ n: number }>`WITH released AS (
              UPDATE webhook_delivery_queue q
              SET claimed_by = NULL, attempted_at = NULL
              FROM json_to_recordset(${
            JSON.stringify(released.map(({ id, organizationId }) => ({ organization_id: organizationId, id })))
          }::json) AS v(organization_id uuid, id uuid)
              WHERE q.organization_id = v.organization_id AND q.id = v.id AND q.claimed_by = ${dispatcherId}
              RETURNING q.id
            ), ${countedWakingDispatchers("released")}`.pipe(
            Effect.map((rows) => Number(rows[0]?.n ?? 0)),
            orDie
          ),
      dispatcherAlive: (since) =>
        sql<
          { alive: boolean }
        >`SELECT EXISTS (SELECT 1 FROM webhook_dispatchers WHERE heartbeat_at >= ${since}) AS alive`.pipe(
          Effect.map((rows) => rows[0]?.alive === true),
          orDie
        ),
      heartbeat: (dispatcherId, at) =>
        sql`INSERT INTO webhook_dispatchers (id, heartbeat_at) VALUES (${dispatcherId}, ${at})
          ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at`.pipe(Effect.asVoid, orDie),
      removeDispatcher: (dispatcherId) =>
        sql`DELETE FROM webhook_dispatchers WHERE id = ${dispatcherId}`.pipe(Effect.asVoid, orDie),
      // Sends the `deliveries` wake-up itself when it failed something (the records' triggers are gone, migration 107).
      failInterrupted: (staleBefore, error) =>
        sql<{ n: number }>`WITH stale AS (
            DELETE FROM webhook_delivery_queue q
            WHERE q.claimed_by IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM webhook_dispatchers h WHERE h.id = q.claimed_by AND h.heartbeat_at >= ${staleBefore})
            RETURNING q.organization_id, q.id, q.claimed_by, q.attempted_at
          ), failed AS (
            UPDATE webhook_deliveries d
            SET status = 'failed', error = ${error}, response_status = NULL, duration_ms = NULL,
              claimed_by = s.claimed_by, attempted_at = s.attempted_at
            FROM stale s
            WHERE d.organization_id = s.organization_id AND d.id = s.id
            RETURNING d.id
          ), ${countedWakingDispatchers("failed")}`.pipe(
          Effect.map((rows) => Number(rows[0]?.n ?? 0)),
          orDie
        )
    })
  })
)
