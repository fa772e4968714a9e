/**
 * The filter language of the list endpoints (docs/DECISIONS.md §4), parsed once into a typed AST that both back ends
 * interpret: `FilterEvaluate.ts` in memory and `adapter-postgres/src/kernel/FilterSql.ts` as parameterised SQL.
 *
 * Grammar: a filter document is a JSON object whose keys are field paths of the endpoint's catalog,
 * `metadata.<key>`-style paths under a catalog's metadata prefixes, or `$and` / `$or` (non-empty arrays of
 * non-empty documents). A field's value is a literal (equality) or an object of operators
 * `$eq $ne $gt $gte $lt $lte $in $nin $exists`; several keys or operators in one object are ANDed.
 *
 * Semantics shared by both back ends (a field whose record or key is missing is null):
 * - `null` is accepted only as a literal or with `$eq` / `$ne`: `{f: null}` and `{f: {$eq: null}}` mean
 *   "f is null" (`$exists: false`), `{f: {$ne: null}}` means "f is not null" (`$exists: true`). The parser
 *   rewrites them into `Exists`, so the AST never carries null values.
 * - `$eq`, `$in` and the ordering operators never match null; `$ne` and `$nin` do match null (as in MongoDB:
 *   "rating is not 5" includes reviews without a rating). SQL compiles `$ne` as `IS DISTINCT FROM`.
 * - Ordering operators apply to numbers, timestamps and strings only; on booleans and uuids they are a 400.
 * - Strings compare by Unicode code point (PostgreSQL `COLLATE "C"` on UTF-8), timestamps as instants (which is
 *   the same as comparing their canonical strings), numbers as IEEE doubles.
 *
 * `parseFilter` returns a `Result` (plain data, no Effect needed): the caller decides whether to lift it with
 * `Effect.fromResult` or to collect it with other parameter errors (see `ListQuery.ts`).
 */
import { Result } from "effect"
import { InvalidRequest, type RequestIssue } from "./Errors.ts"
import { isUuid } from "./Ids.ts"
import { textProblem } from "./Text.ts"
import * as Timestamp from "./Timestamp.ts"

// ---------------------------------------------------------------------------------------------------------------
// Field catalogs

export type FieldType = "uuid" | "boolean" | "number" | "timestamp" | "string"

/** The filterable fields of one endpoint, and the prefixes under which any metadata key may be filtered. */
export interface FieldCatalog {
  readonly fields: ReadonlyMap<string, FieldType>
  /** e.g. `metadata`, `product.metadata`: `<prefix>.<key>` is a string-valued field for any key. */
  readonly metadataPrefixes: ReadonlyArray<string>
}

export const makeFieldCatalog = (
  fields: Readonly<Record<string, FieldType>>,
  metadataPrefixes: ReadonlyArray<string> = []
): FieldCatalog => ({ fields: new Map(Object.entries(fields)), metadataPrefixes: [...metadataPrefixes] })

/** `prefixFields("product", {id: "uuid"})` is `{"product.id": "uuid"}`: the fields of an embedded record. */
export const prefixFields = (
  prefix: string,
  fields: Readonly<Record<string, FieldType>>
): Record<string, FieldType> =>
  Object.fromEntries(Object.entries(fields).map(([path, type]) => [`${prefix}.${path}`, type]))

// ---------------------------------------------------------------------------------------------------------------
// AST

/** A value after type checking: uuids lower-cased, timestamps canonical (`YYYY-MM-DDTHH:mm:ss.sssZ`). */
export type FilterValue = string | number | boolean

export type FieldRef =
  /** A catalog field such as `rating` or `product.title`. */
  | { readonly _tag: "Field"; readonly path: string; readonly type: FieldType }
  /** `<prefix>.<key>`: the string value of `key` in the metadata object at `prefix` (null when absent). */
  | { readonly _tag: "MetadataKey"; readonly prefix: string; readonly key: string; readonly type: "string" }

export type ComparisonOperator = "eq" | "ne" | "gt" | "gte" | "lt" | "lte"

export type FilterAst =
  | { readonly _tag: "And"; readonly clauses: ReadonlyArray<FilterAst> }
  | { readonly _tag: "Or"; readonly clauses: ReadonlyArray<FilterAst> }
  | { readonly _tag: "Compare"; readonly field: FieldRef; readonly op: ComparisonOperator; readonly value: FilterValue }
  | {
    readonly _tag: "In"
    readonly field: FieldRef
    readonly negated: boolean
    readonly values: ReadonlyArray<FilterValue>
  }
  | { readonly _tag: "Exists"; readonly field: FieldRef; readonly exists: boolean }

