/**
 * Surveys over PostgreSQL: one `surveys` row each, steps and products as jsonb, with the `next_due_at` the core
 * computes (`SurveyRules.nextDue`) and the claim of a step in flight. Claims take due rows with
 * `FOR UPDATE SKIP LOCKED` and commit before anything is sent, so workers of any number of processes never share one.
 */
import { Kernel, Surveys } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { columnsFrom, compileListQuery, type ListSqlMapping } from "../kernel/FilterSql.ts"
import { orderMapping } from "../orders/PgOrderStore.ts"
import { enrolmentSql } from "./EnrolmentSql.ts"
import { orDie } from "../kernel/SqlErrors.ts"
import { jsonValue, toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"

type Row = Record<string, any>

const notNull = (sql: string) => ({ sql, notNull: true }) as const

const surveyMapping: ListSqlMapping = {
  columns: columnsFrom({
    id: notNull("t.id"),
    status: "t.status",
    flowId: "t.flow_id",
    createdAt: notNull("t.created_at"),
    updatedAt: notNull("t.updated_at"),
    "order.id": "t.order_id",
    "customer.id": "t.customer_id",
    "customer.email": "c.email"
  }),
  id: "t.id",
  search: ["c.email"]
}

const CUSTOMER_JOIN = `LEFT JOIN customers c ON c.organization_id = t.organization_id AND c.id = t.customer_id`

const toSurvey = (r: Row): Surveys.Survey => ({
  id: r.id,
  flowId: r.flowId,
  orderId: r.orderId,
  customerId: r.customerId,
  status: r.status,
  reason: r.reason,
  products: jsonValue(r.products),
  steps: jsonValue(r.steps),
  url: r.url,
  expiresAt: toTimestamp(r.expiresAt),
  completedAt: toNullableTimestamp(r.completedAt),
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

const toStored = (r: Row): Surveys.StoredSurvey => ({
  survey: toSurvey(r),
  token: r.token,
  claim: r.claimedBy === null
    ? null
    : {
      workerId: r.claimedBy,
      claimedAt: toTimestamp(r.claimedAt),
      position: Number(r.claimedPosition),
      sendingAt: toNullableTimestamp(r.claimedSendingAt)
    }
})

const COLUMNS =
  `id, flow_id, order_id, customer_id, status, reason, products, steps, token, url, expires_at, completed_at,
  created_at, updated_at, next_due_at, next_position, claimed_by, claimed_at, claimed_position, claimed_sending_at`
const RECORDSET =
  `id uuid, flow_id uuid, order_id uuid, customer_id uuid, status text, reason text, products jsonb, steps jsonb,
  token text, url text, expires_at timestamptz, completed_at timestamptz, created_at timestamptz, updated_at timestamptz,
  next_due_at timestamptz, next_position integer, claimed_by text, claimed_at timestamptz, claimed_position integer,
  claimed_sending_at timestamptz`

const input = (stored: Surveys.StoredSurvey) => {
  const s = stored.survey
  const due = Surveys.nextDue(stored)
  return {
    id: s.id,
    flow_id: s.flowId,
    order_id: s.orderId,
    customer_id: s.customerId,
    status: s.status,
    reason: s.reason,
    products: s.products,
    steps: s.steps,
    token: stored.token,
    url: s.url,
    expires_at: s.expiresAt,
    completed_at: s.completedAt,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    next_due_at: due?.dueAt ?? null,
    next_position: due?.position ?? null,
    claimed_by: stored.claim?.workerId ?? null,
    claimed_at: stored.claim?.claimedAt ?? null,
    claimed_position: stored.claim?.position ?? null,
    claimed_sending_at: stored.claim?.sendingAt ?? null
  }
}

const ACTIVE = `(t.next_due_at IS NOT NULL OR t.claimed_by IS NOT NULL)`

export const PgSurveyRepository = Layer.effect(
  Surveys.SurveyRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const one = (text: string, params: ReadonlyArray<unknown>) =>
      sql.unsafe<Row>(text, params).pipe(Effect.map((rows) => Option.fromUndefinedOr(rows[0])), orDie)

    return Surveys.SurveyRepository.of({
      contactsOf: (organizationId, customerIds) =>
        customerIds.length === 0 ?
          Effect.succeed(new Map()) :
          sql.unsafe<{ id: string; email: string; emailOptOut: boolean }>(
            `SELECT id, email, email_opt_out FROM customers WHERE organization_id = $1 AND id = ANY($2::uuid[])`,
            [organizationId, `{${customerIds.join(",")}}`]
          ).pipe(
            Effect.map((rows) => new Map(rows.map((r) => [r.id, { email: r.email, emailOptOut: r.emailOptOut }]))),
            orDie
          ),
      insertSurveys: (organizationId, surveys) =>
        Effect.gen(function*() {
          if (surveys.length === 0) return []
          const rows = yield* sql.unsafe<{ id: string }>(
            `INSERT INTO surveys (organization_id, ${COLUMNS})
           SELECT $1, ${COLUMNS} FROM jsonb_to_recordset($2::jsonb) AS x(${RECORDSET})
           ON CONFLICT DO NOTHING RETURNING id`,
            [organizationId, JSON.stringify(surveys.map(input))]
          )
          const inserted = new Set(rows.map((r) => r.id))
          return surveys.map((s) => inserted.has(s.survey.id))
        }).pipe(orDie),
      enrollOrders: (organizationId, orderIds, plans, linkBase) =>
        Effect.gen(function*() {
          if (orderIds.length === 0 || plans.length === 0) return 0
          // $1 the organization, $2 the orders; the enrolment's parameters from $3 on.
          const enrolment = enrolmentSql({
            orders: "enrol_orders",
            plans: plans.map((plan) => ({ plan })),
            linkBase,
            columns: orderMapping.columns,
            offset: 2
          })
          const [row] = yield* sql.unsafe<{ created: number }>(
            `WITH enrol_orders AS (
             SELECT t.* FROM unnest($2::uuid[]) AS m(id) JOIN orders t ON t.organization_id = $1 AND t.id = m.id
           ),
           ${enrolment.ctes}
           SELECT count(*)::integer AS created FROM enrolled`,
            [organizationId, `{${orderIds.join(",")}}`, ...enrolment.params]
          )
          return Number(row?.created ?? 0)
        }).pipe(orDie),
      findSurvey: (organizationId, id) =>
        Effect.map(
          one(`SELECT * FROM surveys WHERE organization_id = $1 AND id = $2`, [organizationId, id]),
          Option.map(toSurvey)
        ),
      lockSurvey: (organizationId, id) =>
        Effect.map(
          one(`SELECT * FROM surveys WHERE organization_id = $1 AND id = $2 FOR UPDATE`, [organizationId, id]),
          Option.map(toStored)
        ),
      // By the token alone (`surveys_by_token`); the page that asks names no organization.
      organizationOfToken: (token) =>
        sql.unsafe<{ readonly organization: string }>(
          `SELECT organization_id AS organization FROM surveys WHERE token = $1 LIMIT 1`,
          [token]
        ).pipe(
          Effect.map((rows) =>
            Option.map(Option.fromUndefinedOr(rows[0]), (r) => r.organization as Kernel.OrganizationId)
          ),
          orDie
        ),
      lockSurveyByToken: (organizationId, token) =>
        Effect.map(
          one(`SELECT * FROM surveys WHERE organization_id = $1 AND token = $2 FOR UPDATE`, [organizationId, token]),
          Option.map(toStored)
        ),
      lockActiveOfOrders: (organizationId, orderIds) =>
        sql.unsafe<Row>(
          `SELECT * FROM surveys t WHERE t.organization_id = $1 AND t.order_id = ANY($2::uuid[]) AND ${ACTIVE}
         ORDER BY t.id FOR UPDATE`,
          [organizationId, `{${orderIds.join(",")}}`]
        ).pipe(Effect.map((rows) => rows.map(toStored)), orDie),
      lockActiveOfFlow: (organizationId, flowId) =>
        sql.unsafe<Row>(
          `SELECT * FROM surveys t WHERE t.organization_id = $1 AND t.flow_id = $2 AND ${ACTIVE} ORDER BY t.id FOR UPDATE`,
          [organizationId, flowId]
        ).pipe(Effect.map((rows) => rows.map(toStored)), orDie),
      saveSurveys: (organizationId, surveys) =>
        surveys.length === 0 ? Effect.void : sql.unsafe(
          `UPDATE surveys t SET status = x.status, reason = x.reason, products = x.products, steps = x.steps,
           completed_at = x.completed_at, updated_at = x.updated_at, next_due_at = x.next_due_at,
           next_position = x.next_position, claimed_by = x.claimed_by, claimed_at = x.claimed_at,
           claimed_position = x.claimed_position, claimed_sending_at = x.claimed_sending_at
         FROM jsonb_to_recordset($2::jsonb) AS x(${RECORDSET})
         WHERE t.organization_id = $1 AND t.id = x.id`,
          [organizationId, JSON.stringify(surveys.map(input))]
        ).pipe(Effect.asVoid, orDie),
      deleteSurvey: (organizationId, id) =>
        Effect.map(
          one(`DELETE FROM surveys WHERE organization_id = $1 AND id = $2 RETURNING *`, [organizationId, id]),
          Option.map(toSurvey)
        ),
      listSurveys: (organizationId, request) =>
        Effect.gen(function*() {
          const q = compileListQuery(request, surveyMapping, 1)
          const join = /\bc\./.test(q.where) ? CUSTOMER_JOIN : ""
          const rows = yield* sql.unsafe<Row>(
            `SELECT t.* FROM surveys t ${join} WHERE t.organization_id = $1 AND ${q.where}
           ORDER BY ${q.orderBy} LIMIT ${request.limit + 1}`,
            [organizationId, ...q.params]
          )
          return Kernel.toPage(rows.map(toSurvey), request, (survey) => ({
            value: Kernel.normalizeValue(
              request.sort.type,
              (survey as unknown as Record<string, unknown>)[request.sort.field]
            ),
            id: survey.id
          })) as Kernel.Page<Surveys.Survey>
        }).pipe(orDie),
      claimDue: (workerId, at, limit) =>
        // Organizations in turn (docs/DECISIONS.md §56): every organization's oldest due step, then every one's next,
        // so a backlog fills a claim only when no other organization has a step due. Each turn's row is locked by its
        // primary key, then checked (`OFFSET 0` keeps the checks out of the lock's scan: pushed into it, they made
        // it walk the organization's due index up to the row, as long as the backlog).
        sql.unsafe<Row & { readonly claimTurn: string }>(
          `WITH RECURSIVE orgs AS (
           (SELECT organization_id FROM surveys WHERE next_due_at IS NOT NULL AND claimed_by IS NULL
            ORDER BY organization_id LIMIT 1)
           UNION ALL
           SELECT n.organization_id FROM orgs o CROSS JOIN LATERAL (
             SELECT s.organization_id FROM surveys s
             WHERE s.next_due_at IS NOT NULL AND s.claimed_by IS NULL AND s.organization_id > o.organization_id
             ORDER BY s.organization_id LIMIT 1) n
         ), turns AS (
           SELECT c.organization_id, c.id, c.next_due_at,
             row_number() OVER (PARTITION BY c.organization_id ORDER BY c.next_due_at, c.id) AS turn
           FROM orgs o CROSS JOIN LATERAL (
             SELECT s.organization_id, s.id, s.next_due_at FROM surveys s
             WHERE s.organization_id = o.organization_id AND s.next_due_at IS NOT NULL AND s.claimed_by IS NULL
               AND s.next_due_at <= $2::timestamptz
             ORDER BY s.next_due_at, s.id LIMIT $3) c
         ), due AS (
           SELECT d.organization_id, d.id, c.turn
           FROM (SELECT * FROM turns ORDER BY turn, next_due_at, id) c
           CROSS JOIN LATERAL (
             SELECT s.organization_id, s.id, s.claimed_by, s.next_due_at FROM surveys s
             WHERE s.organization_id = c.organization_id AND s.id = c.id
             OFFSET 0 FOR UPDATE SKIP LOCKED) d
           WHERE d.claimed_by IS NULL AND d.next_due_at <= $2::timestamptz
           ORDER BY c.turn, c.next_due_at, c.id LIMIT $3
         )
         UPDATE surveys t SET claimed_by = $1, claimed_at = $2::timestamptz, claimed_position = t.next_position,
           claimed_sending_at = NULL, next_due_at = NULL, next_position = NULL
         FROM due WHERE t.organization_id = due.organization_id AND t.id = due.id
         RETURNING t.*, due.turn AS claim_turn`,
          [workerId, at, limit]
        ).pipe(
          Effect.map((rows) =>
            [...rows].sort((a, b) => Number(a.claimTurn) - Number(b.claimTurn)).map((r): Surveys.ClaimedSurvey => ({
              organizationId: r.organizationId,
              ...toStored(r)
            }))
          ),
          orDie
        ),
      markSending: (workerId, at, surveys) =>
        surveys.length === 0 ? Effect.succeed(new Set<Kernel.SurveyId>()) : sql.unsafe<{ id: Kernel.SurveyId }>(
          `UPDATE surveys t SET claimed_sending_at = $2::timestamptz
           FROM unnest($3::uuid[], $4::uuid[]) AS x(organization_id, id)
           WHERE t.organization_id = x.organization_id AND t.id = x.id AND t.claimed_by = $1 RETURNING t.id`,
          [
            workerId,
            at,
            `{${surveys.map((s) => s.organizationId).join(",")}}`,
            `{${surveys.map((s) => s.id).join(",")}}`
          ]
        ).pipe(Effect.map((rows) => new Set(rows.map((r) => r.id))), orDie),
      nextDueAt: sql.unsafe<{ nextDueAt: Date | null }>(
        `SELECT min(next_due_at) AS next_due_at FROM surveys WHERE next_due_at IS NOT NULL AND claimed_by IS NULL`
      ).pipe(Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]?.nextDueAt), toTimestamp)), orDie),
      staleClaims: (claimedBefore) =>
        sql.unsafe<Row>(
          `SELECT organization_id, id FROM surveys
         WHERE claimed_by IS NOT NULL AND claimed_at < $1::timestamptz AND coalesce(claimed_sending_at, claimed_at) < $1::timestamptz`,
          [claimedBefore]
        ).pipe(Effect.map((rows) => rows.map((r) => ({ organizationId: r.organizationId, id: r.id }))), orDie)
    })
  })
)
