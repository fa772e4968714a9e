/**
 * TEST AND BENCHMARK SUPPORT ONLY: a synthetic review data set generated inside PostgreSQL with
 * `generate_series`, set-based (one statement per table), so a million reviews take seconds rather than the
 * minutes that row-by-row inserts from the client would. The same generator serves small sizes in tests (query
 * plans) and large ones in `bench/reviews-list.ts`.
 *
 * Everything is deterministic for a given organization id and size: ids are `md5(org || kind || n)` shaped as v4 UUIDs,
 * so tests can compute what to expect. Review n (1-based):
 * - product `((n - 1) % products) + 1`, customer `((n - 1) % customers) + 1` except every 20th review (none);
 * - rating `1 + (n * 7) % 5`; published unless `n % 10 = 0`; moderated 1 hour after creation unless `n % 3 = 0`;
 * - created `startAt + n seconds` (so newer reviews have larger n), millisecond precision;
 * - title `Review n <word>` with word `great|poor|solid|amazing|broken` by `n % 5`;
 * - ip address one of 50,000 values, browser fingerprint one of 5,000 (collisions), metadata `{channel}`.
 * Product p: slug `product-p`, title `Product p`, created `startAt + p seconds`. Customer c: email
 * `customer-c@example.com`.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { SqlClient } from "effect/sql"
import { recalculateProductStats } from "./ProductStatsSql.ts"

export interface ReviewDatasetOptions {
  readonly organizationId: string
  readonly reviews: number
  readonly products: number
  /** Defaults to max(1, reviews / 10). */
  readonly customers?: number
  /** Defaults to 2025-01-01T00:00:00Z. */
  readonly startAt?: string
  /** Run ANALYZE afterwards (default true) so the planner sees the real sizes. */
  readonly analyze?: boolean
}

export const DEFAULT_DATASET_START = "2025-01-01T00:00:00.000Z"

/** md5(org || kind || n) with the version nibble set to 4 and the variant to 8, so it is a valid v4 UUID. */
const uuidSql = (input: string) =>
  `overlay(overlay(md5(${input}) placing '4' from 13 for 1) placing '8' from 17 for 1)::uuid`
const uuidOf = (kind: string, n: string) => uuidSql(`$1::uuid::text || '${kind}' || (${n})::text`)

/** The id the generator gives to product (`p`), customer (`c`) or review (`r`) number n of the organization. */
export const datasetId = (organizationId: string, kind: "p" | "c" | "r", n: number): string => {
  const h = createHash("md5").update(`${organizationId}${kind}${n}`).digest("hex")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20)}`
}

export const generateReviewDataset = (options: ReviewDatasetOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const customers = options.customers ?? Math.max(1, Math.floor(options.reviews / 10))
    const start = options.startAt ?? DEFAULT_DATASET_START
    const org = options.organizationId
    yield* sql.unsafe(
      `INSERT INTO products (organization_id, id, slug, title, metadata, created_at, updated_at)
       SELECT $1::uuid, ${uuidOf("p", "g")}, 'product-' || g, 'Product ' || g,
              jsonb_build_object('color', (ARRAY['red','green','blue'])[1 + g % 3]),
              $3::timestamptz + g * interval '1 second', $3::timestamptz + g * interval '1 second'
       FROM generate_series(1, $2::int) AS g`,
      [org, options.products, start]
    )
    yield* sql.unsafe(
      `INSERT INTO customers (organization_id, id, email, first_name, last_name, metadata, email_opt_out, created_at, updated_at)
       SELECT $1::uuid, ${uuidOf("c", "g")}, 'customer-' || g || '@example.com',
              (ARRAY['Ada','Grace','Alan','Edsger','Barbara'])[1 + g % 5], 'Tester' || (g % 100),
              jsonb_build_object('tier', (ARRAY['gold','silver'])[1 + g % 2]), g % 7 = 0,
              $3::timestamptz + g * interval '1 second', $3::timestamptz + g * interval '1 second'
       FROM generate_series(1, $2::int) AS g`,
      [org, customers, start]
    )
    yield* sql.unsafe(
      `INSERT INTO reviews (organization_id, id, product_id, customer_id, title, body, rating, published, flagged,
         moderated_at, ip_address, browser_fingerprint, metadata, created_at, updated_at)
       SELECT $1::uuid, ${uuidOf("r", "g")},
              ${uuidOf("p", "(g - 1) % $3::int + 1")},
              CASE WHEN g % 20 = 0 THEN NULL ELSE ${uuidOf("c", "(g - 1) % $4::int + 1")} END,
              'Review ' || g || ' ' || (ARRAY['great','poor','solid','amazing','broken'])[1 + g % 5],
              'Body of review ' || g,
              1 + (g * 7) % 5, g % 10 <> 0, g % 97 = 0,
              CASE WHEN g % 3 = 0 THEN NULL ELSE $5::timestamptz + g * interval '1 second' + interval '1 hour' END,
              '10.' || (g % 50000 / 250) || '.' || (g % 250) || '.1', 'fp-' || (g % 5000),
              jsonb_build_object('channel', (ARRAY['email','widget','import'])[1 + g % 3]),
              $5::timestamptz + g * interval '1 second', $5::timestamptz + g * interval '1 second'
       FROM generate_series(1, $2::int) AS g`,
      [org, options.reviews, options.products, customers, start]
    )
    yield* recalculateProductStats(sql, org, "all")
    if (options.analyze !== false) yield* sql.unsafe(`ANALYZE reviews, products, customers`)
    return { reviews: options.reviews, products: options.products, customers }
  })
