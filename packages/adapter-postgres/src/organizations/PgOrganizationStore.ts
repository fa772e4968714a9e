/** Organizations, secret keys, storefront records, unit of work and outbox over PostgreSQL. */
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { jsonValue, toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"
import type { SqlError } from "effect/sql/SqlError"
import { dieSql, orDie, sqlStateOf } from "../kernel/SqlErrors.ts"
import { textArrayLiteral } from "../kernel/ArrayLiterals.ts"

export const PgUnitOfWork = Layer.effect(
  Kernel.UnitOfWork,
  Effect.map(SqlClient.SqlClient, (sql) => {
    // A failed commit or lost connection is not a business outcome: it surfaces as a defect (500) and nothing
    // was applied. A deferred check that fails at commit because of a value is a StoreRejection (400/409).
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", (error) => dieSql(error as SqlError)))
    // Transactions here exclude one another only where they touch the same rows: a long one is a transaction.
    return Kernel.UnitOfWork.of({ transaction, organizationTransaction: (_, effect) => transaction(effect) })
  })
)

interface OrganizationRow {
  readonly organizationId: string
  readonly name: string
  readonly externalId: string | null
  readonly apiRequestsPerMinute: number
  readonly loyaltyEventsPerMinute: number | null
  readonly loyaltyStampsPerMinute: number | null
  readonly storefrontReadsPerMinute: number | null
  readonly storefrontSubmissionsPerHour: number | null
  readonly createdAt: Date
}
const toOrganization = (r: OrganizationRow): Organizations.Organization => ({
  id: r.organizationId as Organizations.Organization["id"],
  name: r.name,
  ...(r.externalId === null ? {} : { externalId: r.externalId }),
  plan: {
    apiRequestsPerMinute: Number(r.apiRequestsPerMinute),
    ...(r.loyaltyEventsPerMinute === null ? {} : { loyaltyEventsPerMinute: Number(r.loyaltyEventsPerMinute) }),
    ...(r.loyaltyStampsPerMinute === null ? {} : { loyaltyStampsPerMinute: Number(r.loyaltyStampsPerMinute) }),
    ...(r.storefrontReadsPerMinute === null ? {} : { storefrontReadsPerMinute: Number(r.storefrontReadsPerMinute) }),
    ...(r.storefrontSubmissionsPerHour === null
      ? {}
      : { storefrontSubmissionsPerHour: Number(r.storefrontSubmissionsPerHour) })
  },
  createdAt: toTimestamp(r.createdAt)
})

export const PgOrganizationRepository = Layer.effect(
  Organizations.OrganizationRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Organizations.OrganizationRepository.of({
      // A clash on `external_id` comes back as no row (ON CONFLICT on that constraint only): ExternalIdTaken.
      insert: (o) =>
        sql<{ readonly organizationId: string }>`INSERT INTO organizations (organization_id, name, external_id,
            api_requests_per_minute, loyalty_events_per_minute,
            loyalty_stamps_per_minute, storefront_reads_per_minute, storefront_submissions_per_hour, created_at)
          VALUES (${o.id}, ${o.name}, ${o.externalId ?? null}, ${o.plan.apiRequestsPerMinute},
            ${o.plan.loyaltyEventsPerMinute ?? null},
            ${o.plan.loyaltyStampsPerMinute ?? null}, ${o.plan.storefrontReadsPerMinute ?? null},
            ${o.plan.storefrontSubmissionsPerHour ?? null}, ${o.createdAt})
          ON CONFLICT ON CONSTRAINT organizations_external_id_key DO NOTHING
          RETURNING organization_id`.pipe(
          orDie,
          Effect.flatMap((rows) =>
            rows.length === 1
              ? Effect.void
              : Effect.fail(new Organizations.ExternalIdTaken({ externalId: o.externalId ?? "" }))
          )
        ),
      findById: (id) =>
        sql<OrganizationRow>`SELECT * FROM organizations WHERE organization_id = ${id}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toOrganization)),
          orDie
        ),
      findByExternalId: (externalId) =>
        sql<OrganizationRow>`SELECT * FROM organizations WHERE external_id = ${externalId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toOrganization)),
          orDie
        ),
      setExternalId: (id, externalId) =>
        Effect.gen(function*() {
          const rows = yield* sql<OrganizationRow>`UPDATE organizations SET external_id = ${externalId}
            WHERE organization_id = ${id} AND NOT EXISTS (
              SELECT 1 FROM organizations WHERE external_id = ${externalId} AND organization_id <> ${id})
            RETURNING *`
          if (rows[0] !== undefined) return Option.some(toOrganization(rows[0]))
          const exists = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM organizations
            WHERE organization_id = ${id}`
          return Number(exists[0]?.n ?? 0) === 0 ? Option.none<Organizations.Organization>() : yield* Effect.fail(
            new Organizations.ExternalIdTaken({ externalId: externalId ?? "" })
          )
        }).pipe(
          Effect.catchTag("SqlError", (error) =>
            // Two transactions taking the same id at once: the constraint decides, and the loser is refused.
            sqlStateOf(error as SqlError) === "23505"
              ? Effect.fail(new Organizations.ExternalIdTaken({ externalId: externalId ?? "" }))
              : dieSql(error))
        ),
      setPlan: (id, plan) =>
        sql<OrganizationRow>`UPDATE organizations SET api_requests_per_minute = ${plan.apiRequestsPerMinute},
            loyalty_events_per_minute = ${plan.loyaltyEventsPerMinute ?? null},
            loyalty_stamps_per_minute = ${plan.loyaltyStampsPerMinute ?? null},
            storefront_reads_per_minute = ${plan.storefrontReadsPerMinute ?? null},
            storefront_submissions_per_hour = ${plan.storefrontSubmissionsPerHour ?? null}
          WHERE organization_id = ${id} RETURNING *`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toOrganization)),
          orDie
        ),
      isEmpty: sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM organizations) AS any`.pipe(
        Effect.map((rows) => rows[0]?.any !== true),
        orDie
      )
    })
  })
)

