/**
 * Compiles the core's list query language to parameterised PostgreSQL: filters (`Filter.ts`), search
 * (`Search.ts`) and keyset pagination (`Cursor.ts`). The result must select exactly what the in-memory evaluator
 * selects; `test/FilterSql.test.ts` checks that on random data.
 *
 * Safety: every value, metadata key and search pattern is a `$n` parameter; SQL text comes only from this module
 * and from the store's own column mapping (`ColumnResolver`), never from a request.
 *
 * Fragments use `$n` placeholders numbered from `offset + 1`, so a store builds the whole statement as one string
 * and runs it with `sql.unsafe(text, params)` (effect/sql does not renumber placeholders inside `unsafe`, so do
 * not splice these fragments into a `sql\`...\`` template that has its own parameters).
 *
 * Null handling mirrors `FilterEvaluate.ts`: `$eq`, `$in` and orderings are plain comparisons (NULL, i.e. no
 * match, on a null field), `$ne` is `IS DISTINCT FROM`, `$nin` is `(x IS NULL OR x NOT IN (...))`. Fragments
 * contain no NOT, so under AND/OR a NULL leaf behaves exactly like false; wrap a fragment in
 * `COALESCE((...), FALSE)` before negating it.
 */
import { Kernel } from "@feedback/core"

/** The lower-case letters `Search.ts` folds Latin-1 capitals to (U+00E0..U+00FE without ÷). */
const latin1LowerCase = /[\u00E0-\u00F6\u00F8-\u00FE]/

/** A piece of SQL and the values of its `$n` placeholders (numbered from the offset it was compiled at). */
export interface SqlFragment {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
}

/**
 * Where a catalog field lives: a SQL expression over the query's own aliases (`r.rating`, `p.title`). For a
 * metadata prefix (`metadata`, `product.metadata`) it is the jsonb column (`r.metadata`); keys are read with
 * `->>`. `paramType` overrides the cast of compared values (defaults: uuid, boolean, double precision,
 * timestamptz, text); it must hold every value the field type admits (`integer` would round a filter's 2.5).
 *
 * Timestamp columns must hold millisecond precision (`timestamptz(3)`, or values written from canonical
 * Timestamps): a cursor carries the millisecond value read back from the row, and a row stored with microseconds
 * would compare as after its own cursor and appear on two pages.
 */
export interface ColumnRef {
  readonly sql: string
  readonly paramType?: string
  /**
   * The column can never be null (e.g. `NOT NULL`). Keyset SQL then omits its null handling (`NULLS LAST`,
   * `OR x IS NULL`), which changes no result but lets one plain B-tree index serve both sort directions: the
   * planner matches `ORDER BY x DESC, id DESC` to a backward index scan, not `x DESC NULLS LAST`.
   */
  readonly notNull?: boolean
}

/** Maps a catalog path to its column. Unknown paths are a defect: the parser only admits catalog fields. */
export type ColumnResolver = (fieldPath: string) => ColumnRef

/** A resolver from a table of paths; throws (a defect) for a path the table lacks. */
export const columnsFrom = (table: Readonly<Record<string, string | ColumnRef>>): ColumnResolver => (path) => {
  const entry = Object.hasOwn(table, path) ? table[path] : undefined
  if (entry === undefined) throw new Error(`no column is mapped for the filter field ${path}`)
  return typeof entry === "string" ? { sql: entry } : entry
}

const defaultParamType: Readonly<Record<Kernel.FieldType, string>> = {
  uuid: "uuid",
  boolean: "boolean",
  number: "double precision",
  timestamp: "timestamptz",
  string: "text"
}

/** Collects parameters and hands out their placeholders. */
class Params {
  readonly values: Array<unknown> = []
  readonly offset: number
  constructor(offset: number) {
    this.offset = offset
  }
  add(value: unknown, type: string): string {
    this.values.push(value)
    return `$${this.offset + this.values.length}::${type}`
  }
}