/** The filter that matches every record (an omitted or empty `filter`). */
export const matchAll: FilterAst = { _tag: "And", clauses: [] }

/** The dotted path a FieldRef was written as, e.g. `product.metadata.color`. */
export const fieldRefPath = (ref: FieldRef): string => ref._tag === "Field" ? ref.path : `${ref.prefix}.${ref.key}`

/**
 * A deterministic rendering of the filter's meaning, insensitive to the order of keys, `$and`/`$or` members and
 * `$in` values. Cursors are bound to it, so `{"a":1,"b":2}` and `{"b":2,"a":1}` share cursors.
 */
export const canonicalFilter = (ast: FilterAst): string => JSON.stringify(canonicalForm(ast))

const canonicalForm = (ast: FilterAst): unknown => {
  switch (ast._tag) {
    case "And":
    case "Or": {
      const parts = ast.clauses.map((c) => JSON.stringify(canonicalForm(c)))
      return [ast._tag, ...[...new Set(parts)].sort()]
    }
    case "Compare":
      return ["Compare", fieldRefPath(ast.field), ast.op, ast.value]
    case "In": {
      const values = [...new Set(ast.values.map((v) => JSON.stringify(v)))].sort()
      return [ast.negated ? "Nin" : "In", fieldRefPath(ast.field), values]
    }
    case "Exists":
      return ["Exists", fieldRefPath(ast.field), ast.exists]
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

export const filterLimits = {
  /** Field conditions in the whole document (each operator of an operator object counts once). */
  maxClauses: 64,
  /** Values in one `$in` / `$nin`. */
  maxInValues: 250,
  /** Nested documents, the top-level one being depth 1. */
  maxDepth: 8,
  /** Characters of the JSON text, checked before parsing. */
  maxLength: 100_000,
  /** Characters of one string value. */
  maxStringLength: 2_048,
  /** Characters of one metadata key. */
  maxMetadataKeyLength: 256,
  /** Issues reported before giving up. */
  maxIssues: 20
} as const

const operatorNames = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"] as const
type OperatorName = (typeof operatorNames)[number]

const comparisonOf: Readonly<Record<"$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte", ComparisonOperator>> = {
  $eq: "eq",
  $ne: "ne",
  $gt: "gt",
  $gte: "gte",
  $lt: "lt",
  $lte: "lte"
}

/** Which field types accept the ordering operators. */
const orderable: Readonly<Record<FieldType, boolean>> = {
  uuid: false,
  boolean: false,
  number: true,
  timestamp: true,
  string: true
}

const typeDescription: Readonly<Record<FieldType, string>> = {
  uuid: "a UUID such as 5f0c3a1e-8b9d-4c2a-9e8f-1a2b3c4d5e6f",
  boolean: "true or false",
  number: "a finite number",
  timestamp: "an ISO 8601 date-time with a time zone, such as 2026-01-31T12:00:00Z",
  string: "a string"
}

/**
 * Any ISO 8601 date-time with an offset, normalised to the canonical Timestamp, or undefined (an impossible date
 * such as `02-30` or `24:00` is refused, not rolled over). The one parser of `Timestamp.ts`.
 */
export const parseTimestampValue = (s: string): Timestamp.Timestamp | undefined => Timestamp.parse(s)

/** Checks a string that will travel to PostgreSQL as text: no NUL (text cannot hold it), no lone surrogates. */
const stringProblem = (s: string, maxLength: number): string | undefined =>
  s.length > maxLength ? `is longer than ${maxLength} characters` : textProblem(s)

const isPlainObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

interface ParseState {
  readonly catalog: FieldCatalog
  readonly issues: Array<RequestIssue>
  clauses: number
  /** Set when continuing would only waste work (too many clauses or issues). */
  stopped: boolean
}

const report = (state: ParseState, path: string, message: string): undefined => {
  if (state.issues.length < filterLimits.maxIssues) state.issues.push({ path, message })
  if (state.issues.length >= filterLimits.maxIssues) state.stopped = true
  return undefined
}

const and = (clauses: ReadonlyArray<FilterAst>): FilterAst => {
  const flat = clauses.flatMap((c) => c._tag === "And" ? c.clauses : [c])
  return flat.length === 1 ? flat[0]! : { _tag: "And", clauses: flat }
}

const or = (clauses: ReadonlyArray<FilterAst>): FilterAst => {
  const flat = clauses.flatMap((c) => c._tag === "Or" ? c.clauses : [c])
  return flat.length === 1 ? flat[0]! : { _tag: "Or", clauses: flat }
}

const resolveField = (state: ParseState, key: string, path: string): FieldRef | undefined => {
  const type = state.catalog.fields.get(key)
  if (type !== undefined) return { _tag: "Field", path: key, type }
  for (const prefix of state.catalog.metadataPrefixes) {
    if (key === prefix) {
      return report(state, path, `filter on one metadata key at a time with "${prefix}.<key>"`)
    }
    if (key.startsWith(`${prefix}.`)) {
      const metadataKey = key.slice(prefix.length + 1)
      if (metadataKey === "") return report(state, path, `name a metadata key after "${prefix}."`)
      const problem = stringProblem(metadataKey, filterLimits.maxMetadataKeyLength)
      if (problem !== undefined) return report(state, path, `the metadata key ${problem}`)
      return { _tag: "MetadataKey", prefix, key: metadataKey, type: "string" }
    }
  }
  const known = [...state.catalog.fields.keys(), ...state.catalog.metadataPrefixes.map((p) => `${p}.<key>`)]
  return report(state, path, `is not a filterable field; use one of ${known.join(", ")}`)
}

const checkValue = (state: ParseState, type: FieldType, value: unknown, path: string): FilterValue | undefined => {
  const wrongType = () => report(state, path, `must be ${typeDescription[type]}`)
  switch (type) {
    case "uuid":
      return typeof value === "string" && isUuid(value) ? value.toLowerCase() : wrongType()
    case "boolean":
      return typeof value === "boolean" ? value : wrongType()
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? value : wrongType()
    case "timestamp": {
      const t = typeof value === "string" ? parseTimestampValue(value) : undefined
      return t ?? wrongType()
    }
    case "string": {
      if (typeof value !== "string") return wrongType()
      const problem = stringProblem(value, filterLimits.maxStringLength)
      return problem === undefined ? value : report(state, path, problem)
    }
  }
}

const countClause = (state: ParseState): boolean => {
  state.clauses++
  if (state.clauses > filterLimits.maxClauses) {
    report(
      state,
      "filter",
      `has more than ${filterLimits.maxClauses} conditions; split the request or simplify the filter`
    )
    state.stopped = true
    return false
  }
  return true
}

const parseOperator = (
  state: ParseState,
  field: FieldRef,
  op: OperatorName,
  operand: unknown,
  path: string
): FilterAst | undefined => {
  if (!countClause(state)) return undefined
  switch (op) {
    case "$exists":
      return typeof operand === "boolean"
        ? { _tag: "Exists", field, exists: operand }
        : report(state, path, "must be true or false")
    case "$in":
    case "$nin": {
      if (!Array.isArray(operand)) return report(state, path, "must be an array of values")
      if (operand.length > filterLimits.maxInValues) {
        return report(state, path, `has ${operand.length} values; at most ${filterLimits.maxInValues} are allowed`)
      }
      const values: Array<FilterValue> = []
      let ok = true
      operand.forEach((element: unknown, i) => {
        if (state.stopped) return
        const elementPath = `${path}[${i}]`
        if (element === null) {
          ok = false
          report(state, elementPath, "null cannot be listed; combine with {\"$exists\": false} to match missing values")
          return
        }
        const v = checkValue(state, field.type, element, elementPath)
        if (v === undefined) ok = false
        else values.push(v)
      })
      return ok ? { _tag: "In", field, negated: op === "$nin", values } : undefined
    }
    default: {
      const comparison = comparisonOf[op]
      if (operand === null) {
        if (comparison === "eq") return { _tag: "Exists", field, exists: false }
        if (comparison === "ne") return { _tag: "Exists", field, exists: true }
        return report(state, path, "null cannot be ordered; use $exists to test for a missing value")
      }
      if (comparison !== "eq" && comparison !== "ne" && !orderable[field.type]) {
        return report(state, path, `ordering operators do not apply to ${field.type} fields; use $eq, $ne or $in`)
      }
      const value = checkValue(state, field.type, operand, path)
      return value === undefined ? undefined : { _tag: "Compare", field, op: comparison, value }
    }
  }
}

const parseCondition = (state: ParseState, field: FieldRef, value: unknown, path: string): FilterAst | undefined => {
  if (Array.isArray(value)) {
    return report(state, path, "an array is not a value; use {\"$in\": [...]} to match any of several values")
  }
  if (!isPlainObject(value)) return parseOperator(state, field, "$eq", value, path)
  const entries = Object.entries(value)
  if (entries.length === 0) return report(state, path, `needs at least one operator (${operatorNames.join(", ")})`)
  const clauses: Array<FilterAst> = []
  let ok = true
  for (const [op, operand] of entries) {
    if (state.stopped) return undefined
    const opPath = `${path}.${op}`
    if (!(operatorNames as ReadonlyArray<string>).includes(op)) {
      ok = false
      report(state, opPath, `is not an operator; use one of ${operatorNames.join(", ")}`)
      continue
    }
    const clause = parseOperator(state, field, op as OperatorName, operand, opPath)
    if (clause === undefined) ok = false
    else clauses.push(clause)
  }
  return ok ? and(clauses) : undefined
}

const parseDocument = (
  state: ParseState,
  doc: unknown,
  path: string,
  depth: number,
  allowEmpty: boolean
): FilterAst | undefined => {
  if (!isPlainObject(doc)) return report(state, path, "must be a JSON object of conditions")
  if (depth > filterLimits.maxDepth) {
    return report(state, path, `nests $and/$or deeper than ${filterLimits.maxDepth} levels`)
  }
  const entries = Object.entries(doc)
  if (entries.length === 0 && !allowEmpty) return report(state, path, "must have at least one condition")
  const clauses: Array<FilterAst> = []
  let ok = true
  for (const [key, value] of entries) {
    if (state.stopped) return undefined
    const keyPath = `${path}.${key}`
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(value) || value.length === 0) {
        ok = false
        report(state, keyPath, "must be a non-empty array of filter documents")
        continue
      }
      const members: Array<FilterAst> = []
      for (let i = 0; i < value.length && !state.stopped; i++) {
        const member = parseDocument(state, value[i], `${keyPath}[${i}]`, depth + 1, false)
        if (member === undefined) ok = false
        else members.push(member)
      }
      if (ok) clauses.push(key === "$and" ? and(members) : or(members))
      continue
    }
    if (key.startsWith("$")) {
      ok = false
      report(state, keyPath, "is not a logical operator; use $and or $or, or put field operators under a field")
      continue
    }
    const field = resolveField(state, key, keyPath)
    if (field === undefined) {
      ok = false
      continue
    }
    const clause = parseCondition(state, field, value, keyPath)
    if (clause === undefined) ok = false
    else clauses.push(clause)
  }
  return ok ? and(clauses) : undefined
}

