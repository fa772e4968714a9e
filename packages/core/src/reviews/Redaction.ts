/**
 * Redaction of a review's `title` / `body` (docs/DECISIONS.md §5): the only edit allowed to customer text is replacing
 * one or more non-empty spans by the marker `[redacted]`. This module decides whether a proposed text is such an
 * edit of the current text, in time linear in the size of both.
 *
 * Definition. `proposed` is a redaction of `current` when `proposed !== current` and there are k ≥ 1 disjoint,
 * non-empty spans S1..Sk of `current` such that `current = L0 S1 L1 … Sk Lk` and
 * `proposed = L0 M L1 … M Lk` (M = `[redacted]`). A span may cover earlier markers (or be one), and adjacent spans
 * may be written as one marker or as several (`[redacted][redacted]`): one bigger span is the same edit.
 *
 * Algorithm. Cut `proposed` at EVERY occurrence of M into marker-free chunks T0 M T1 … M Tm (m ≥ 1) and match the
 * pattern `T0 .+ T1 .+ … .+ Tm` against the whole of `current` (each `.+` is one or more UTF-16 code units).
 *
 * Why cutting at every occurrence is right, although some occurrences in `proposed` may be markers that were
 * already in `current` and were kept as they are (a literal part of some Li, not a new span):
 *  - M has no border (its only `[` is its first character), so two occurrences of M never overlap; every new
 *    marker of a decomposition is one occurrence, and every other occurrence lies wholly inside some Li, where it
 *    stands for the literal text `[redacted]` of `current`.
 *  - Such a kept marker can be reread as a new span that covers exactly the old marker: `.+` matches the 10
 *    characters `[redacted]` just as the literal does. So if any decomposition exists, the one that treats every
 *    occurrence as a new span exists too; conversely that one is itself a decomposition. Because
 *    `proposed !== current`, at least one of its spans is not the old marker itself, so the edit does something.
 *  - Each `.+` must cover at least one character, so `a[redacted]b` is not a redaction of `ab` (an empty span
 *    would let anyone insert markers anywhere).
 *
 * Why greedy leftmost matching decides the pattern: T0 must be a prefix and Tm a suffix. For the middle chunks,
 * let `end` be where the previous chunk ended; Ti may start at any q ≥ end + 1. Taking the leftmost such q gives
 * the smallest new `end`, and a smaller `end` only widens the set of positions allowed to every later chunk
 * (their constraints are all of the form "start ≥ previous end + 1"). So if any placement of the chunks works,
 * the greedy one works (exchange argument, by induction over i); if greedy fails, none works.
 *
 * Why it is linear: the text is scanned left to right once. Each middle chunk is found with KMP starting at
 * `end + 1`; KMP reads `current` only from its start position up to the end of the match it returns (or to the
 * end of `current` when there is none, which ends the check), and the next search starts after that match, so
 * the scans never overlap: O(|current|) in total, plus O(|Ti|) to build each failure table, O(|proposed|) in total.
 * `String.prototype.indexOf` is not used for chunks because V8 gives no linear worst-case bound for it (its
 * Boyer–Moore–Horspool path is O(n·m) on adversarial input). Finding M itself in `proposed` is O(10·n) whatever
 * search is used, as M has a constant length.
 *
 * Characters: matching is on UTF-16 code units, so a span could start or end inside a surrogate pair (half an
 * emoji). A span boundary is always next to a marker of `proposed`, so such a cut shows up in `proposed` as a high
 * surrogate right before a marker or a low surrogate right after one; those are rejected. Unpaired surrogates
 * elsewhere are left alone (they can only be copies of ones already in `current`).
 */
import { Result } from "effect"

export const REDACTION_MARKER = "[redacted]"

/** What an accepted `proposed` text does: nothing (it equals the current text), or redacts one or more spans. */
export type RedactionOutcome = "Unchanged" | "Redacted"

/** Success: what the edit does. Failure: a one-sentence reason, fit for the `message` of a 400. */
export type RedactionCheck = Result.Result<RedactionOutcome, string>

const M = REDACTION_MARKER
const ML = M.length

