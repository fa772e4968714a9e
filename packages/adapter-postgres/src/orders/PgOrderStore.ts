/**
 * Orders over PostgreSQL: `orders` with its lines in `order_lines` (in line order by `position`). Reads return each
 * order with its lines aggregated in the same statement; inserts are set-based (`jsonb_to_recordset`, one parameter
 * per batch). A concurrent insert of the same `externalId` is reported as a clash (`ON CONFLICT DO NOTHING`).
 */
import { type Catalog, Kernel, Orders } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import {
  columnsFrom,
  compileFilter,
  compileListQuery,
  compileSearch,
  type ListSqlMapping
} from "../kernel/FilterSql.ts"
import { orDie } from "../kernel/SqlErrors.ts"
import { jsonValue, toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"

type Row = Record<string, any>

const notNull = (sql: string) => ({ sql, notNull: true }) as const

/** The list's fields (`OrderRules.orderFilterFields`) over `orders t` and its customer `c`. */
const orderMapping: ListSqlMapping = {
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

/** An order row with its lines, as every read selects it (`t` the order). */
const ORDER_SELECT =
  `t.id, t.external_id, t.order_number, t.site_id, t.customer_id, t.status, t.placed_at, t.fulfilled_at,
  t.delivered_at, t.cancelled_at, t.metadata, t.created_at, t.updated_at,
  (SELECT COALESCE(jsonb_agg(jsonb_build_object('productId', l.product_id, 'productVariantId', l.product_variant_id,
     'quantity', l.quantity) ORDER BY l.position), '[]'::jsonb)
   FROM order_lines l WHERE l.organization_id = t.organization_id AND l.order_id = t.id) AS lines`

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

      lockMatching: (organizationId, match) =>
        Effect.gen(function*() {
          const where = matchWhere(match, 1)
          const join = /\bc\./.test(where.text) ? CUSTOMER_JOIN : ""
          // Locked in id order, so two bulk updates over overlapping orders cannot deadlock.
          const rows = yield* sql.unsafe<Row>(
            `WITH matched AS (
             SELECT t.id FROM orders t ${join} WHERE t.organization_id = $1 AND ${where.text} ORDER BY t.id FOR UPDATE OF t
           )
           SELECT ${ORDER_SELECT} FROM orders t JOIN matched m ON t.id = m.id WHERE t.organization_id = $1 ORDER BY t.id`,
            [organizationId, ...where.params]
          )
          return rows.map(toOrder)
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