/**
 * Parses an already decoded filter document (e.g. from a JSON body). `path` prefixes every issue path.
 */
export const parseFilterDocument = (
  doc: unknown,
  catalog: FieldCatalog,
  path = "filter"
): Result.Result<FilterAst, InvalidRequest> => {
  const state: ParseState = { catalog, issues: [], clauses: 0, stopped: false }
  const ast = parseDocument(state, doc, path, 1, true)
  return ast === undefined || state.issues.length > 0
    ? Result.fail(InvalidRequest.of(state.issues.length > 0 ? state.issues : [{ path, message: "is invalid" }]))
    : Result.succeed(ast)
}

/**
 * Parses the `filter` query parameter. An omitted or blank parameter, and `{}`, give `matchAll`.
 * Every problem is reported with its path (`filter.rating.$gte`, `filter.$or[1].published`).
 */
export const parseFilter = (
  json: string | undefined,
  catalog: FieldCatalog
): Result.Result<FilterAst, InvalidRequest> => {
  if (json === undefined || json.trim() === "") return Result.succeed(matchAll)
  if (json.length > filterLimits.maxLength) {
    return Result.fail(InvalidRequest.single("filter", `is longer than ${filterLimits.maxLength} characters`))
  }
  let doc: unknown
  try {
    doc = JSON.parse(json)
  } catch {
    return Result.fail(
      InvalidRequest.single("filter", "is not valid JSON; send a JSON object such as {\"rating\":{\"$gte\":4}}")
    )
  }
  return parseFilterDocument(doc, catalog)
}
