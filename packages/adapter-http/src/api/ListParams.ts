/**
 * The query string of the list endpoints (DECISIONS §4). Every parameter is an optional single string: the core
 * parses and checks them (`parseListRequest`), so each problem is a 400 naming the parameter (`limit`, `sort`,
 * `filter.rating.$gte`, …). Unknown parameters and repeated ones are 400s too (strict query parsing).
 */
import { Schema } from "effect"

const param = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))

export const limitParam = param("Records to return, 1 to 250 (default 50).")
export const cursorParam = param("The previous page's `nextCursor`; only valid with the same sort, filter and search.")
export const searchParam = param("Free text, case-insensitive substring match over the record's identifying fields; ANDed with `filter`.")
export const filterParam = param(
  "JSON filter document: field paths (and `metadata.<key>`), `$and`/`$or`, operators `$eq $ne $gt $gte $lt $lte $in $nin $exists`."
)

export const sortParam = (values: ReadonlyArray<string>) =>
  param(`One of ${values.join(", ")}; a leading \`-\` means descending. Default \`-createdAt\`.`)

export const includeParam = (values: ReadonlyArray<string>) =>
  param(`Comma-separated extra fields: ${values.join(", ")}. Each costs one more query per page.`)

/** limit, cursor, sort, search and filter. */
export const listQuery = (sorts: ReadonlyArray<string>) => ({
  limit: limitParam,
  cursor: cursorParam,
  sort: sortParam(sorts),
  search: searchParam,
  filter: filterParam
})

export const pageOf = <S extends Schema.Top>(record: S) =>
  Schema.Struct({ data: Schema.Array(record), nextCursor: Schema.NullOr(Schema.String) })
