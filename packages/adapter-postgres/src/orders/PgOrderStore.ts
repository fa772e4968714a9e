/**
 * Orders over PostgreSQL: `orders` with its lines in `order_lines` (in line order by `position`). Reads return each
 * order with its lines aggregated in the same statement; inserts are set-based (`jsonb_to_recordset`, one parameter
 * per batch). A concurrent insert of the same `externalId` is reported as a clash (`ON CONFLICT DO NOTHING`).
 */
import { type Catalog, Kernel, Orders, type Surveys } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import {
  columnsFrom,
  compileFilter,
  compileListQuery,
  compileSearch,
  type ListSqlMapping
} from "../kernel/FilterSql.ts"
import { eventIdSeed, eventIdSql } from "../kernel/EventIds.ts"
import { orDie } from "../kernel/SqlErrors.ts"
import { jsonValue, toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"
import { enrolmentSql } from "../surveys/EnrolmentSql.ts"

type Row = Record<string, any>

const notNull = (sql: string) => ({ sql, notNull: true }) as const

/** The list's fields (`OrderRules.orderFilterFields`) over `orders t` and its customer `c`; survey flow conditions too. */
export const orderMapping: ListSqlMapping = {
  columns: columnsFrom({
    id: notNull("t.id"),
    externalId: "t.external_id",
    status: "t.status",
    placedAt: notNull("t.placed_at"),
    createdAt: notNull("t.created_at"),
    updatedAt: notNull("t.updated_at"),
    "customer.id": "t.customer_id",
    "customer.email": "c.email",
    metadata: "t.metadata"
  }),
  id: "t.id",
  search: ["t.order_number", "t.external_id", "c.email"]
}

/** An order's lines as the API writes them, in line order (`t` the order). */
const linesJson = (t: string) =>
  `(SELECT COALESCE(jsonb_agg(jsonb_build_object('productId', l.product_id, 'productVariantId', l.product_variant_id,
     'quantity', l.quantity) ORDER BY l.position), '[]'::jsonb)
   FROM order_lines l WHERE l.organization_id = ${t}.organization_id AND l.order_id = ${t}.id)`

/** A timestamptz as the API writes it: UTC, milliseconds, trailing Z (the canonical Timestamp). */
const tsJson = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** Each order's lines as the API writes them, for the orders of `orders` (a relation of order ids, `id`), in one pass. */
const linesOf = (orders: string) =>
  `SELECT l.order_id, jsonb_agg(jsonb_build_object('productId', l.product_id, 'productVariantId', l.product_variant_id,
     'quantity', l.quantity) ORDER BY l.position) AS lines
   FROM ${orders} o JOIN order_lines l ON l.organization_id = $1 AND l.order_id = o.id
   GROUP BY l.order_id`

/**
 * The order `a` in the API's shape, as jsonb: `FROM <rows> a ${orderJsonJoin("a", lines, at, atText)}` makes
 * `to_jsonb(order_json)` that order, as `findOrder` answers it (conformance-tested through the events), `lines` the
 * expression of its lines. The keys come in jsonb's own order (shorter first, then bytewise), so building each object
 * sorts nothing. A time equal to `at` (a timestamptz parameter) is written as `atText` (the same instant's canonical
 * text): a bulk move's stamps and `updatedAt` take no `to_char`.
 */
const orderJsonJoin = (a: string, lines: string, at: string, atText: string) => {
  const ts = (column: string) =>
    `CASE WHEN ${a}.${column} = ${at}::timestamptz THEN ${atText}::text ELSE ${tsJson(`${a}.${column}`)} END`
  return `CROSS JOIN LATERAL (SELECT ${a}.id, ${lines} AS lines, ${a}.site_id AS "siteId", ${a}.status,
    ${a}.metadata, ${tsJson(`${a}.placed_at`)} AS "placedAt", ${tsJson(`${a}.created_at`)} AS "createdAt",
    ${ts("updated_at")} AS "updatedAt", ${a}.customer_id AS "customerId", ${a}.external_id AS "externalId",
    ${ts("cancelled_at")} AS "cancelledAt", ${ts("delivered_at")} AS "deliveredAt",
    ${ts("fulfilled_at")} AS "fulfilledAt", ${a}.order_number AS "orderNumber") AS order_json`
}

/** An order row with its lines, as every read selects it (`t` the order). */
const ORDER_SELECT =
  `t.id, t.external_id, t.order_number, t.site_id, t.customer_id, t.status, t.placed_at, t.fulfilled_at,
  t.delivered_at, t.cancelled_at, t.metadata, t.created_at, t.updated_at, ${linesJson("t")} AS lines`

const CUSTOMER_JOIN = `LEFT JOIN customers c ON c.organization_id = t.organization_id AND c.id = t.customer_id`

const toOrder = (r: Row): Orders.Order => ({
  id: r.id,
  externalId: r.externalId,
  orderNumber: r.orderNumber,
  siteId: r.siteId,
  customerId: r.customerId,
  status: r.status,
  lines: jsonValue(r.lines),
  placedAt: toTimestamp(r.placedAt),
  fulfilledAt: toNullableTimestamp(r.fulfilledAt),
  deliveredAt: toNullableTimestamp(r.deliveredAt),
  cancelledAt: toNullableTimestamp(r.cancelledAt),
  metadata: jsonValue(r.metadata),
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

const ORDER_RECORDSET = `id uuid, external_id text, order_number text, site_id uuid, customer_id uuid, status text,
  placed_at timestamptz, fulfilled_at timestamptz, delivered_at timestamptz, cancelled_at timestamptz, metadata jsonb,
  created_at timestamptz, updated_at timestamptz`
const ORDER_COLUMNS =
  `id, external_id, order_number, site_id, customer_id, status, placed_at, fulfilled_at, delivered_at,
  cancelled_at, metadata, created_at, updated_at`

const orderInput = (o: Orders.Order) => ({
  id: o.id,
  external_id: o.externalId,
  order_number: o.orderNumber,
  site_id: o.siteId,
  customer_id: o.customerId,
  status: o.status,
  placed_at: o.placedAt,
  fulfilled_at: o.fulfilledAt,
  delivered_at: o.deliveredAt,
  cancelled_at: o.cancelledAt,
  metadata: o.metadata,
  created_at: o.createdAt,
  updated_at: o.updatedAt
})

const linesInput = (orders: ReadonlyArray<Orders.Order>) =>
  orders.flatMap((o) =>
    o.lines.map((l, position) => ({
      order_id: o.id,
      position,
      product_id: l.productId,
      product_variant_id: l.productVariantId,
      quantity: l.quantity
    }))
  )

export const PgOrderRepository = Layer.effect(
  Orders.OrderRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const matchWhere = (match: Orders.OrderMatch, offset: number) => {
      const f = compileFilter(match.filter, orderMapping.columns, offset)
      const s = compileSearch(match.search, orderMapping.search, offset + f.params.length)
      return { text: `(${f.text}) AND (${s.text})`, params: [...f.params, ...s.params] }
    }

    const selectOne = (organizationId: string, id: string) =>
      sql.unsafe<Row>(`SELECT ${ORDER_SELECT} FROM orders t WHERE t.organization_id = $1 AND t.id = $2`, [
        organizationId,
        id
      ]).pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toOrder))
      )

    const jsonList = (values: ReadonlyArray<string>) => JSON.stringify(values)

    return Orders.OrderRepository.of({
      resolveReferences: (organizationId, refs) =>
        Effect.gen(function*() {
          const [row] = yield* sql.unsafe<Row>(
            `SELECT
             (SELECT COALESCE(jsonb_agg(p.id), '[]') FROM products p WHERE p.organization_id = $1
               AND p.id IN (SELECT x::uuid FROM jsonb_array_elements_text($2::jsonb) x)) AS product_ids,
             (SELECT COALESCE(jsonb_agg(jsonb_build_array(p.slug, p.id)), '[]') FROM products p WHERE p.organization_id = $1
               AND p.slug IN (SELECT jsonb_array_elements_text($3::jsonb))) AS product_slugs,
             (SELECT COALESCE(jsonb_agg(c.id), '[]') FROM customers c WHERE c.organization_id = $1
               AND c.id IN (SELECT x::uuid FROM jsonb_array_elements_text($4::jsonb) x)) AS customer_ids,
             (SELECT COALESCE(jsonb_agg(jsonb_build_array(c.email, c.id)), '[]') FROM customers c WHERE c.organization_id = $1
               AND c.email IN (SELECT jsonb_array_elements_text($5::jsonb))) AS customer_emails,
             (SELECT COALESCE(jsonb_agg(s.id), '[]') FROM sites s WHERE s.organization_id = $1
               AND s.id IN (SELECT x::uuid FROM jsonb_array_elements_text($6::jsonb) x)) AS site_ids,
             (SELECT COALESCE(jsonb_agg(o.external_id), '[]') FROM orders o WHERE o.organization_id = $1
               AND o.external_id IN (SELECT jsonb_array_elements_text($7::jsonb))) AS external_ids`,
            [
              organizationId,
              jsonList(refs.productIds),
              jsonList(refs.productSlugs),
              jsonList(refs.customerIds),
              jsonList(refs.customerEmails),
              jsonList(refs.siteIds),
              jsonList(refs.externalIds)
            ]
          )
          return {
            productIds: new Set(jsonValue<Array<string>>(row!.productIds)),
            productsBySlug: new Map(jsonValue<Array<[string, Kernel.ProductId]>>(row!.productSlugs)),
            customerIds: new Set(jsonValue<Array<string>>(row!.customerIds)),
            customersByEmail: new Map(jsonValue<Array<[string, Kernel.CustomerId]>>(row!.customerEmails)),
            siteIds: new Set(jsonValue<Array<string>>(row!.siteIds)),
            takenExternalIds: new Set(jsonValue<Array<string>>(row!.externalIds))
          }
        }).pipe(orDie),

      insertOrders: (organizationId, orders) =>
        Effect.gen(function*() {
          if (orders.length === 0) return [] as ReadonlyArray<Catalog.InsertOutcome>
          const inserted = yield* sql.unsafe<{ id: string }>(
            `INSERT INTO orders (organization_id, ${ORDER_COLUMNS})
           SELECT $1, ${ORDER_COLUMNS} FROM jsonb_to_recordset($2::jsonb) AS x(${ORDER_RECORDSET})
           ON CONFLICT DO NOTHING RETURNING id`,
            [organizationId, JSON.stringify(orders.map(orderInput))]
          )
          const ids = new Set(inserted.map((r) => r.id))
          const stored = orders.filter((o) => ids.has(o.id))
          if (stored.length > 0) {
            yield* sql.unsafe(
              `INSERT INTO order_lines (organization_id, order_id, position, product_id, product_variant_id, quantity)
             SELECT $1, order_id, position, product_id, product_variant_id, quantity
             FROM jsonb_to_recordset($2::jsonb) AS x(order_id uuid, position integer, product_id uuid,
               product_variant_id uuid, quantity integer)`,
              [organizationId, JSON.stringify(linesInput(stored))]
            )
          }
          return orders.map((o): Catalog.InsertOutcome =>
            ids.has(o.id) ? { _tag: "Inserted" } : { _tag: "Clash", field: "externalId" }
          )
        }).pipe(orDie),

      findOrder: (organizationId, id) => selectOne(organizationId, id).pipe(orDie),
      // One text whatever the number of ids (an array parameter), so the statement is prepared once.
      findOrders: (organizationId, ids) =>
        ids.length === 0 ? Effect.succeed([]) : sql.unsafe<Row>(
          `SELECT ${ORDER_SELECT} FROM orders t WHERE t.organization_id = $1 AND t.id = ANY($2::uuid[])`,
          [organizationId, `{${[...new Set(ids)].join(",")}}`]
        ).pipe(Effect.map((rows) => rows.map(toOrder)), orDie),

      lockOrder: (organizationId, id) =>
        sql.unsafe(`SELECT 1 FROM orders WHERE organization_id = $1 AND id = $2 FOR UPDATE`, [organizationId, id]).pipe(
          Effect.andThen(selectOne(organizationId, id)),
          orDie
        ),

      moveMatching: (organizationId, match, to, at, followUp) =>
        Effect.gen(function*() {
          // The moves to `to` as data (`OrderRules.statusMoves`): each status an order may move from, with its stamps.
          const moves = Orders.ORDER_STATUSES.flatMap((from) => {
            const stamps = Orders.statusMoves[from][to]
            return stamps === undefined ? [] : [{
              from_status: from,
              fulfilled: stamps.includes("fulfilledAt"),
              delivered: stamps.includes("deliveredAt"),
              cancelled: stamps.includes("cancelledAt")
            }]
          })
          if (moves.length === 0) return []
          // $1 the organization, $2 the status, $3 the moves, $4 the moment as timestamptz and $5 as the event data's
          // text, $6 and $7 the seed of the events' ids, $8 whether the ids are wanted; the match's parameters from
          // $9 on, then the enrolment's.
          const where = matchWhere(match, 8)
          const join = /\bc\./.test(where.text) ? CUSTOMER_JOIN : ""
          // The enrolment of the moved orders, in the same statement (docs/DECISIONS.md §75): each flow's plan once,
          // with the statuses whose moves trigger it.
          const plans = new Map<string, { plan: Surveys.EnrolmentPlan; from: Array<Orders.OrderStatus> }>()
          for (const { from, plans: triggered } of followUp.enrol) {
            for (const plan of triggered) {
              const entry = plans.get(plan.flow.id) ?? { plan, from: [] }
              entry.from.push(from)
              plans.set(plan.flow.id, entry)
            }
          }
          const enrolment = plans.size === 0 ? undefined : enrolmentSql({
            orders: "updated",
            plans: [...plans.values()],
            linkBase: followUp.linkBase,
            columns: orderMapping.columns,
            offset: 8 + where.params.length
          })
          // Locked in id order, so two bulk updates over overlapping orders cannot deadlock.
          const rows = yield* sql.unsafe<{ fromStatus: Orders.OrderStatus; count: number; ids: unknown }>(
            `WITH moves AS (
             SELECT * FROM jsonb_to_recordset($3::jsonb)
               AS x(from_status text, fulfilled boolean, delivered boolean, cancelled boolean)
           ),
           matched AS (
             SELECT t.id, t.status AS was FROM orders t ${join}
             WHERE t.organization_id = $1 AND t.status IN (SELECT from_status FROM moves) AND ${where.text}
             ORDER BY t.id FOR UPDATE OF t
           ),
           updated AS (
             UPDATE orders t SET status = $2::text,
               fulfilled_at = CASE WHEN x.fulfilled THEN $4::timestamptz ELSE t.fulfilled_at END,
               delivered_at = CASE WHEN x.delivered THEN $4::timestamptz ELSE t.delivered_at END,
               cancelled_at = CASE WHEN x.cancelled THEN $4::timestamptz ELSE t.cancelled_at END,
               updated_at = $4::timestamptz
             FROM matched m JOIN moves x ON x.from_status = m.was
             WHERE t.organization_id = $1 AND t.id = m.id
             RETURNING t.*, m.was
           ),
           lines AS (${linesOf("matched")}),
           announced AS (
             INSERT INTO domain_events (organization_id, id, event, data, occurred_at)
             SELECT u.organization_id, ${eventIdSql("$6", "$7")}, 'order.updated', to_jsonb(order_json), $4::timestamptz
             FROM updated u LEFT JOIN lines ON lines.order_id = u.id
             ${orderJsonJoin("u", "COALESCE(lines.lines, '[]'::jsonb)", "$4", "$5")}
           )${enrolment === undefined ? "" : `,\n           ${enrolment.ctes}`}
           SELECT was AS from_status, count(*)::integer AS count, json_agg(id) FILTER (WHERE $8::boolean) AS ids
           FROM updated GROUP BY was`,
            [
              organizationId,
              to,
              JSON.stringify(moves),
              at,
              at,
              ...eventIdSeed(),
              followUp.withIds,
              ...where.params,
              ...(enrolment?.params ?? [])
            ]
          )
          return Orders.ORDER_STATUSES.flatMap((from) => {
            const row = rows.find((r) => r.fromStatus === from)
            return row === undefined ? [] : [{
              from,
              count: Number(row.count),
              ids: row.ids === null ? [] : jsonValue<Array<Kernel.OrderId>>(row.ids)
            }]
          })
        }).pipe(orDie),

      updateOrders: (organizationId, orders) =>
        orders.length === 0 ? Effect.void : sql.unsafe(
          `UPDATE orders t SET status = x.status, fulfilled_at = x.fulfilled_at, delivered_at = x.delivered_at,
           cancelled_at = x.cancelled_at, metadata = x.metadata, updated_at = x.updated_at
         FROM jsonb_to_recordset($2::jsonb) AS x(${ORDER_RECORDSET})
         WHERE t.organization_id = $1 AND t.id = x.id`,
          [organizationId, JSON.stringify(orders.map(orderInput))]
        ).pipe(Effect.asVoid, orDie),

      deleteOrder: (organizationId, id) =>
        Effect.gen(function*() {
          const found = yield* selectOne(organizationId, id)
          if (Option.isNone(found)) return found
          yield* sql.unsafe(`DELETE FROM orders WHERE organization_id = $1 AND id = $2`, [organizationId, id])
          return found
        }).pipe(orDie),

      listOrders: (organizationId, request) =>
        Effect.gen(function*() {
          const q = compileListQuery(request, orderMapping, 1)
          const join = /\bc\./.test(q.where) ? CUSTOMER_JOIN : ""
          const rows = yield* sql.unsafe<Row>(
            `SELECT ${ORDER_SELECT} FROM orders t ${join} WHERE t.organization_id = $1 AND ${q.where}
           ORDER BY ${q.orderBy} LIMIT ${request.limit + 1}`,
            [organizationId, ...q.params]
          )
          return Kernel.toPage(rows.map(toOrder), request, (order) => ({
            value: Kernel.normalizeValue(
              request.sort.type,
              (order as unknown as Record<string, unknown>)[request.sort.field]
            ),
            id: order.id
          }))
        }).pipe(orDie)
    })
  })
)
