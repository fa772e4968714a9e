/**
 * Reading rows without the client's per-cell renames. The client renames every column of every row it reads and
 * walks into every jsonb value (`PgDatabase.ts`); for the hottest reads (a page of reviews and its includes) the
 * statement names its columns as the client would (`… AS "siteId"`) and runs on the client without transforms, so
 * the same row mappers read it (JSON is never transformed: `PgDatabase.naming`).
 */
import type { SqlClient } from "effect/sql"

const untransformed = new WeakMap<SqlClient.SqlClient, SqlClient.SqlClient>()

/** The client without result renames, made once per client. */
export const withoutTransforms = (sql: SqlClient.SqlClient): SqlClient.SqlClient => {
  let raw = untransformed.get(sql)
  if (raw === undefined) {
    raw = sql.withoutTransforms()
    untransformed.set(sql, raw)
  }
  return raw
}
