/**
 * The in-memory interpreter of a FilterAst. It must select exactly the records that the SQL compiled by
 * `adapter-postgres/src/kernel/FilterSql.ts` selects; `adapter-postgres/test/FilterSql.test.ts` checks that on random
 * records and filters. The shared semantics are described in `Filter.ts`; the value comparisons below are the
 * JavaScript side of the SQL ones:
 * - strings: Unicode code point order, which is PostgreSQL's `COLLATE "C"` on a UTF-8 database (plain JS `<`
 *   compares UTF-16 code units and disagrees for characters above U+FFFF against U+E000..U+FFFF);
 * - timestamps: canonical `YYYY-MM-DDTHH:mm:ss.sssZ` strings, whose string order is their time order;
 * - numbers: doubles; booleans: false < true; uuids: lower-case strings, whose order is PostgreSQL's uuid order.
 */
import type { FieldRef, FieldType, FilterAst, FilterValue } from "./Filter.ts"

/**
 * Reads a field of the record being tested, by catalog path (`rating`, `product.title`). For a metadata prefix
 * (`metadata`, `product.metadata`) it returns the metadata object. A missing related record, or an absent value,
 * is `null` or `undefined`. Timestamps may be canonical strings or Dates.
 */
export type FieldAccessor = (fieldPath: string) => unknown

/** Compares two strings by Unicode code point, like `COLLATE "C"` in PostgreSQL. */
export const compareStrings = (a: string, b: string): number => {
  // UTF-16 order differs from code point order only where both differing units are U+D800 or above; a string with
  // none (timestamps, uuids, most text) is compared natively.
  if (!aboveSurrogateStart.test(a) || !aboveSurrogateStart.test(b)) return a < b ? -1 : a > b ? 1 : 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) {
      // Surrogates (U+D800..U+DFFF) encode code points above U+FFFF, so they must sort after U+E000..U+FFFF.
      return codePointRank(x) - codePointRank(y)
    }
  }
  return a.length - b.length
}

const aboveSurrogateStart = /[\ud800-\uffff]/

const codePointRank = (unit: number): number =>
  unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit

/** Compares two non-null values of the same field type; the caller guarantees both are of that type. */
export const compareValues = (a: FilterValue, b: FilterValue): number => {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b)
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b)
  throw new TypeError(`cannot compare ${typeof a} with ${typeof b}`)
}

const typeofField: Readonly<Record<FieldType, "string" | "number" | "boolean">> = {
  uuid: "string",
  boolean: "boolean",
  number: "number",
  timestamp: "string",
  string: "string"
}

/** The value of a field as the filter sees it: null when absent or of another type than the field's. */
const readField = (field: FieldRef, get: FieldAccessor): FilterValue | null => {
  if (field._tag === "MetadataKey") {
    const metadata = get(field.prefix)
    if (typeof metadata !== "object" || metadata === null || !Object.hasOwn(metadata, field.key)) return null
    const value = (metadata as Readonly<Record<string, unknown>>)[field.key]
    return typeof value === "string" ? value : null
  }
  return normalizeValue(field.type, get(field.path))
}

/** Brings a stored value into the form filter values take (lower-case uuids, canonical timestamps). */
export const normalizeValue = (type: FieldType, raw: unknown): FilterValue | null => {
  if (raw === null || raw === undefined) return null
  if (type === "timestamp" && raw instanceof Date) return raw.toISOString()
  if (typeof raw !== typeofField[type]) return null
  if (type === "uuid") return (raw as string).toLowerCase()
  return raw as FilterValue
}

const orderingHolds: Readonly<Record<"gt" | "gte" | "lt" | "lte", (c: number) => boolean>> = {
  gt: (c) => c > 0,
  gte: (c) => c >= 0,
  lt: (c) => c < 0,
  lte: (c) => c <= 0
}

const equals = (x: FilterValue | null, v: FilterValue): boolean => x !== null && compareValues(x, v) === 0

/** Whether the record read through `get` matches the filter. */
export const evaluateFilter = (ast: FilterAst, get: FieldAccessor): boolean => {
  switch (ast._tag) {
    case "And":
      return ast.clauses.every((c) => evaluateFilter(c, get))
    case "Or":
      return ast.clauses.some((c) => evaluateFilter(c, get))
    case "Exists":
      return (readField(ast.field, get) !== null) === ast.exists
    case "In": {
      const x = readField(ast.field, get)
      const found = ast.values.some((v) => equals(x, v))
      // $nin matches null, like $ne.
      return ast.negated ? !found : found
    }
    case "Compare": {
      const x = readField(ast.field, get)
      switch (ast.op) {
        case "eq":
          return equals(x, ast.value)
        case "ne":
          return !equals(x, ast.value)
        default:
          return x !== null && orderingHolds[ast.op](compareValues(x, ast.value))
      }
    }
  }
}
