/**
 * Paging of the short administrative lists (webhooks, their delivery logs, email templates, survey flows): newest
 * first by (createdAt, id), with the sealed cursors of every other list (`Cursor.ts`, docs/DECISIONS.md §4), bound to
 * the organization and to the list (`scope`), so a cursor of one list is refused on another. No sort, filter or
 * search: these lists are small and read by settings screens.
 */
import { Effect, Result } from "effect"
import { type CursorBinding, type CursorIssuer, decodeCursor, encodeCursor, type Sort } from "./Cursor.ts"
import type { CursorKey } from "./CursorKey.ts"
import { InvalidRequest } from "./Errors.ts"
import { matchAll } from "./Filter.ts"
import type { OrganizationId } from "./Ids.ts"
import type { Timestamp } from "./Timestamp.ts"

export const newestFirstLimits = { defaultLimit: 50, maxLimit: 250 } as const

/** A keyset position in a newest-first list: rows strictly older than (createdAt, id) come next. */
export interface NewestFirstPosition {
  readonly createdAt: Timestamp
  readonly id: string
}

/** What a store is asked for. */
export interface NewestFirstPageRequest {
  readonly after: NewestFirstPosition | undefined
  /** Rows to return at most (the core asks for one more than the page size to learn whether a next page exists). */
  readonly limit: number
}

/** What a caller sends. */
export interface NewestFirstPageQuery {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const newestFirst: Sort = { field: "createdAt", direction: "desc", type: "timestamp" }

const bindingOf = (scope: string): CursorBinding => ({
  endpoint: scope,
  sort: newestFirst,
  filter: matchAll,
  search: undefined
})

const checkLimit = (limit: number | undefined): Result.Result<number, InvalidRequest> =>
  limit === undefined
    ? Result.succeed(newestFirstLimits.defaultLimit)
    : Number.isInteger(limit) && limit >= 1 && limit <= newestFirstLimits.maxLimit
    ? Result.succeed(limit)
    : Result.fail(InvalidRequest.single("limit", `must be a whole number from 1 to ${newestFirstLimits.maxLimit}`))

const decodePosition = (
  scope: string,
  token: string,
  issuer: CursorIssuer
): Result.Result<NewestFirstPosition, InvalidRequest> =>
  Result.flatMap(decodeCursor(token, bindingOf(scope), issuer), ({ value, id }) =>
    typeof value === "string"
      ? Result.succeed({ createdAt: value as Timestamp, id })
      : Result.fail(
        InvalidRequest.single(
          "cursor",
          "is not a cursor of this list; pass `nextCursor` from the previous page unchanged"
        )
      ))

/** One page of `scope` for the organization: validates the query, fetches one row more than the page, seals the next cursor. */
export const newestFirstPage = <Row extends NewestFirstPosition, Out>(
  organizationId: OrganizationId,
  scope: string,
  query: NewestFirstPageQuery,
  fetch: (request: NewestFirstPageRequest) => Effect.Effect<ReadonlyArray<Row>>,
  view: (row: Row) => Out,
  key: CursorKey["Service"]
): Effect.Effect<{ data: ReadonlyArray<Out>; nextCursor: string | null }, InvalidRequest> =>
  Effect.gen(function*() {
    const issuer: CursorIssuer = { key, organizationId }
    const limit = yield* Effect.fromResult(checkLimit(query.limit))
    const after = query.cursor === undefined || query.cursor === ""
      ? undefined
      : yield* Effect.fromResult(decodePosition(scope, query.cursor, issuer))
    const rows = yield* fetch({ after, limit: limit + 1 })
    const pageRows = rows.slice(0, limit)
    const last = pageRows[pageRows.length - 1]
    return {
      data: pageRows.map(view),
      nextCursor: rows.length > limit && last !== undefined
        ? encodeCursor({ value: last.createdAt, id: last.id }, bindingOf(scope), issuer)
        : null
    }
  })

/** The in-memory form of a store's page query: rows strictly older than `after`, newest first, at most `limit`. */
export const takeNewestFirst = <Row extends NewestFirstPosition>(
  rows: Iterable<Row>,
  request: NewestFirstPageRequest
): ReadonlyArray<Row> => {
  const after = request.after
  return [...rows]
    .filter((r) =>
      after === undefined || r.createdAt < after.createdAt || (r.createdAt === after.createdAt && r.id < after.id)
    )
    .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
    .slice(0, request.limit)
}
