/**
 * `SELECT 1` through the pool, bounded in time: a pool that cannot get a connection, a database that does not answer
 * within `READY_TIMEOUT`, or any SQL error is `StoreUnavailable` (503 on `/ready`), never a hang.
 *
 * Pool usage (`/metrics`, docs/DECISIONS.md §19): @effect/sql-pg does not expose its pool's counters, so the
 * database is asked. Every pool names its connections with its own `application_name` (`PgDatabase`), and
 * `pg_stat_activity` lists them: the open ones, and the busy ones other than the one asking.
 */
import { PgClient } from "@effect/sql-pg"
import { Kernel } from "@feedback/core"
import { Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"

const READY_TIMEOUT = Duration.seconds(2)

/** PGlite's pool is one connection by construction (a one-connection pool has nothing more to tell). */
const EMBEDDED_POOL_SIZE = 1

export const PgStoreHealth = Layer.effect(
  Kernel.StoreHealth,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* Effect.serviceOption(PgClient.PgClient)
    // PgClient.make keeps its whole pool config, the size included.
    const max =
      (Option.getOrUndefined(pg)?.config as { readonly maxConnections?: number } | undefined)?.maxConnections ?? 10
    const embedded = max === EMBEDDED_POOL_SIZE
    const measured = sql<{ open: number; busy: number }>`
    SELECT count(*)::int AS open, (count(*) FILTER (WHERE state <> 'idle' AND pid <> pg_backend_pid()))::int AS busy
    FROM pg_stat_activity WHERE application_name = current_setting('application_name')`.pipe(
      Effect.timeout(READY_TIMEOUT),
      Effect.map((rows): Kernel.PoolUsage => ({ max, open: rows[0]?.open ?? 0, busy: rows[0]?.busy ?? 0 })),
      Effect.catch(() => Effect.succeed<Kernel.PoolUsage>({ max }))
    )
    return Kernel.StoreHealth.of({
      check: sql`SELECT 1`.pipe(
        Effect.timeout(READY_TIMEOUT),
        Effect.asVoid,
        Effect.catch(() =>
          Effect.fail(new Kernel.StoreUnavailable({ message: "The database does not answer; retry shortly." }))
        )
      ),
      poolUsage: embedded ? Effect.succeed({ max: EMBEDDED_POOL_SIZE }) : measured
    })
  })
)