interface Operand {
  /** The field's SQL expression, parenthesised. */
  readonly expr: string
  readonly paramType: string
  /** Ordering on strings needs code point order, whatever the database's collation. */
  readonly collate: string
}

const operand = (field: Kernel.FieldRef, columns: ColumnResolver, params: Params): Operand => {
  if (field._tag === "MetadataKey") {
    const column = columns(field.prefix)
    return { expr: `(${column.sql} ->> ${params.add(field.key, "text")})`, paramType: "text", collate: ` COLLATE "C"` }
  }
  const column = columns(field.path)
  return {
    expr: `(${column.sql})`,
    paramType: column.paramType ?? defaultParamType[field.type],
    collate: field.type === "string" ? ` COLLATE "C"` : ""
  }
}

const orderingSql = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const

const compileNode = (ast: Kernel.FilterAst, columns: ColumnResolver, params: Params): string => {
  switch (ast._tag) {
    case "And":
    case "Or": {
      if (ast.clauses.length === 0) return ast._tag === "And" ? "TRUE" : "FALSE"
      const parts = ast.clauses.map((c) => compileNode(c, columns, params))
      return parts.length === 1 ? parts[0]! : `(${parts.join(ast._tag === "And" ? " AND " : " OR ")})`
    }
    case "Exists": {
      const o = operand(ast.field, columns, params)
      return `${o.expr} ${ast.exists ? "IS NOT NULL" : "IS NULL"}`
    }
    case "In": {
      if (ast.values.length === 0) return ast.negated ? "TRUE" : "FALSE"
      const o = operand(ast.field, columns, params)
      const list = ast.values.map((v: Kernel.FilterValue) => params.add(v, o.paramType)).join(", ")
      return ast.negated ? `(${o.expr} IS NULL OR ${o.expr} NOT IN (${list}))` : `${o.expr} IN (${list})`
    }
    case "Compare": {
      const o = operand(ast.field, columns, params)
      const p = params.add(ast.value, o.paramType)
      switch (ast.op) {
        case "eq":
          return `${o.expr} = ${p}`
        case "ne":
          return `${o.expr} IS DISTINCT FROM ${p}`
        default:
          return `${o.expr}${o.collate} ${orderingSql[ast.op]} ${p}`
      }
    }
  }
}

/** The WHERE condition of a filter; `TRUE` for the empty filter. */
export const compileFilter = (ast: Kernel.FilterAst, columns: ColumnResolver, offset = 0): SqlFragment => {
  const params = new Params(offset)
  const text = compileNode(ast, columns, params)
  return { text, params: params.values }
}

/**
 * The search condition: any of the expressions (nullable text) contains the term, with the case folding of
 * `Search.ts` (`translate` + `LIKE`, not `ILIKE`, so the answer does not depend on the database's LC_CTYPE).
 * An empty list of expressions matches nothing; an undefined or empty term matches everything.
 *
 * Speed: `translate` with the 56-letter fold table is slow per value, and a scan runs it on six expressions of every
 * review (docs/DECISIONS.md §4). When the folded term holds no Latin-1 lower-case letter (à..þ), the cheap
 * `lower(x COLLATE "C")` gives the same answer: it folds A-Z exactly as `translate` does (the "C" collation's
 * `lower` is ASCII-only on every installation) and leaves À..Þ as they are, where `translate` would make them
 * à..þ — letters such a term does not contain, so no match can start, end or pass there either way.
 */
export const compileSearch = (
  term: string | undefined,
  expressions: ReadonlyArray<string>,
  offset = 0
): SqlFragment => {
  if (term === undefined || term === "") return { text: "TRUE", params: [] }
  if (expressions.length === 0) return { text: "FALSE", params: [] }
  const params = new Params(offset)
  const pattern = params.add(Kernel.searchPattern(term), "text")
  if (!latin1LowerCase.test(Kernel.foldCase(term))) {
    const tests = expressions.map((e) => `lower((${e}) COLLATE "C") LIKE ${pattern} ESCAPE '\\'`)
    return { text: `(${tests.join(" OR ")})`, params: params.values }
  }
  const from = params.add(Kernel.foldFrom, "text")
  const to = params.add(Kernel.foldTo, "text")
  const tests = expressions.map((e) => `translate((${e}), ${from}, ${to}) LIKE ${pattern} ESCAPE '\\'`)
  return { text: `(${tests.join(" OR ")})`, params: params.values }
}

