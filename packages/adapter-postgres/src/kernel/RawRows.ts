/**
 * Reading rows without the client's per-cell renames. The client renames every column of every row it reads and
 * walks into every jsonb value (`PgDatabase.ts`); for the hottest reads (a page of reviews and its includes) the
 * statement names its columns as the client would (`… AS "siteId"`) and runs on the client without transforms.
 * `jsonAsTransformed` then reads a jsonb column exactly as it would have arrived through the transforms (which leave
 * JSON as stored: `PgDatabase.naming`).
 */
import type { SqlClient } from "effect/sql"
import { jsonValue } from "./SqlRows.ts"

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

/** A jsonb value read without transforms, as it reads through them: parsed, keys as stored. */
export const jsonAsTransformed = <A>(value: unknown): A => (typeof value === "string" ? jsonValue(value) : value) as A
