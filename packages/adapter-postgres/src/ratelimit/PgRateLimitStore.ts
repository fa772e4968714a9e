/**
 * PostgreSQL `RateLimitRepository`: exact across every process sharing the database, in one round trip per request.
 *
 * Each spend is one call of the `rate_limit_spend` function (created by a migration), a single statement in its own
 * READ COMMITTED transaction, so no lock is ever held across a network round trip:
 * 1. `INSERT … ON CONFLICT DO UPDATE … WHERE false` over the request's bucket rows, in key order. A missing row is
 *    created full (a new bucket is full); an existing one is only locked, not rewritten (PostgreSQL locks every
 *    conflicting row of `ON CONFLICT DO UPDATE` even when its `WHERE` is false). One statement locking in one
 *    global order makes the locking deadlock-free, and there is no window in which two processes both see a row
 *    missing.
 * 2. One statement reads the locked rows (the next statement of a volatile function takes a new snapshot, so it sees
 *    the latest committed levels, which are ours until commit), refills them to now, decides, and — only when every
 *    bucket can pay — writes the charged levels. It returns the levels it read and the decision.
 *
 * The arithmetic is `TokenBucket`'s, on the same integers (`TokenBucket.unitsOf`: units of 1/60,000,000 token, whole
 * milliseconds; `numeric` where a product could leave `bigint`). The store then runs `TokenBucket.spend` on the
 * levels the database read, which gives `Retry-After` and `Remaining`, and checks that it reaches the same decision:
 * a disagreement is a defect, never silently an admission. `PgRateLimitStore.test.ts` compares the two on random
 * states.
 *
 * The time is the application's `Clock`, not the database's. Clocks of different processes may disagree:
 * `TokenBucket` never credits time before a row's `updated_at_ms`, so a lagging clock adds nothing and skew can
 * never mint tokens; the bound holds relative to the fastest clock that touched the bucket.
 *
 * Run `spend` outside any request transaction: the row locks are held until the enclosing transaction ends. On a
 * database whose default isolation is stricter than READ COMMITTED, each call is wrapped in a READ COMMITTED
 * transaction (three more round trips), since under REPEATABLE READ a concurrent spend would be a serialization
 * failure. Transient failures (deadlock, serialization, lost connection) retry a few times; a database that stays
 * unavailable is a defect (500), never an admission.
 */
import { Clock, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { RateLimits, Storefront } from "@feedback/core"
import { withoutTransforms } from "../kernel/RawRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"
type BucketState = RateLimits.TokenBucket.BucketState

/**
 * The bucket table. The primary key starts with `organization_id` (every access is by organization). `tokens` holds
 * the level in tokens as a double; `TokenBucket` keeps it an exact multiple of 1/60,000,000 token, which float8
 * round-trips exactly. A low fillfactor keeps the constant re-writes of a row HOT updates. No foreign key to the
 * organizations table: a bucket row is disposable state (dropping one only refills that bucket).
 */
export const rateLimitTableStatements: ReadonlyArray<string> = [
  `CREATE TABLE IF NOT EXISTS rate_limit_buckets (
    organization_id uuid NOT NULL,
    bucket_key text NOT NULL,
    tokens double precision NOT NULL,
    updated_at_ms bigint NOT NULL,
    PRIMARY KEY (organization_id, bucket_key)
  ) WITH (fillfactor = 70)`
]

/**
 * `rate_limit_spend(organization, buckets, cost, now)`: the whole check-and-charge (see the module comment).
 * `buckets` is a JSON array of `{key, c: ceiling units, r: refill units per ms}`; `cost` is in units, `now` in
 * whole milliseconds. Returns one row per bucket: the level read (`tokens`, `updated_at_ms`) and the decision.
 * The output columns have one-letter names so an application-wide `transformResultNames` cannot rename them, and
 * distinct from every column the body names.
 */
export const rateLimitSpendFunctionStatements: ReadonlyArray<string> = [
  `CREATE OR REPLACE FUNCTION rate_limit_spend(p_org uuid, p_buckets jsonb, p_cost bigint, p_now bigint)
  RETURNS TABLE (k text, t double precision, u bigint, a boolean)
  LANGUAGE plpgsql VOLATILE AS $fn$
  BEGIN
    INSERT INTO rate_limit_buckets AS b (organization_id, bucket_key, tokens, updated_at_ms)
    SELECT p_org, x.key, x.c::double precision / 60000000, p_now
    FROM jsonb_to_recordset(p_buckets) AS x(key text, c bigint)
    ORDER BY x.key COLLATE "C"
    ON CONFLICT (organization_id, bucket_key) DO UPDATE SET tokens = b.tokens WHERE false;

    RETURN QUERY
    WITH wanted AS (
      SELECT x.key, x.c, x.r FROM jsonb_to_recordset(p_buckets) AS x(key text, c bigint, r bigint)
    ), current_level AS (
      SELECT w.key, w.c, w.r, b.tokens AS read_tokens, b.updated_at_ms AS read_at,
        least(round(b.tokens * 60000000)::bigint, w.c) AS stored
      FROM wanted w
      JOIN rate_limit_buckets b ON b.organization_id = p_org AND b.bucket_key = w.key
    ), refilled AS (
      SELECT l.*,
        CASE WHEN p_now <= l.read_at THEN l.stored
             ELSE least(l.c::numeric, l.stored::numeric + (p_now - l.read_at)::numeric * l.r)::bigint END AS level,
        greatest(p_now, l.read_at) AS level_at
      FROM current_level l
    ), decision AS (
      SELECT coalesce(bool_and(f.level >= p_cost), false)
        AND count(*) = jsonb_array_length(p_buckets) AS admitted
      FROM refilled f
    ), charged AS (
      UPDATE rate_limit_buckets b
      SET tokens = (f.level - p_cost)::double precision / 60000000, updated_at_ms = f.level_at
      FROM refilled f, decision d
      WHERE d.admitted AND b.organization_id = p_org AND b.bucket_key = f.key
      RETURNING b.bucket_key
    )
    SELECT f.key, f.read_tokens, f.read_at, d.admitted FROM refilled f, decision d;
  END
  $fn$`
]

/** Creates the bucket table and the spend function (idempotent): the statements of migrations 2 and 3. */
export const rateLimitMigration: Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of [...rateLimitTableStatements, ...rateLimitSpendFunctionStatements]) {
    yield* sql.unsafe(statement)
  }
})

