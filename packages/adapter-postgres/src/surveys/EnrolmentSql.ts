/**
 * Enrolment as SQL (docs/DECISIONS.md §73, §75): the common-table expressions that enroll a relation of orders in
 * the plans' flows, for a statement to append to its own. `SurveyRepository.enrollOrders` gives them the orders it
 * is given; the bulk move gives them the orders it has just moved, as its `UPDATE … RETURNING` answers them (a
 * statement does not see its own changes through the table, so the conditions must read the returned rows).
 *
 * The SQL restates `SurveyRules.contactKind`, `OrderRules.distinctProducts` and the flow's condition (compiled by
 * `FilterSql`, as lists are); the surveys conformance suite holds a bulk-enrolled survey equal to one a PATCH enrolls.
 */
import { type Orders, Surveys } from "@feedback/core"
import { randomBytes } from "node:crypto"
import { numberArrayLiteral, textArrayLiteral } from "../kernel/ArrayLiterals.ts"
import { eventIdOfRowSql, eventIdSeed } from "../kernel/EventIds.ts"
import { type ColumnResolver, compileFilter } from "../kernel/FilterSql.ts"

/** `SurveyRules.contactKind` of the order's customer `c` (left-joined, null when there is none). */
const CONTACT_KIND = `CASE WHEN c.id IS NULL OR c.email ~ '^\\s*$' THEN 'noAddress' WHEN c.email_opt_out THEN 'optedOut'
  ELSE 'reachable' END`

/**
 * `OrderRules.distinctProducts` as a survey's products, for each order of `orders` (a relation with the orders' `id`):
 * each product once, in line order, in one pass over their lines (not a subquery per order). `$1` the organization.
 */
const distinctProducts = (orders: string) =>
  `SELECT d.order_id, jsonb_agg(jsonb_build_object('productId', d.product_id, 'productVariantId', d.product_variant_id,
     'reviewId', NULL) ORDER BY d.position) AS products
   FROM (SELECT DISTINCT ON (l.order_id, l.product_id) l.order_id, l.product_id, l.product_variant_id, l.position
     FROM ${orders} o JOIN order_lines l ON l.organization_id = $1 AND l.order_id = o.id
     ORDER BY l.order_id, l.product_id, l.position) d
   GROUP BY d.order_id`

/**
 * The n-th survey's token: 256 bits as `Survey.generateSurveyToken` writes them (base64url, 43 characters), the
 * SHA-256 of the statement's random seed (32 bytes from Node) and n. One seed serves any number of surveys, so the
 * statement need not know beforehand how many it enrolls; without the seed no token can be derived from another.
 */
const tokenSql = (seed: string, n: string) =>
  `translate(rtrim(encode(sha256(decode(${seed}::text, 'hex') || int8send(${n})), 'base64'), '='), '+/', '-_')`

export interface EnrolmentSql {
  /** `enrol_products AS (…), enrol_candidates AS (…), enrolled AS (INSERT … RETURNING 1)`. */
  readonly ctes: string
  readonly params: ReadonlyArray<unknown>
}

/**
 * Enrolment of the orders of `orders` (a relation with `orders`' columns, as `t` in `columns`; with `from` on a plan,
 * also `was`, the status each moved from) in the plans (the same `at` each): a plan with `from` enrolls only the
 * orders moved from one of those statuses. `$1` is the organization; the enrolment's parameters are numbered from
 * `offset + 1` on. Nothing is enrolled where the order already has a survey of that flow.
 */