export const RedactionReasons = {
  nullToText: "The field is empty (null), so there is nothing to redact; send null or leave the field out.",
  textToNull:
    `The text cannot be removed, only redacted: send the current text with the parts to hide replaced by ${M}.`,
  noMarker: `The text can only be changed by replacing parts of it with ${M}, and the new text contains no ${M}.`,
  splitsCharacter: `A ${M} marker in the new text starts or ends in the middle of a character (half a surrogate pair).`,
  mismatch:
    `The new text must equal the current text with one or more non-empty parts replaced by ${M}; anything else is a change that is not allowed.`
} as const

export const checkRedaction = (current: string | null, proposed: string | null): RedactionCheck => {
  if (current === null) {
    return proposed === null ? Result.succeed("Unchanged") : Result.fail(RedactionReasons.nullToText)
  }
  if (proposed === null) return Result.fail(RedactionReasons.textToNull)
  if (proposed === current) return Result.succeed("Unchanged")
  if (!proposed.includes(M)) return Result.fail(RedactionReasons.noMarker)
  if (!matchesRedaction(current, proposed)) return Result.fail(RedactionReasons.mismatch)
  return cutsSurrogatePair(proposed) ? Result.fail(RedactionReasons.splitsCharacter) : Result.succeed("Redacted")
}

/** The chunk search plus prefix/suffix checks; assumes `proposed !== current`. See the module comment. */
const matchesRedaction = (current: string, proposed: string): boolean => {
  let markerAt = proposed.indexOf(M)
  if (markerAt < 0) return false
  // T0: a prefix of current.
  if (!rangeEqualsAt(proposed, 0, markerAt, current, 0)) return false
  let end = markerAt
  let chunkStart = markerAt + ML
  for (;;) {
    markerAt = proposed.indexOf(M, chunkStart)
    if (markerAt < 0) break
    // A middle chunk Ti = proposed[chunkStart, markerAt), leftmost at or after end + 1.
    const q = kmpFind(current, end + 1, proposed, chunkStart, markerAt)
    if (q < 0) return false
    end = q + (markerAt - chunkStart)
    chunkStart = markerAt + ML
  }
  // Tm: a suffix of current that leaves at least one character for the last marker.
  const lastLength = proposed.length - chunkStart
  const lastStart = current.length - lastLength
  return lastStart >= end + 1 && rangeEqualsAt(proposed, chunkStart, proposed.length, current, lastStart)
}

/** Whether `pattern[from, to)` equals `text[at, at + to - from)`. */
const rangeEqualsAt = (pattern: string, from: number, to: number, text: string, at: number): boolean => {
  if (at < 0 || at + (to - from) > text.length) return false
  for (let i = from, j = at; i < to; i++, j++) {
    if (pattern.charCodeAt(i) !== text.charCodeAt(j)) return false
  }
  return true
}

/**
 * Knuth–Morris–Pratt: the first index q ≥ `start` with `text[q, q + len) = pattern[from, to)`, or -1.
 * Reads `text` only in [start, q + len) (or [start, text.length) on a miss) and never steps back in it.
 */
const kmpFind = (text: string, start: number, pattern: string, from: number, to: number): number => {
  const len = to - from
  if (len === 0) return start <= text.length ? start : -1
  if (start + len > text.length) return -1
  // failure[i] = length of the longest proper border of pattern[from, from + i + 1).
  const failure = new Int32Array(len)
  for (let i = 1, k = 0; i < len; i++) {
    const c = pattern.charCodeAt(from + i)
    while (k > 0 && pattern.charCodeAt(from + k) !== c) k = failure[k - 1]!
    if (pattern.charCodeAt(from + k) === c) k++
    failure[i] = k
  }
  for (let i = start, k = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    while (k > 0 && pattern.charCodeAt(from + k) !== c) k = failure[k - 1]!
    if (pattern.charCodeAt(from + k) === c) k++
    if (k === len) return i - len + 1
  }
  return -1
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff

/** Whether some marker of `proposed` has a high surrogate just before it or a low surrogate just after it. */
const cutsSurrogatePair = (proposed: string): boolean => {
  for (let at = proposed.indexOf(M); at >= 0; at = proposed.indexOf(M, at + ML)) {
    if (isHighSurrogate(proposed.charCodeAt(at - 1)) || isLowSurrogate(proposed.charCodeAt(at + ML))) return true
  }
  return false
}