interface SecretKeyRow {
  readonly organizationId: string
  readonly id: string
  readonly name: string
  readonly permissions: ReadonlyArray<string>
  readonly keyHash: string
  readonly createdAt: Date
  readonly revokedAt: Date | null
}
const toSecretKey = (r: SecretKeyRow): Organizations.SecretKeyRecord => ({
  id: r.id as Organizations.SecretKeyRecord["id"],
  organizationId: r.organizationId as Organizations.SecretKeyRecord["organizationId"],
  name: r.name,
  permissions: r.permissions as ReadonlyArray<Kernel.Permission>,
  keyHash: r.keyHash,
  createdAt: toTimestamp(r.createdAt),
  revokedAt: toNullableTimestamp(r.revokedAt)
})

export const PgSecretKeyRepository = Layer.effect(
  Organizations.SecretKeyRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Organizations.SecretKeyRepository.of({
      // ON CONFLICT rather than catching the unique violation: a failed statement would abort the caller's transaction.
      insert: (k) =>
        sql<
          { id: string }
        >`INSERT INTO secret_keys (organization_id, id, name, permissions, key_hash, created_at, revoked_at)
          VALUES (${k.organizationId}, ${k.id}, ${k.name}, string_to_array(${
          k.permissions.join(",")
        }, ','), ${k.keyHash},
                  ${k.createdAt}, ${k.revokedAt})
          ON CONFLICT (key_hash) DO NOTHING RETURNING id`.pipe(
          orDie,
          Effect.flatMap((rows) =>
            rows.length === 1 ? Effect.void : Effect.fail(new Organizations.SecretKeyHashTaken())
          )
        ),
      findByHash: (keyHash) =>
        sql<SecretKeyRow>`SELECT * FROM secret_keys WHERE key_hash = ${keyHash}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toSecretKey)),
          orDie
        ),
      listForOrganization: (organizationId) =>
        sql<SecretKeyRow>`SELECT * FROM secret_keys WHERE organization_id = ${organizationId}
          ORDER BY created_at, id`.pipe(Effect.map((rows) => rows.map(toSecretKey)), orDie),
      revoke: (organizationId, id, at) =>
        sql<SecretKeyRow>`UPDATE secret_keys SET revoked_at = COALESCE(revoked_at, ${at})
          WHERE organization_id = ${organizationId} AND id = ${id} RETURNING *`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toSecretKey)),
          orDie
        )
    })
  })
)

interface PublishableKeyRow {
  readonly organizationId: string
  readonly id: string
  readonly key: string
  readonly signingSecret: string | null
  readonly createdAt: Date
  readonly revokedAt: Date | null
}

const toPublishableKey = (r: PublishableKeyRow): Organizations.Owned<Organizations.PublishableKeyRecord> => ({
  organizationId: r.organizationId as Kernel.OrganizationId,
  id: r.id as Kernel.PublishableKeyId,
  key: r.key,
  signingSecret: r.signingSecret,
  createdAt: toTimestamp(r.createdAt),
  revokedAt: r.revokedAt === null ? null : toTimestamp(r.revokedAt)
})

export const PgStorefrontRecordRepository = Layer.effect(
  Organizations.StorefrontRecordRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const remove = (table: string, organizationId: string, id: string) =>
      sql<{ id: string }>`DELETE FROM ${sql(table)} WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), orDie)
    return Organizations.StorefrontRecordRepository.of({
      insertPublishableKey: (k) =>
        sql`INSERT INTO publishable_keys (organization_id, id, key, signing_secret, created_at, revoked_at)
          VALUES (${k.organizationId}, ${k.id}, ${k.key}, ${k.signingSecret}, ${k.createdAt}, ${k.revokedAt})`.pipe(
          Effect.asVoid,
          orDie
        ),
      newestPublishableKey: (organizationId) =>
        sql<PublishableKeyRow>`SELECT * FROM publishable_keys
          WHERE organization_id = ${organizationId} AND revoked_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1`
          .pipe(
            Effect.map((rows) =>
              Option.map(
                Option.fromUndefinedOr(rows[0]),
                (r) => Organizations.toPublishableKeyView(toPublishableKey(r))
              )
            ),
            orDie
          ),
      listPublishableKeys: (organizationId) =>
        sql<PublishableKeyRow>`SELECT * FROM publishable_keys WHERE organization_id = ${organizationId}
          ORDER BY created_at DESC, id DESC`.pipe(
          Effect.map((rows) => rows.map((r) => Organizations.toPublishableKeyView(toPublishableKey(r)))),
          orDie
        ),
      revokePublishableKey: (organizationId, id, at) =>
        sql<PublishableKeyRow>`UPDATE publishable_keys SET revoked_at = COALESCE(revoked_at, ${at})
          WHERE organization_id = ${organizationId} AND id = ${id} RETURNING *`.pipe(
          Effect.map((rows) =>
            Option.map(Option.fromUndefinedOr(rows[0]), (r) => Organizations.toPublishableKeyView(toPublishableKey(r)))
          ),
          orDie
        ),
      findPublishableKey: (key) =>
        sql<PublishableKeyRow>`SELECT * FROM publishable_keys WHERE key = ${key}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toPublishableKey)),
          orDie
        ),
      deletePublishableKey: (organizationId, id) => remove("publishable_keys", organizationId, id),
      insertIntegration: (i) =>
        sql`INSERT INTO integrations (organization_id, id, platform, created_at)
          VALUES (${i.organizationId}, ${i.id}, ${i.platform}, ${i.createdAt})`.pipe(Effect.asVoid, orDie),
      deleteIntegration: (organizationId, id) => remove("integrations", organizationId, id),
      insertLoyaltyProgram: (p) =>
        sql`INSERT INTO loyalty_programs (organization_id, id, site_id, status, created_at)
          VALUES (${p.organizationId}, ${p.id}, ${p.siteId}, ${p.status}, ${p.createdAt})`.pipe(Effect.asVoid, orDie),
      deleteLoyaltyProgram: (organizationId, id) => remove("loyalty_programs", organizationId, id),
      insertWishlist: (w) =>
        sql`INSERT INTO wishlists (organization_id, id, customer_id, created_at)
          VALUES (${w.organizationId}, ${w.id}, ${w.customerId}, ${w.createdAt})`.pipe(Effect.asVoid, orDie),
      deleteWishlist: (organizationId, id) => remove("wishlists", organizationId, id)
    })
  })
)

interface DomainEventRow {
  readonly organizationId: string
  readonly id: string
  readonly event: string
  readonly data: unknown
  readonly occurredAt: Date
}

const toDomainEvent = (r: DomainEventRow): Kernel.DomainEvent => ({
  id: r.id as Kernel.DomainEvent["id"],
  organizationId: r.organizationId as Kernel.DomainEvent["organizationId"],
  event: r.event,
  data: jsonValue(r.data),
  occurredAt: toTimestamp(r.occurredAt)
})

export const PgEventOutbox = Layer.effect(
  Kernel.EventOutbox,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    /**
     * The feed of one organization, or of all (the in-process stream, over the index of migration 152): ordered by
     * (tx, seq), showing only transactions older than every one still running (`pg_snapshot_xmin`), so a position,
     * once handed out, is final (migration 84).
     */
    const feedOf = (organizationId: Kernel.OrganizationId | undefined, request: Kernel.FeedRequest) => {
      const [tx, seq] = (request.after ?? "0:0").split(":")
      // Ordered by the columns, not by the text the select list names `tx` (which put transaction 1000 before 996).
      return sql<
        DomainEventRow & { readonly tx: string; readonly seq: string }
      >`SELECT organization_id, id, event, data,
          occurred_at, tx::text AS tx, seq::text AS seq
        FROM domain_events
        WHERE ${organizationId === undefined ? sql`TRUE` : sql`organization_id = ${organizationId}`}
          AND tx < pg_snapshot_xmin(pg_current_snapshot())
          AND (tx, seq) > (${tx ?? "0"}::xid8, ${seq ?? "0"}::bigint)
          ${request.events === undefined ? sql`` : sql`AND event IN ${sql.in([...request.events])}`}
        ORDER BY domain_events.tx, domain_events.seq
        LIMIT ${request.limit}`.pipe(
        Effect.map((rows) => rows.map((r) => ({ position: `${r.tx}:${r.seq}`, event: toDomainEvent(r) }))),
        orDie
      )
    }
    return Kernel.EventOutbox.of({
      append: (e) =>
        sql`INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
          VALUES (${e.organizationId}, ${e.id}, ${e.event}, ${JSON.stringify(e.data)}::jsonb, ${e.occurredAt})`.pipe(
          Effect.asVoid,
          orDie
        ),
      // One statement for the whole batch; WITH ORDINALITY keeps the recording order in `seq`.
      appendAll: (events) =>
        events.length === 0 ?
          Effect.void :
          sql`INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
          SELECT e.organization_id, e.id, e.event, e.data, e.occurred_at
          FROM ROWS FROM (jsonb_to_recordset(${
            JSON.stringify(events.map((e) => ({
              organization_id: e.organizationId,
              id: e.id,
              event: e.event,
              data: e.data,
              occurred_at: e.occurredAt
            })))
          }::jsonb) AS (organization_id uuid, id uuid, event text, data jsonb, occurred_at timestamptz))
            WITH ORDINALITY AS e(organization_id, id, event, data, occurred_at, n)
          ORDER BY e.n`.pipe(Effect.asVoid, orDie),
      redact: (organizationId, redaction) =>
        Effect.gen(function*() {
          // Few rows (the events of one record): read, rewrite in the same code as every store, write back.
          const events = yield* sql<
            { readonly id: string; readonly event: string; readonly data: unknown }
          >`SELECT id, event, data
            FROM domain_events WHERE organization_id = ${organizationId} AND event LIKE ${redaction.resource + ".%"}
              AND data ->> 'id' = ${redaction.recordId}`
          for (const e of events) {
            const stored = jsonValue(e.data)
            const data = Kernel.redactData(stored, redaction.fields)
            if (data !== stored) {
              yield* sql`UPDATE domain_events SET data = ${JSON.stringify(data)}::jsonb
                WHERE organization_id = ${organizationId} AND id = ${e.id}`
            }
          }
          if (events.length === 0) return
          const deliveries = yield* sql<
            { readonly id: string; readonly payload: string }
          >`SELECT id, payload FROM webhook_deliveries
            WHERE organization_id = ${organizationId} AND event_id IN ${sql.in(events.map((e) => e.id))}`
          for (const d of deliveries) {
            const body = Kernel.redactDeliveryBody(d.payload, redaction.fields)
            if (body !== d.payload) {
              yield* sql`UPDATE webhook_deliveries SET payload = ${body} WHERE organization_id = ${organizationId} AND id = ${d.id}`
            }
          }
        }).pipe(orDie),
      // Positions are taken at commit, per organization (migration 144): the function reads under the
      // organization's feed lock, so no other organization's transaction, nor a long one of its own, holds it back.
      feed: (organizationId, request) => {
        const [position, seq] = (request.after ?? "0:0").split(":")
        return sql<
          DomainEventRow & { readonly position: string; readonly seq: string }
        >`SELECT organization_id, id, event, data, occurred_at, feed_position::text AS position, seq::text AS seq
          FROM feedback_event_feed(${organizationId}, ${position ?? "0"}::bigint, ${seq ?? "0"}::bigint,
            ${request.events === undefined ? null : textArrayLiteral(request.events)}::text[], ${request.limit})`
          .pipe(
            Effect.map((rows) => rows.map((r) => ({ position: `${r.position}:${r.seq}`, event: toDomainEvent(r) }))),
            orDie
          )
      },
      // Every organization's events in commit order of their transactions (the in-process stream, §65): read below
      // the oldest transaction still running, so nothing commits later into what a consumer has passed.
      feedAll: (request) => feedOf(undefined, request),
      // Then the feed positions of transactions whose events are all gone (a second statement: the first one's
      // snapshot still sees the events it deletes).
      purge: (before, limit) =>
        Effect.gen(function*() {
          const gone = yield* sql<{ readonly organizationId: string; readonly tx: string }>`WITH gone AS (
              DELETE FROM domain_events WHERE ctid IN (
                SELECT ctid FROM domain_events WHERE occurred_at < ${before} AND NOT fan_out_pending LIMIT ${limit})
              RETURNING organization_id, tx)
            SELECT organization_id, tx::text AS tx FROM gone`
          if (gone.length === 0) return 0
          const commits = [...new Map(gone.map((g) => [`${g.organizationId}/${g.tx}`, g])).values()]
          yield* sql`DELETE FROM event_commits c
            USING unnest(${textArrayLiteral(commits.map((g) => g.organizationId))}::uuid[],
              ${textArrayLiteral(commits.map((g) => g.tx))}::xid8[]) AS g(organization_id, tx)
            WHERE c.organization_id = g.organization_id AND c.tx = g.tx
              AND NOT EXISTS (SELECT 1 FROM domain_events e WHERE e.organization_id = g.organization_id AND e.tx = g.tx)`
          return gone.length
        }).pipe(orDie),
      listForOrganization: (organizationId) =>
        sql<DomainEventRow>`SELECT organization_id, id, event, data, occurred_at FROM domain_events
          WHERE organization_id = ${organizationId} ORDER BY seq`.pipe(
          Effect.map((rows) => rows.map(toDomainEvent)),
          orDie
        )
    })
  })
)