export const enrolmentSql = (input: {
  readonly orders: string
  readonly plans: ReadonlyArray<{
    readonly plan: Surveys.EnrolmentPlan
    readonly from?: ReadonlyArray<Orders.OrderStatus> | undefined
  }>
  readonly linkBase: string
  readonly columns: ColumnResolver
  readonly offset: number
}): EnrolmentSql => {
  const { plans } = input
  const p = (i: number) => `$${input.offset + i}`
  // p(1) the layouts, p(2) the links' prefix, p(3) the moment, p(4) the expiry, p(5) and p(6) the seed of the ids,
  // p(7) the seed of the tokens, then (with `from`) p(8) and p(9) the plans' statuses; then each plan's condition.
  const byStatus = plans.some((x) => x.from !== undefined)
  let next = input.offset + (byStatus ? 9 : 7)
  const conditions = plans.map(({ plan }) => {
    const f = compileFilter(plan.condition, input.columns, next)
    next += f.params.length
    return f
  })
  const layouts = plans.flatMap(({ plan }, i) =>
    (Object.keys(plan.layouts) as Array<Surveys.ContactKind>).map((kind) => {
      const layout = plan.layouts[kind]
      return {
        plan: i,
        kind,
        flow_id: plan.flow.id,
        status: layout.status,
        reason: layout.reason,
        steps: layout.steps,
        next_due_at: layout.nextDue?.dueAt ?? null,
        next_position: layout.nextDue?.position ?? null
      }
    })
  )
  const statuses = plans.flatMap(({ from }, i) => (from ?? []).map((status) => [i, status] as const))
  const planRows = byStatus
    ? `JOIN unnest(${p(8)}::integer[], ${p(9)}::text[]) AS p(plan, from_status) ON p.from_status = t.was`
    : `CROSS JOIN generate_series(0, ${plans.length - 1}) AS p(plan)`
  // The token's subquery keeps `OFFSET 0`, so the planner does not inline it and hash each row twice (token, URL).
  const ctes = `enrol_products AS (${distinctProducts(input.orders)}),
    enrol_candidates AS (
      SELECT t.id AS order_id, t.customer_id, p.plan, ${CONTACT_KIND} AS kind,
        COALESCE(pr.products, '[]'::jsonb) AS products, row_number() OVER () AS n
      FROM ${input.orders} t
      ${planRows}
      LEFT JOIN customers c ON c.organization_id = t.organization_id AND c.id = t.customer_id
      LEFT JOIN enrol_products pr ON pr.order_id = t.id
      WHERE CASE p.plan ${conditions.map((c, i) => `WHEN ${i} THEN (${c.text})`).join(" ")} END
    ),
    enrolled AS (
      INSERT INTO surveys (organization_id, id, flow_id, order_id, customer_id, status, reason, products, steps,
        token, url, expires_at, completed_at, created_at, updated_at, next_due_at, next_position)
      SELECT $1, ${eventIdOfRowSql(p(5), p(6), "e.n")}, l.flow_id, e.order_id, e.customer_id, l.status, l.reason,
        e.products, l.steps, e.token, ${p(2)}::text || e.token, ${p(4)}::timestamptz, NULL, ${p(3)}::timestamptz,
        ${p(3)}::timestamptz, l.next_due_at, l.next_position
      FROM (SELECT c.*, ${tokenSql(p(7), "c.n")} AS token FROM enrol_candidates c OFFSET 0) e
      JOIN jsonb_to_recordset(${p(1)}::jsonb) AS l(plan integer, kind text, flow_id uuid, status text, reason text,
        steps jsonb, next_due_at timestamptz, next_position integer) ON l.plan = e.plan AND l.kind = e.kind
      ON CONFLICT DO NOTHING
      RETURNING 1
    )`
  const first = plans[0]?.plan
  return {
    ctes,
    params: [
      JSON.stringify(layouts),
      Surveys.surveyUrl(input.linkBase, ""),
      first?.at ?? null,
      first?.expiresAt ?? null,
      ...eventIdSeed(),
      randomBytes(32).toString("hex"),
      ...(byStatus
        ? [numberArrayLiteral(statuses.map(([i]) => i)), textArrayLiteral(statuses.map(([, status]) => status))]
        : []),
      ...conditions.flatMap((c) => c.params)
    ]
  }
}
