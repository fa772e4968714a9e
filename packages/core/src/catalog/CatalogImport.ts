/**
 * The pure part of catalog imports: which rows of one request clash with an earlier row of the same request, how
 * the store's outcomes become the `{imported, skipped}` answer, and the messages that explain a skipped row.
 * The first occurrence of a unique value wins; later rows with the same value are skipped.
 */
import type { InsertOutcome, UniqueField } from "./CatalogRepository.ts"
import type { ImportResult } from "./CatalogRequests.ts"

const fieldLabel: Readonly<Record<UniqueField, string>> = { slug: "slug", externalId: "externalId", email: "email" }

/** "a product with slug "mug" already exists" */
export const clashMessage = (resource: string, field: UniqueField, value: string): string =>
  `a ${resource} with ${fieldLabel[field]} ${JSON.stringify(value)} already exists in this organization`

export type BatchVerdict =
  | { readonly _tag: "Unique" }
  | { readonly _tag: "Duplicate"; readonly field: UniqueField; readonly value: string; readonly firstIndex: number }

/**
 * For each row, whether one of its unique values (null ones are ignored) already appeared in an earlier row.
 * A row that is skipped does not claim its values.
 */
export const batchDuplicates = <A>(
  rows: ReadonlyArray<A>,
  uniqueValues: (row: A) => ReadonlyArray<readonly [UniqueField, string | null]>
): ReadonlyArray<BatchVerdict> => {
  const seen = new Map<string, number>()
  return rows.map((row, index): BatchVerdict => {
    const values = uniqueValues(row).filter((v): v is readonly [UniqueField, string] => v[1] !== null)
    for (const [field, value] of values) {
      const first = seen.get(`${field}\u0000${value}`)
      if (first !== undefined) return { _tag: "Duplicate", field, value, firstIndex: first }
    }
    for (const [field, value] of values) seen.set(`${field}\u0000${value}`, index)
    return { _tag: "Unique" }
  })
}

export const duplicateMessage = (field: UniqueField, value: string, firstIndex: number): string =>
  `its ${fieldLabel[field]} ${JSON.stringify(value)} repeats row ${firstIndex} of this import`

export interface ImportRow<A> {
  readonly index: number
  readonly record: A
}

/**
 * Merges the rows skipped before storage (`early`) with the store's outcomes for the rows it was given, both in
 * row order.
 */
export const importResult = <A extends { readonly id: string }>(
  attempted: ReadonlyArray<ImportRow<A>>,
  outcomes: ReadonlyArray<InsertOutcome>,
  early: ReadonlyArray<{ readonly index: number; readonly message: string }>,
  clash: (record: A, field: UniqueField) => string
): ImportResult => {
  const imported: Array<{ index: number; id: string }> = []
  const skipped = [...early]
  attempted.forEach((row, i) => {
    const outcome = outcomes[i]
    if (outcome === undefined) throw new Error("the store answered fewer outcomes than rows")
    if (outcome._tag === "Inserted") imported.push({ index: row.index, id: row.record.id })
    else skipped.push({ index: row.index, message: clash(row.record, outcome.field) })
  })
  skipped.sort((a, b) => a.index - b.index)
  return { imported, skipped }
}
