/**
 * PostgreSQL array literals, for set-based statements that pass one array parameter per column (`unnest`): the
 * server parses them faster than a JSON array of objects (docs/DECISIONS.md §36, §41). Every element that is not a
 * bare number or boolean is quoted, so no value can split into two elements and shift one column against the others.
 */

/** Text as a quoted element (`"` and `\` escaped). */
export const quotedElement = (text: string): string =>
  text.includes("\"") || text.includes("\\") ? `"${text.replace(/["\\]/g, "\\$&")}"` : `"${text}"`

/** An array literal of `length` elements, `elementAt(i)` each; `null` is SQL NULL. */
export const arrayLiteral = (length: number, elementAt: (i: number) => string | null): string => {
  const elements = new Array<string>(length)
  for (let i = 0; i < length; i++) elements[i] = elementAt(i) ?? "NULL"
  return `{${elements.join(",")}}`
}

/** An array literal of text, each element quoted. */
export const textArrayLiteral = (xs: ReadonlyArray<string | null>): string =>
  arrayLiteral(xs.length, (i) => {
    const x = xs[i]!
    return x === null ? null : quotedElement(x)
  })

/** An array literal of numbers, bare. */
export const numberArrayLiteral = (xs: ReadonlyArray<number | null>): string =>
  arrayLiteral(xs.length, (i) => {
    const x = xs[i]!
    return x === null ? null : String(x)
  })
