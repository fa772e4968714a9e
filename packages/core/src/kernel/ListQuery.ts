/**
 * The common list parameters of docs/DECISIONS.md §4 (`limit`, `cursor`, `sort`, `search`, `filter`, `include`), parsed
 * once into a `ListRequest` that both store back ends answer: `pageInMemory` here, `compileListQuery` in
 * `adapter-postgres/src/kernel/FilterSql.ts`, each followed by `toPage`.
 *
 * Every parser returns a `Result` whose failure is an `InvalidRequest` naming the parameter; `parseListRequest`
 * reports the problems of all parameters at once. An empty parameter (`?search=`) is the same as an omitted one.
 *
 * The HTTP contract decodes `limit`, `sort` and `include` with these same parsers (`client/src/api/ListParams.ts`),
 * so its typed values (`limit: 10`, `include: ["product"]`) arrive here already checked; they are checked again,
 * because an embedding host calls the core directly with either the raw strings or the typed values.
 */
import { Effect, Result, Schema, SchemaAST } from "effect"
import {
  type CursorBinding,
  type CursorIssuer,
  type CursorPosition,
  compareKeyset,
  decodeCursor,
  encodeCursor,
  isAfter,
  type Sort
} from "./Cursor.ts"
import { CursorKey } from "./CursorKey.ts"
import { InvalidRequest, type RequestIssue } from "./Errors.ts"
import { type FieldCatalog, type FilterAst, parseFilter } from "./Filter.ts"
import { evaluateFilter, normalizeValue } from "./FilterEvaluate.ts"
import { matchesSearch } from "./Search.ts"
import { textProblem } from "./Text.ts"

export const listLimits = {
  defaultLimit: 50,
  maxLimit: 250,
  /** Characters of a search term after trimming. */
  maxSearchLength: 200
} as const

/** What one list endpoint accepts. Sort fields must be fields of the catalog (their type types the cursor). */
export interface ListEndpoint<Include extends string = string, SortValue extends string = string> {
  /** Binds cursors to the endpoint, e.g. `reviews`. */
  readonly name: string
  /** Allowed `sort` values, e.g. `["createdAt", "-createdAt"]`. */
  readonly sorts: ReadonlyArray<SortValue>
  readonly defaultSort: NoInfer<SortValue>
  readonly includes: ReadonlyArray<Include>
  readonly catalog: FieldCatalog
}

/** Checks an endpoint definition eagerly, so a sort field missing from the catalog fails at start-up, not per call. */
export const defineListEndpoint = <const Include extends string, const SortValue extends string>(
  endpoint: ListEndpoint<Include, SortValue>
): ListEndpoint<Include, SortValue> => {
  for (const value of [...endpoint.sorts, endpoint.defaultSort]) {
    const field = value.startsWith("-") ? value.slice(1) : value
    if (!endpoint.catalog.fields.has(field)) {
      throw new Error(`sort field ${field} of ${endpoint.name} is not in its catalog`)
    }
  }
  if (!endpoint.sorts.includes(endpoint.defaultSort)) throw new Error(`default sort of ${endpoint.name} is not allowed`)
  return endpoint
}

const blank = (raw: string | undefined): raw is undefined => raw === undefined || raw === ""

/** `include` as a query string (`"product,customer"`) or as the list it stands for. */
export type IncludeParam = string | ReadonlyArray<string> | undefined

// ---------------------------------------------------------------------------------------------------------------

/** `limit`: a whole number 1..250, default 50; as a query string (digits only) or as a number. */
export const parseLimit = (raw: string | number | undefined): Result.Result<number, InvalidRequest> => {
  if (typeof raw !== "number" && blank(raw)) return Result.succeed(listLimits.defaultLimit)
  const n = typeof raw === "number" ? raw : /^\d{1,6}$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isInteger(n) && n >= 1 && n <= listLimits.maxLimit
    ? Result.succeed(n)
    : Result.fail(InvalidRequest.single("limit", `must be a whole number from 1 to ${listLimits.maxLimit}`))
}

/** A `sort` value the endpoint allows (`rating`, `-rating`, …); blank means the endpoint's default. */
export const parseSortValue = <const Value extends string>(
  raw: string | undefined,
  allowed: ReadonlyArray<Value>
): Result.Result<Value | undefined, InvalidRequest> => {
  if (blank(raw)) return Result.succeed(undefined)
  const isAllowed = (v: string): v is Value => (allowed as ReadonlyArray<string>).includes(v)
  return isAllowed(raw)
    ? Result.succeed(raw)
    : Result.fail(InvalidRequest.single("sort", `must be one of ${allowed.join(", ")}`))
}

/** `sort`: one of the allowed values; a leading `-` means descending. */
export const parseSort = (
  raw: string | undefined,
  allowed: ReadonlyArray<string>,
  catalog: FieldCatalog,
  defaultSort = "-createdAt"
): Result.Result<Sort, InvalidRequest> =>
  Result.map(parseSortValue(raw, allowed), (chosen) => {
    const value = chosen ?? defaultSort
    const descending = value.startsWith("-")
    const field = descending ? value.slice(1) : value
    const type = catalog.fields.get(field)
    if (type === undefined) throw new Error(`sort field ${field} is not in the catalog`)
    return { field, direction: descending ? "desc" : "asc", type }
  })