interface SpendRow {
  readonly k: string
  readonly t: number
  readonly u: bigint | number | string
  readonly a: boolean
  /** The storefront content version, from `SPEND_WITH_VERSION_STATEMENT` only. */
  readonly v?: string | null | undefined
}

const SPEND_STATEMENT = "SELECT k, t, u, a FROM rate_limit_spend($1::uuid, $2::jsonb, $3::bigint, $4::bigint)"

/**
 * The spend with the organization's storefront content version (migration 160) as a fifth column: the subquery reads
 * it in the statement's snapshot, taken when the statement starts, so before any read the request makes after it
 * (docs/DECISIONS.md §70: a tag never newer than its body). No row: never written, version "0".
 */
const SPEND_WITH_VERSION_STATEMENT = "SELECT k, t, u, a, " +
  "(SELECT version::text FROM storefront_versions WHERE organization_id = $1::uuid) AS v " +
  "FROM rate_limit_spend($1::uuid, $2::jsonb, $3::bigint, $4::bigint)"

const makePgRateLimitRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const isolation = yield* sql<{ i: string }>`SELECT current_setting('default_transaction_isolation') AS i`.pipe(orDie)
  const readCommittedByDefault = isolation[0]?.i === "read committed"

  // One constant statement text read as arrays of values on the client without transforms (its columns need no
  // renames): no statement compiled and no row object built per request, on the one statement every request runs.
  const raw = withoutTransforms(sql)
  const call = (
    text: string,
    organizationId: string,
    buckets: ReadonlyArray<RateLimits.KeyedBucket>,
    cost: number,
    nowMs: number
  ) => {
    const payload = JSON.stringify(buckets.map((b) => {
      const { ceilingUnits, rateUnitsPerMs } = RateLimits.TokenBucket.unitsOf(b.spec)
      return { key: b.key, c: ceilingUnits, r: rateUnitsPerMs }
    }))
    const statement = Effect.map(
      raw.unsafe(text, [organizationId, payload, RateLimits.TokenBucket.tokensToUnits(cost), nowMs]).values,
      (values) =>
        values.map((v): SpendRow => ({
          k: v[0] as string,
          t: v[1] as number,
          u: v[2] as SpendRow["u"],
          a: v[3] as boolean,
          v: v[4] as string | null | undefined
        }))
    )
    return readCommittedByDefault
      ? statement
      : sql.withTransaction(Effect.andThen(sql`SET TRANSACTION ISOLATION LEVEL READ COMMITTED`, statement))
  }

  const spendWith = (
    text: string,
    organizationId: string,
    buckets: ReadonlyArray<RateLimits.KeyedBucket>,
    cost: number
  ) =>
    Effect.gen(function*() {
      RateLimits.assertBuckets(buckets)
      if (!(Number.isFinite(cost) && cost >= 0)) throw new RangeError(`cost must be a finite number >= 0, got ${cost}`)
      const nowMs = Math.floor(yield* Clock.currentTimeMillis)
      // Up to three retries of a transient failure. The retry schedule is set up only once an attempt has failed,
      // so a spend that succeeds at once pays nothing for it (docs/DECISIONS.md §37).
      const attempt = call(text, organizationId, buckets, cost, nowMs)
      const rows = yield* attempt.pipe(
        Effect.catchIf((e) => e.isRetryable, () => Effect.retry(attempt, { times: 2, while: (e) => e.isRetryable })),
        orDie
      )
      const read = new Map<string, BucketState>(
        rows.map((r) => [r.k, { tokens: Number(r.t), updatedAtMs: Number(r.u) }])
      )
      const result = RateLimits.TokenBucket.spend(
        buckets.map((b) => ({ state: read.get(b.key), spec: b.spec })),
        cost,
        nowMs
      )
      const admittedByDatabase = rows.length > 0 && rows[0]!.a === true
      if (rows.length !== buckets.length || (result._tag === "Admitted") !== admittedByDatabase) {
        return yield* Effect.die(
          new Error(
            `rate_limit_spend decided ${
              admittedByDatabase ? "admit" : "refuse"
            } but TokenBucket.spend decided ${result._tag} ` +
              `for ${JSON.stringify({ buckets, cost, nowMs, rows }, (_, v) => (typeof v === "bigint" ? String(v) : v))}`
          )
        )
      }
      return { decision: RateLimits.toSpendDecision(buckets, result, cost), storefrontVersion: rows[0]?.v ?? "0" }
    })
  const spend = (organizationId: string, buckets: ReadonlyArray<RateLimits.KeyedBucket>, cost: number) =>
    Effect.map(spendWith(SPEND_STATEMENT, organizationId, buckets, cost), (spent) => spent.decision)

  // Storefront buckets idle long enough to be full (`isIdleStorefrontBucket`), a bounded batch per statement.
  const idle = Storefront.storefrontBucketIdleMs.map(([, idleMs], i) =>
    `(starts_with(bucket_key, $${2 * i + 3}) AND updated_at_ms <= $1::bigint - $${2 * i + 4}::bigint)`
  ).join(" OR ")
  const purgeIdle = (nowMs: number, limit: number) =>
    sql.unsafe<{ n: number }>(
      `WITH gone AS (
        DELETE FROM rate_limit_buckets WHERE ctid IN (SELECT ctid FROM rate_limit_buckets WHERE ${idle} LIMIT $2)
        RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`,
      [nowMs, limit, ...Storefront.storefrontBucketIdleMs.flatMap(([prefix, idleMs]) => [prefix, idleMs])]
    ).pipe(Effect.map((rows) => rows[0]?.n ?? 0), orDie)

  return RateLimits.RateLimitRepository.of({
    spend,
    purgeIdle,
    spendWithStorefrontVersion: (organizationId, buckets, cost) =>
      spendWith(SPEND_WITH_VERSION_STATEMENT, organizationId, buckets, cost)
  })
})

/**
 * The store as the server uses it: a refusal known from an earlier one costs no round trip (`LocalRefusals`). On its
 * own its database need not hold the store's tables, so it reads no content version.
 */
export const PgRateLimitRepository: Layer.Layer<RateLimits.RateLimitRepository, never, SqlClient.SqlClient> = Layer
  .effect(
    RateLimits.RateLimitRepository,
    Effect.map(
      makePgRateLimitRepository,
      ({ spendWithStorefrontVersion: _, ...store }) => RateLimits.LocalRefusals.withLocalRefusals(store)
    )
  )

/**
 * `PgRateLimitRepository` in the store's own database, beside its `storefront_versions`: a storefront read's spend
 * also reads the organization's content version (`RateLimitRepository.spendWithStorefrontVersion`).
 */
export const PgStoreRateLimitRepository: Layer.Layer<RateLimits.RateLimitRepository, never, SqlClient.SqlClient> = Layer
  .effect(
    RateLimits.RateLimitRepository,
    Effect.map(makePgRateLimitRepository, (store) => RateLimits.LocalRefusals.withLocalRefusals(store))
  )
