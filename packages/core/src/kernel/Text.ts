/**
 * Text that is stored: one definition for every field a store keeps (record fields, names, secrets, metadata keys
 * and values). PostgreSQL `text`/`jsonb` cannot hold NUL, and a lone surrogate would be silently replaced when
 * encoded to UTF-8 (so memory and PostgreSQL would keep different text): both are a 400 here, never a 500 or a silent
 * change later. See `docs/SECURITY.md` for the hostile-input rules.
 *
 * Every check is a single linear scan, and length checks abort: nothing runs on a value once it is known too long.
 */
import { Schema } from "effect"

/** Why `s` cannot be stored as text, or undefined. One pass over the UTF-16 code units, no regex. */
export const textProblem = (s: string): string | undefined => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0) return "must not contain the NUL character"
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0
      // A high surrogate followed by a low one is a pair; anything else is a lone surrogate.
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++
      else return "must be well-formed Unicode (it contains a lone surrogate)"
    }
  }
  return undefined
}

/** True when `s` can be stored as text. */
export const isStorable = (s: string): boolean => textProblem(s) === undefined

/** Characters as a reader counts them: Unicode code points, so an emoji is one character. */
export const characterCount = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

const storable = Schema.makeFilter((s: string) => textProblem(s), {
  expected: "text without NUL characters or lone surrogates"
})

/** Text that both stores keep exactly as sent: no NUL character, no lone surrogate. */
export const StoredText = Schema.String.check(storable)

/**
 * Stored text of `min..max` UTF-16 code units. The length check runs first and aborts, so an over-long value is
 * never scanned.
 */
export const BoundedText = (max: number, min = 0) =>
  Schema.String.check(
    (min === 0 ? Schema.isMaxLength(max) : Schema.isBetweenLength(min, max)).abort(),
    storable
  )

/** Stored text with at least one non-blank character and at most `max` characters. */
export const RequiredText = (max: number) =>
  BoundedText(max).check(Schema.makeFilter((s: string) => s.trim() === "" ? "must not be empty" : undefined, {
    // JavaScript's `trim` and the pattern's `\S` agree on what is blank, so the document states the rule exactly.
    toJsonSchema: () => ({ minLength: 1, pattern: "\\S" })
  }))