/**
 * `include`: comma-separated allowed names, or the list of them; blanks around names and duplicates are ignored,
 * order is kept.
 */
export const parseInclude = <Include extends string>(
  raw: IncludeParam,
  allowed: ReadonlyArray<Include>
): Result.Result<ReadonlyArray<Include>, InvalidRequest> => {
  if (raw === undefined || raw === "") return Result.succeed([])
  const listed = typeof raw === "string" ? raw.split(",") : raw
  const names = [...new Set(listed.map((s) => s.trim()).filter((s) => s !== ""))]
  const isAllowed = (n: string): n is Include => (allowed as ReadonlyArray<string>).includes(n)
  const unknown = names.filter((n) => !isAllowed(n))
  return unknown.length > 0
    ? Result.fail(InvalidRequest.single(
      "include",
      `${unknown.map((n) => JSON.stringify(n)).join(", ")} cannot be included; use any of ${allowed.join(", ")}`
    ))
    : Result.succeed(names.filter(isAllowed))
}

/** `search`: trimmed; blank means no search. */
export const parseSearch = (raw: string | undefined): Result.Result<string | undefined, InvalidRequest> => {
  const term = raw?.trim()
  if (term === undefined || term === "") return Result.succeed(undefined)
  if (term.length > listLimits.maxSearchLength) {
    return Result.fail(InvalidRequest.single("search", `is longer than ${listLimits.maxSearchLength} characters`))
  }
  if (textProblem(term) !== undefined) {
    return Result.fail(InvalidRequest.single("search", "must be well-formed text without NUL characters"))
  }
  return Result.succeed(term)
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The list parameters, absent ones undefined: the raw query strings, or the typed values the HTTP contract decodes
 * them to (`limit` a number, `include` a list of names). Both are parsed by the same functions above.
 */
export interface ListParams {
  readonly limit?: string | number | undefined
  readonly cursor?: string | undefined
  readonly sort?: string | undefined
  readonly search?: string | undefined
  readonly filter?: string | undefined
  readonly include?: IncludeParam
}

/** A validated list request. `after` is the position of the previous page's last record. */
export interface ListRequest<Include extends string = string> {
  readonly endpoint: string
  readonly limit: number
  readonly sort: Sort
  readonly filter: FilterAst
  readonly search: string | undefined
  readonly after: CursorPosition | undefined
  readonly include: ReadonlyArray<Include>
  /** Seals the next page's cursor for the organization the request was made in (see `toPage`). */
  readonly issuer: CursorIssuer
}

/** A request for the first page with the endpoint's defaults (e.g. for internal callers). */
export const defaultListRequest = <Include extends string>(
  endpoint: ListEndpoint<Include>,
  issuer: CursorIssuer
): ListRequest<Include> => Result.getOrThrow(parseListRequest({}, endpoint, issuer))

/** Which records a list request selects: its filter and search. A bulk change or an export matches the same way. */
export interface ListMatch {
  readonly filter: FilterAst
  readonly search: string | undefined
}

/** Collects the issues of several parsers, to report them all at once. */
const issueCollector = () => {
  const issues: Array<RequestIssue> = []
  const take = <A>(r: Result.Result<A, InvalidRequest>): A | undefined => {
    if (Result.isSuccess(r)) return r.success
    issues.push(...r.failure.issues)
    return undefined
  }
  return { issues, take }
}

/**
 * Parses a list's `search` and `filter` as `parseListRequest` does, for the endpoints that act on what a list would
 * select (`PATCH /reviews/bulk-update`, `POST /export-jobs`); both problems are reported together.
 */
export const parseListMatch = (
  params: Pick<ListParams, "filter" | "search">,
  endpoint: Pick<ListEndpoint, "catalog">
): Result.Result<ListMatch, InvalidRequest> => {
  const { issues, take } = issueCollector()
  const search = take(parseSearch(params.search))
  const filter = take(parseFilter(params.filter, endpoint.catalog))
  return filter === undefined || issues.length > 0
    ? Result.fail(InvalidRequest.of(issues))
    : Result.succeed({ filter, search })
}

/** Parses every list parameter; all problems are reported together (`details.issues`). */
export const parseListRequest = <Include extends string>(
  params: ListParams,
  endpoint: ListEndpoint<Include>,
  issuer: CursorIssuer
): Result.Result<ListRequest<Include>, InvalidRequest> => {
  const { issues, take } = issueCollector()
  const limit = take(parseLimit(params.limit))
  const sort = take(parseSort(params.sort, endpoint.sorts, endpoint.catalog, endpoint.defaultSort))
  const include = take(parseInclude(params.include, endpoint.includes))
  const match = take(parseListMatch(params, endpoint))
  if (limit === undefined || sort === undefined || include === undefined || match === undefined || issues.length > 0) {
    return Result.fail(InvalidRequest.of(issues))
  }
  const { filter, search } = match
  const binding: CursorBinding = { endpoint: endpoint.name, sort, filter, search }
  let after: CursorPosition | undefined
  if (!blank(params.cursor)) {
    const decoded = decodeCursor(params.cursor, binding, issuer)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    after = decoded.success
  }
  return Result.succeed({ endpoint: endpoint.name, limit, sort, filter, search, after, include, issuer })
}

/**
 * `parseListRequest` for a caller of `organizationId`, sealed with `key`: what a use-case service calls with the
 * cursor key it captured when it was built.
 */
export const listRequestWith = <Include extends string>(
  key: CursorKey["Service"],
  params: ListParams,
  endpoint: ListEndpoint<Include>,
  organizationId: string
): Effect.Effect<ListRequest<Include>, InvalidRequest> =>
  Effect.fromResult(parseListRequest(params, endpoint, { key, organizationId }))

export const cursorBindingOf = (request: ListRequest<string>): CursorBinding => ({
  endpoint: request.endpoint,
  sort: request.sort,
  filter: request.filter,
  search: request.search
})

// ---------------------------------------------------------------------------------------------------------------

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/**
 * The schema of a page of `record`s, named `identifier` in the OpenAPI document (by default `<Record>Page`) so that
 * generated clients get a named type. Every list answers this one shape.
 */
export const pageOf = <S extends Schema.Top>(
  record: S,
  identifier = `${SchemaAST.resolveIdentifier(record.ast) ?? "Record"}Page`
) => Schema.Struct({ data: Schema.Array(record), nextCursor: Schema.NullOr(Schema.String) }).annotate({ identifier })

/**
 * Turns the rows of a query that asked for `limit + 1` records in keyset order into a page: the extra row only
 * says that another page exists, and the cursor is the position of the last row returned.
 */
export const toPage = <A>(
  rows: ReadonlyArray<A>,
  request: ListRequest<string>,
  positionOf: (row: A) => CursorPosition
): Page<A> => {
  if (rows.length <= request.limit) return { data: rows, nextCursor: null }
  const data = rows.slice(0, request.limit)
  return {
    data,
    nextCursor: encodeCursor(positionOf(data[data.length - 1]!), cursorBindingOf(request), request.issuer)
  }
}

/** How the memory store reads its records for listing. */
export interface MemoryListAccess<A> {
  /** Field accessor for filters and the sort field (see `FieldAccessor`). */
  readonly get: (item: A, fieldPath: string) => unknown
  readonly id: (item: A) => string
  /** The values `search` looks in (docs/DECISIONS.md §4), null for absent ones. */
  readonly searchValues: (item: A) => ReadonlyArray<string | null | undefined>
}

/** Whether an in-memory record matches a request's search and filter (a list's, or a bulk change's match). */
export const matchesInMemory = <A>(
  match: Pick<ListRequest<string>, "filter" | "search">,
  access: MemoryListAccess<A>,
  item: A
): boolean =>
  (match.search === undefined || matchesSearch(match.search, access.searchValues(item))) &&
  evaluateFilter(match.filter, (path) => access.get(item, path))

/** The position of an item in the request's sort order. */
export const positionOf =
  <A>(request: ListRequest<string>, access: MemoryListAccess<A>) => (item: A): CursorPosition => ({
    value: normalizeValue(request.sort.type, access.get(item, request.sort.field)),
    id: access.id(item).toLowerCase()
  })

/** Answers a list request over in-memory records (already scoped to the organization): filter, search, keyset, page. */
export const pageInMemory = <A>(
  items: Iterable<A>,
  request: ListRequest<string>,
  access: MemoryListAccess<A>
): Page<A> => {
  const position = positionOf(request, access)
  // Only the first `limit + 1` in keyset order are kept, in order: a list reads one page of every record, so it
  // costs a comparison per record rather than a sort of them all. Records are mostly held in creation order, so a
  // descending list reads them from the end, where its first page is.
  const keep = request.limit + 1
  const selected: Array<{ readonly item: A; readonly at: CursorPosition }> = []
  const all = Array.isArray(items) ? items as ReadonlyArray<A> : Array.from(items)
  const descending = request.sort.direction === "desc"
  for (let i = 0; i < all.length; i++) {
    const item = all[descending ? all.length - 1 - i : i]!
    const at = position(item)
    if (request.after !== undefined && !isAfter(request.sort, request.after, at)) continue
    if (selected.length === keep && compareKeyset(request.sort, at, selected[keep - 1]!.at) >= 0) continue
    if (!matchesInMemory(request, access, item)) continue
    let low = 0
    let high = selected.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compareKeyset(request.sort, selected[middle]!.at, at) <= 0) low = middle + 1
      else high = middle
    }
    selected.splice(low, 0, { item, at })
    if (selected.length > keep) selected.pop()
  }
  const page = toPage(selected, request, (row) => row.at)
  return { data: page.data.map((row) => row.item), nextCursor: page.nextCursor }
}
