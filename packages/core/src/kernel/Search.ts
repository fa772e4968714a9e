/**
 * The `search` parameter (docs/DECISIONS.md §4): a case-insensitive substring match over an endpoint's identifying fields,
 * combined with the filter by AND. A record matches when any of its non-null fields contains the term.
 *
 * "Case-insensitive" is defined here, not by the database: both back ends fold exactly the letters of
 * `foldFrom` (ASCII A-Z and the Latin-1 capitals À-Þ except ×) to their lower-case forms and then match
 * substrings exactly. PostgreSQL's `ILIKE`/`lower()` follow the database's LC_CTYPE, which differs between
 * installations (a `C` database folds only ASCII; PGlite's `C.UTF-8` folds all of Unicode), so the SQL side uses
 * `translate(expr, foldFrom, foldTo) LIKE pattern` instead, giving the same answer everywhere.
 * Limit: letters outside ASCII and Latin-1 (Greek, Cyrillic, Ÿ, Œ, ...) match only in the same case.
 */

/** The capitals folded by search, and their lower-case forms at the same positions. */
export const foldFrom = "ABCDEFGHIJKLMNOPQRSTUVWXYZÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞ"
export const foldTo = "abcdefghijklmnopqrstuvwxyzàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþ"

const foldPattern = /[A-Z\u00C0-\u00D6\u00D8-\u00DE]/g

/** The case folding of search, identical to SQL `translate(s, foldFrom, foldTo)`. */
export const foldCase = (s: string): string =>
  s.replace(foldPattern, (c) => String.fromCharCode(c.charCodeAt(0) + 0x20))

/** Escapes the LIKE wildcards `%` and `_` and the escape character `\` so the term matches literally. */
export const escapeLike = (term: string): string => term.replace(/[\\%_]/g, (c) => `\\${c}`)

/** The LIKE pattern (escape character `\`) that finds the folded term anywhere in a folded value. */
export const searchPattern = (term: string): string => `%${escapeLike(foldCase(term))}%`

/** Whether any of the values contains the term, ignoring case as defined above. An empty term matches all. */
export const matchesSearch = (term: string, values: ReadonlyArray<string | null | undefined>): boolean => {
  if (term === "") return true
  const needle = foldCase(term)
  return values.some((v) => v !== null && v !== undefined && foldCase(v).includes(needle))
}
