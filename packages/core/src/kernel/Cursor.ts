/**
 * Keyset pagination (docs/DECISIONS.md §4): records are ordered by (sort value, id) and a cursor is the position of the
 * last record of a page, so inserts and deletes between pages never skip or repeat a record.
 *
 * Order, identical in memory (`compareKeyset`) and SQL (`FilterSql.compileKeyset`):
 * - by the sort value in the requested direction, then by id in the same direction;
 * - records whose sort value is null come LAST in both directions (`NULLS LAST`), so `-moderatedAt` lists the
 *   most recently moderated first and unmoderated ones after them. (PostgreSQL's default would put them first
 *   for descending sorts; the SQL side says `NULLS LAST` explicitly.)
 *
 * Token (docs/SECURITY.md): base64url of a 128-bit tag followed by the JSON `{v: 2, b, k, i}`: `k`/`i` are the
 * position's sort value and id, `b` the keyed fingerprint of the binding (organization, list, sort, canonical
 * filter, search). The tag is the store's `CursorKey` MAC over the JSON, so a cursor this API did not issue (forged,
 * edited, cut, or sealed with the old public checksum) is a 400 naming `cursor` before any of it is read, and one
 * issued for another organization, list, sort, filter or search is a 400 saying so. Every decoded value is still
 * type-checked against the sort field (defence in depth: a leaked key must not reach SQL casts either).
 */
import { Result } from "effect"
import { type CursorKey, cursorTagBytes, verifyCursorTag } from "./CursorKey.ts"
import { InvalidRequest } from "./Errors.ts"
import { canonicalFilter, type FieldType, type FilterAst } from "./Filter.ts"
import { compareStrings, compareValues } from "./FilterEvaluate.ts"
import { isUuid } from "./Ids.ts"
import { textProblem } from "./Text.ts"
import { isCanonical } from "./Timestamp.ts"

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

/** Whom a cursor is issued to and the key that seals it: a cursor works only in the organization it was issued in. */
export interface CursorIssuer {
  readonly key: CursorKey["Service"]
  readonly organizationId: string
}

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Fingerprints already computed, per key, by the binding's text: a client paging through a list asks for the same
 * binding again and again, and each page's cursor needed a MAC of it (two of them when a cursor is read and the
 * next one issued). Bounded: emptied when full. A different key never sees another key's entries.
 */
const fingerprints = new WeakMap<CursorKey["Service"], Map<string, string>>()
const maxKeptFingerprints = 1_000

/** The fingerprint a cursor carries: equal exactly when organization, list, sort, filter meaning and search are. */
const bindingFingerprint = (binding: CursorBinding, issuer: CursorIssuer): string => {
  const text = JSON.stringify([
    "binding",
    issuer.organizationId.toLowerCase(),
    binding.endpoint,
    binding.sort.field,
    binding.sort.direction,
    canonicalFilter(binding.filter),
    binding.search ?? null
  ])
  let kept = fingerprints.get(issuer.key)
  if (kept === undefined) fingerprints.set(issuer.key, kept = new Map())
  let fingerprint = kept.get(text)
  if (fingerprint === undefined) {
    fingerprint = Buffer.from(issuer.key.tag(utf8.encode(text))).toString("base64url")
    if (kept.size >= maxKeptFingerprints) kept.clear()
    kept.set(text, fingerprint)
  }
  return fingerprint
}

export const encodeCursor = (position: CursorPosition, binding: CursorBinding, issuer: CursorIssuer): string => {
  const payload = utf8.encode(
    JSON.stringify({ v: 2, b: bindingFingerprint(binding, issuer), k: position.value, i: position.id })
  )
  return Buffer.concat([issuer.key.tag(payload), payload]).toString("base64url")
}

const maxTokenLength = 1_024

/**
 * A real instant in canonical form that both JS and PostgreSQL hold, by the strict check (`Timestamp.isCanonical`, the
 * same answer as `Timestamp.parse(v) === v`): it rejects 2026-02-30 and 24:00, and the year range rejects 0000
 * (PostgreSQL has no year 0; JS would take it as 1 BC).
 */
export const isCanonicalInstant = (v: string): boolean => isCanonical(v)

/** Whether a decoded sort value has the shape the sort field's values have (so SQL casts cannot fail). */
const sortValueFits: Readonly<Record<FieldType, (v: unknown) => boolean>> = {
  uuid: (v) => typeof v === "string" && isUuid(v),
  boolean: (v) => typeof v === "boolean",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  timestamp: (v) => typeof v === "string" && isCanonicalInstant(v),
  string: (v) => typeof v === "string" && textProblem(v) === undefined
}

const malformed = () =>
  Result.fail(
    InvalidRequest.single(
      "cursor",
      "is not a cursor this API issued; pass `nextCursor` from the previous page unchanged"
    )
  )

/** Decodes a token issued by `encodeCursor` for the same binding and issuer, or fails with a 400 naming `cursor`. */
export const decodeCursor = (
  token: string,
  binding: CursorBinding,
  issuer: CursorIssuer
): Result.Result<CursorPosition, InvalidRequest> => {
  if (token.length > maxTokenLength || !/^[A-Za-z0-9_-]+$/.test(token)) return malformed()
  const bytes = Buffer.from(token, "base64url")
  // Buffer's decoder skips what it cannot read; a token that does not re-encode to itself was altered.
  if (bytes.length <= cursorTagBytes || bytes.toString("base64url") !== token) return malformed()
  const payload = bytes.subarray(cursorTagBytes)
  if (!verifyCursorTag(issuer.key, payload, bytes.subarray(0, cursorTagBytes))) return malformed()
  let decoded: unknown
  try {
    decoded = JSON.parse(strictUtf8.decode(payload))
  } catch {
    return malformed()
  }
  if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded)) return malformed()
  const { v, b, k, i } = decoded as Record<string, unknown>
  if (v !== 2 || typeof b !== "string" || typeof i !== "string") return malformed()
  if (b !== bindingFingerprint(binding, issuer)) {
    return Result.fail(InvalidRequest.single(
      "cursor",
      "was issued for a different list, sort, filter or search; repeat the original query or start again without a cursor"
    ))
  }
  if (!isUuid(i)) return malformed()
  if (k !== null && !sortValueFits[binding.sort.type](k)) return malformed()
  return Result.succeed({ value: k as SortValue, id: i.toLowerCase() })
}
