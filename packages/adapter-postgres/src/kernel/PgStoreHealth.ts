/**
 * `SELECT 1` through the pool, bounded in time: a pool that cannot get a connection, a database that does not answer
 * within `READY_TIMEOUT`, or any SQL error is `StoreUnavailable` (503 on `/ready`), never a hang.
 */
import { StoreHealth, StoreUnavailable } from "@feedback/core"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

const READY_TIMEOUT = Duration.seconds(2)

export const PgStoreHealth = Layer.effect(StoreHealth, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return StoreHealth.of({
    check: sql`SELECT 1`.pipe(
      Effect.timeout(READY_TIMEOUT),
      Effect.asVoid,
      Effect.catch(() => Effect.fail(new StoreUnavailable({ message: "The database does not answer; retry shortly." })))
    )
  })
}))