/** The ORDER BY list of a keyset sort: value in the direction with NULLS LAST, then id in the same direction. */
const compileOrderBy = (sort: Kernel.Sort, columns: ColumnResolver, idSql: string): string => {
  const column = columns(sort.field)
  const collate = sort.type === "string" ? ` COLLATE "C"` : ""
  const dir = sort.direction === "asc" ? "ASC" : "DESC"
  return `(${column.sql})${collate} ${dir}${column.notNull === true ? "" : " NULLS LAST"}, (${idSql}) ${dir}`
}

/**
 * The condition "comes after `after` in the sort order" (`TRUE` without a position), and the matching ORDER BY.
 * With nulls last: after a non-null value come greater (asc) or smaller (desc) values, equal values with a later
 * id, and all nulls; after a null value come only nulls with a later id.
 */
export const compileKeyset = (
  sort: Kernel.Sort,
  after: Kernel.CursorPosition | undefined,
  columns: ColumnResolver,
  idSql: string,
  offset = 0
): SqlFragment & { readonly orderBy: string } => {
  const orderBy = compileOrderBy(sort, columns, idSql)
  if (after === undefined) return { text: "TRUE", params: [], orderBy }
  const params = new Params(offset)
  const column = columns(sort.field)
  const expr = `(${column.sql})`
  const collate = sort.type === "string" ? ` COLLATE "C"` : ""
  const cmp = sort.direction === "asc" ? ">" : "<"
  if (after.value === null) {
    const id = params.add(after.id, "uuid")
    return { text: `(${expr} IS NULL AND (${idSql}) ${cmp} ${id})`, params: params.values, orderBy }
  }
  const value = params.add(after.value, column.paramType ?? defaultParamType[sort.type])
  const id = params.add(after.id, "uuid")
  const row = `(${expr}${collate}, (${idSql})) ${cmp} (${value}, ${id})`
  return {
    text: column.notNull === true ? row : `(${row} OR ${expr} IS NULL)`,
    params: params.values,
    orderBy
  }
}

/** The store's mapping for one list endpoint. */
export interface ListSqlMapping {
  readonly columns: ColumnResolver
  /** The record's id expression, e.g. `r.id` (a uuid column). */
  readonly id: string
  /** The search expressions (docs/DECISIONS.md §4), e.g. `["r.title", "r.body", "c.email", ...]`. */
  readonly search: ReadonlyArray<string>
}

/**
 * Filter AND search AND keyset, and the ORDER BY, with placeholders from `offset + 1`. The caller adds its own
 * conditions (organization, endpoint-specific parameters) as `$1..$offset` and `LIMIT request.limit + 1`.
 */
export const compileListQuery = (
  request: {
    readonly filter: Kernel.FilterAst
    readonly search: string | undefined
    readonly sort: Kernel.Sort
    readonly after: Kernel.CursorPosition | undefined
  },
  mapping: ListSqlMapping,
  offset = 0
): { readonly where: string; readonly orderBy: string; readonly params: ReadonlyArray<unknown> } => {
  const filter = compileFilter(request.filter, mapping.columns, offset)
  const search = compileSearch(request.search, mapping.search, offset + filter.params.length)
  const keyset = compileKeyset(
    request.sort,
    request.after,
    mapping.columns,
    mapping.id,
    offset + filter.params.length + search.params.length
  )
  const parts = [filter.text, search.text, keyset.text].filter((t) => t !== "TRUE")
  return {
    where: parts.length === 0 ? "TRUE" : parts.join(" AND "),
    orderBy: keyset.orderBy,
    params: [...filter.params, ...search.params, ...keyset.params]
  }
}
