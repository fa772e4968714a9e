/**
 * Keyset pagination (DECISIONS §4): records are ordered by (sort value, id) and a cursor is the position of the
 * last record of a page, so inserts and deletes between pages never skip or repeat a record.
 *
 * Order, identical in memory (`compareKeyset`) and SQL (`FilterSql.compileKeyset`):
 * - by the sort value in the requested direction, then by id in the same direction;
 * - records whose sort value is null come LAST in both directions (`NULLS LAST`), so `-moderatedAt` lists the
 *   most recently moderated first and unmoderated ones after them. (PostgreSQL's default would put them first
 *   for descending sorts; the SQL side says `NULLS LAST` explicitly.)
 *
 * Token: base64url of the JSON `{v: 1, b, k, i, c}`: `k`/`i` are the position's sort value and id, `b` the
 * fingerprint of the binding (endpoint, sort, canonical filter, search) and `c` a checksum over the rest. A
 * cursor used with another sort, filter or search, and a token that was cut or edited, are 400s naming `cursor`.
 * The checksum is not a MAC: a client that forges a consistent token only gets a valid position, which it could
 * have asked for with a filter anyway; every decoded value is type-checked against the sort field.
 */
import { Result } from "effect"
import { InvalidRequest } from "./Errors.ts"
import { canonicalFilter, type FieldType, type FilterAst } from "./Filter.ts"
import { compareStrings, compareValues } from "./FilterEvaluate.ts"

export type SortDirection = "asc" | "desc"

/** A parsed `sort` parameter: `-rating` is `{field: "rating", direction: "desc", type: "number"}`. */
export interface Sort {
  readonly field: string
  readonly direction: SortDirection
  readonly type: FieldType
}

export type SortValue = string | number | boolean | null

/** The place of a record in a keyset order: its sort value (canonical form, see FilterEvaluate) and its id. */
export interface CursorPosition {
  readonly value: SortValue
  readonly id: string
}

/** What a cursor is valid for. The filter is compared in canonical form, the search term exactly. */
export interface CursorBinding {
  readonly endpoint: string
  readonly sort: Sort
  readonly filter: FilterAst
  readonly search: string | undefined
}

/** Orders two positions by the sort: value in the sort direction with nulls last, then id in the same direction. */
export const compareKeyset = (sort: Sort, a: CursorPosition, b: CursorPosition): number => {
  if (a.value === null && b.value !== null) return 1
  if (a.value !== null && b.value === null) return -1
  const sign = sort.direction === "asc" ? 1 : -1
  const byValue = a.value === null || b.value === null ? 0 : compareValues(a.value, b.value)
  return sign * (byValue !== 0 ? byValue : compareStrings(a.id, b.id))
}

/** Whether a record at `candidate` comes after the cursor `position`, i.e. belongs to a later page. */
export const isAfter = (sort: Sort, position: CursorPosition, candidate: CursorPosition): boolean =>
  compareKeyset(sort, candidate, position) > 0

// ---------------------------------------------------------------------------------------------------------------

/** cyrb53: a fast 53-bit string hash. Not cryptographic; it only tells bindings and intact tokens apart. */
const hash53 = (s: string, seed: number): string => {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)
}

const digest = (s: string): string => `${hash53(s, 1)}.${hash53(s, 2)}`

/** The fingerprint a cursor carries: equal exactly when endpoint, sort, filter meaning and search are equal. */
export const bindingFingerprint = (binding: CursorBinding): string =>
  digest(JSON.stringify([
    binding.endpoint,
    binding.sort.field,
    binding.sort.direction,
    canonicalFilter(binding.filter),
    binding.search ?? null
  ]))

const checksum = (fingerprint: string, value: SortValue, id: string): string =>
  digest(JSON.stringify([fingerprint, value, id]))

const toBase64Url = (text: string): string => {
  const bytes = new TextEncoder().encode(text)
  let binary = ""
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

const fromBase64Url = (token: string): string | undefined => {
  try {
    const binary = atob(token.replace(/-/g, "+").replace(/_/g, "/"))
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

export const encodeCursor = (position: CursorPosition, binding: CursorBinding): string => {
  const b = bindingFingerprint(binding)
  return toBase64Url(JSON.stringify({ v: 1, b, k: position.value, i: position.id, c: checksum(b, position.value, position.id) }))
}

const maxTokenLength = 1_024
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const canonicalTimestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Whether a decoded sort value has the shape the sort field's values have (so SQL casts cannot fail). */
const sortValueFits: Readonly<Record<FieldType, (v: unknown) => boolean>> = {
  uuid: (v) => typeof v === "string" && uuidPattern.test(v),
  boolean: (v) => typeof v === "boolean",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  timestamp: (v) => typeof v === "string" && canonicalTimestampPattern.test(v) && !Number.isNaN(Date.parse(v)),
  string: (v) => typeof v === "string" && !v.includes("\u0000")
}

const malformed = () =>
  Result.fail(InvalidRequest.single("cursor", "is not a cursor this API issued; pass `nextCursor` from the previous page unchanged"))

/** Decodes a token issued by `encodeCursor` for the same binding, or fails with a 400 naming `cursor`. */
export const decodeCursor = (token: string, binding: CursorBinding): Result.Result<CursorPosition, InvalidRequest> => {
  if (token.length > maxTokenLength || !/^[A-Za-z0-9_-]+$/.test(token)) return malformed()
  const text = fromBase64Url(token)
  if (text === undefined) return malformed()
  let payload: unknown
  try {
    payload = JSON.parse(text)
  } catch {
    return malformed()
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return malformed()
  const { v, b, k, i, c } = payload as Record<string, unknown>
  if (v !== 1 || typeof b !== "string" || typeof i !== "string" || typeof c !== "string") return malformed()
  if (k !== null && typeof k !== "string" && typeof k !== "number" && typeof k !== "boolean") return malformed()
  if (c !== checksum(b, k, i)) return malformed()
  if (b !== bindingFingerprint(binding)) {
    return Result.fail(InvalidRequest.single(
      "cursor",
      "was issued for a different sort, filter or search; repeat the original query or start again without a cursor"
    ))
  }
  if (!uuidPattern.test(i) || (k !== null && !sortValueFits[binding.sort.type](k))) return malformed()
  return Result.succeed({ value: k, id: i.toLowerCase() })
}
