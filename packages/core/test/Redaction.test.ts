import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { checkRedaction, REDACTION_MARKER, RedactionReasons } from "../src/reviews/Redaction.ts"

const M = REDACTION_MARKER
type Verdict = "Unchanged" | "Redacted" | "Rejected"

const verdict = (current: string | null, proposed: string | null): Verdict => {
  const r = checkRedaction(current, proposed)
  return Result.isSuccess(r) ? r.success : "Rejected"
}

// ---------------------------------------------------------------------------------------------------------------
// Independent references (slow, only for short strings)
// ---------------------------------------------------------------------------------------------------------------

/**
 * Memoised search straight from the definition, with no use of the "cut at every marker" lemma: walking both
 * strings, a character of `proposed` either matches the same character of `current` (this covers markers that were
 * already there and are kept), or an occurrence of the marker in `proposed` is a new span that swallows one or more
 * characters of `current`. At least one new span must be used.
 */
const referenceVerdict = (current: string, proposed: string): Verdict => {
  if (current === proposed) return "Unchanged"
  const memo = new Map<number, boolean>()
  const go = (i: number, j: number, used: boolean): boolean => {
    const key = (i * (proposed.length + 1) + j) * 2 + (used ? 1 : 0)
    const hit = memo.get(key)
    if (hit !== undefined) return hit
    let ok = false
    if (j === proposed.length) {
      ok = i === current.length && used
    } else {
      if (i < current.length && current[i] === proposed[j]) ok = go(i + 1, j + 1, used)
      if (!ok && proposed.startsWith(M, j)) {
        for (let l = 1; !ok && i + l <= current.length; l++) ok = go(i + l, j + M.length, true)
      }
    }
    memo.set(key, ok)
    return ok
  }
  return go(0, 0, false) ? "Redacted" : "Rejected"
}

/** Every text obtainable from `current` by replacing a set of disjoint non-empty spans (possibly none). */
const allRedactions = (current: string): Set<string> => {
  const out = new Set<string>()
  const go = (i: number, acc: string): void => {
    if (i === current.length) {
      out.add(acc)
      return
    }
    go(i + 1, acc + current[i])
    for (let end = i + 1; end <= current.length; end++) go(end, acc + M)
  }
  go(0, "")
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------------------------

/** Characters of the marker plus one outsider, and the whole marker as one unit, so collisions are frequent. */
const tinyUnit = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("[", "]", "r", "e", "d", "a", "c", "t", "x") },
  { weight: 1, arbitrary: fc.constant(M) },
  { weight: 1, arbitrary: fc.constantFrom("[redacte", "redacted]", "[red") }
)
const tinyText = (maxLength: number) => fc.array(tinyUnit, { maxLength }).map((units) => units.join(""))

interface Segment {
  readonly redact: boolean
  readonly text: string
}
/** `current` and a valid `proposed` built together: each segment is kept or replaced by one marker. */
const redactionOf = (text: fc.Arbitrary<string>) =>
  fc
    .array(
      fc.oneof(
        text.map((t): Segment => ({ redact: false, text: t })),
        text.filter((t) => t.length > 0).map((t): Segment => ({ redact: true, text: t }))
      ),
      { maxLength: 12 }
    )
    .filter((segments) => segments.some((s) => s.redact))
    .map((segments) => ({
      current: segments.map((s) => s.text).join(""),
      proposed: segments.map((s) => (s.redact ? M : s.text)).join("")
    }))

type Edit = (s: string) => string
/** Edits that are usually (not always) not redactions; the reference decides. */
const editOf = (source: string): fc.Arbitrary<{ readonly name: string; readonly edit: Edit }> => {
  const pos = fc.nat({ max: source.length })
  return fc.oneof(
    fc.record({ at: pos, ins: tinyText(3).filter((s) => s.length > 0) }).map(({ at, ins }) => ({
      name: "insert",
      edit: (s: string) => s.slice(0, at) + ins + s.slice(at)
    })),
    fc.record({ at: pos, len: fc.integer({ min: 1, max: 4 }) }).map(({ at, len }) => ({
      name: "delete",
      edit: (s: string) => s.slice(0, at) + s.slice(at + len)
    })),
    fc.record({ at: pos, c: fc.constantFrom("[", "]", "r", "d", "x", "z") }).map(({ at, c }) => ({
      name: "change",
      edit: (s: string) => s.slice(0, at) + c + s.slice(at + 1)
    })),
    pos.map((at) => ({ name: "marker", edit: (s: string) => s.slice(0, at) + M + s.slice(at) }))
  )
}

/** Deterministic pseudo-random generator so the performance inputs are the same on every run. */
const lcg = (seed: number) => () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
  return seed / 2 ** 32
}

// ---------------------------------------------------------------------------------------------------------------

describe("checkRedaction: examples", () => {
  const table: ReadonlyArray<readonly [current: string | null, proposed: string | null, expected: Verdict]> = [
    [null, null, "Unchanged"],
    ["", "", "Unchanged"],
    ["abc", "abc", "Unchanged"],
    ["a[redacted]b", "a[redacted]b", "Unchanged"],
    ["abc", "a[redacted]c", "Redacted"],
    ["abc", "[redacted]", "Redacted"],
    ["abc", "[redacted]c", "Redacted"],
    ["abc", "ab[redacted]", "Redacted"],
    ["hello world", "hello [redacted]", "Redacted"],
    ["call me at 555-1234 or mail x@y.z", "call me at [redacted] or mail [redacted]", "Redacted"],
    // adjacent spans as two markers, or merged into one
    ["ab", "[redacted][redacted]", "Redacted"],
    ["abcd", "a[redacted][redacted]d", "Redacted"],
    ["abcd", "a[redacted]d", "Redacted"],
    // earlier markers: covered by a new span, or kept next to a new one
    ["a[redacted]b", "[redacted]", "Redacted"],
    ["x a[redacted]b y", "x [redacted] y", "Redacted"],
    ["a[redacted]bc", "a[redacted]b[redacted]", "Redacted"],
    ["a[redacted]b", "a[redacted][redacted]", "Redacted"],
    ["[redacted]b", "[redacted][redacted]", "Redacted"],
    ["[redacted]", "[redacted][redacted]", "Redacted"],
    // marker-looking text in the current value
    ["x[redacted", "x[redacted]", "Redacted"],
    ["[redacte", "[redacted]", "Redacted"],
    // empty spans are not spans
    ["ab", "a[redacted]b", "Rejected"],
    ["", "[redacted]", "Rejected"],
    ["a", "[redacted][redacted]", "Rejected"],
    ["abc", "a[redacted]c[redacted]", "Rejected"],
    ["abc", "[redacted]abc", "Rejected"],
    [
      "[redacted]",
      "[redacted][redacted][redacted][redacted][redacted][redacted][redacted][redacted][redacted][redacted][redacted]",
      "Rejected"
    ],
    // other edits
    ["abc", "ab", "Rejected"],
    ["abc", "abcd", "Rejected"],
    ["abc", "abd", "Rejected"],
    ["abc", "[redacted]x", "Rejected"],
    ["abc", "x[redacted]", "Rejected"],
    ["abcabc", "abc[redacted]abd", "Rejected"],
    ["abc", "[REDACTED]", "Rejected"],
    ["abc", "[redacted ]", "Rejected"],
    ["a b", "a[redacted]c", "Rejected"],
    // null
    [null, "", "Rejected"],
    [null, "[redacted]", "Rejected"],
    ["", null, "Rejected"],
    ["abc", null, "Rejected"]
  ]
  it.each(table)("%j -> %j is %s", (current, proposed, expected) => {
    expect(verdict(current, proposed)).toBe(expected)
    if (current !== null && proposed !== null) expect(referenceVerdict(current, proposed)).toBe(expected)
  })

  it("gives the matching one-sentence reason", () => {
    expect(checkRedaction(null, "x")).toStrictEqual(Result.fail(RedactionReasons.nullToText))
    expect(checkRedaction("x", null)).toStrictEqual(Result.fail(RedactionReasons.textToNull))
    expect(checkRedaction("abc", "abd")).toStrictEqual(Result.fail(RedactionReasons.noMarker))
    expect(checkRedaction("ab", "a[redacted]b")).toStrictEqual(Result.fail(RedactionReasons.mismatch))
    for (const reason of Object.values(RedactionReasons)) {
      expect(reason).toMatch(/^[A-Z].*\.$/)
      expect(reason.slice(0, -1)).not.toMatch(/\.\s/)
    }
  })

  it("never cuts a surrogate pair in half, but handles astral characters", () => {
    expect(verdict("a😀b", "a[redacted]b")).toBe("Redacted")
    expect(verdict("😀x😀", "😀[redacted]😀")).toBe("Redacted")
    expect(verdict("a😀b", "a\uD83D[redacted]b")).toBe("Rejected")
    expect(verdict("a😀b", "a[redacted]\uDE00b")).toBe("Rejected")
    expect(checkRedaction("a😀b", "a\uD83D[redacted]b")).toStrictEqual(Result.fail(RedactionReasons.splitsCharacter))
  })
})

describe("checkRedaction: properties", () => {
  it("(a) accepts any set of disjoint non-empty spans replaced by markers (marker-heavy alphabet)", () => {
    fc.assert(
      fc.property(redactionOf(tinyText(6)), ({ current, proposed }) => {
        expect(verdict(current, proposed)).toBe(proposed === current ? "Unchanged" : "Redacted")
      }),
      { numRuns: 2000 }
    )
  })

  it("(a) accepts any set of disjoint non-empty spans replaced by markers (any Unicode text)", () => {
    fc.assert(
      fc.property(redactionOf(fc.string({ unit: "binary", maxLength: 20 })), ({ current, proposed }) => {
        expect(verdict(current, proposed)).toBe(proposed === current ? "Unchanged" : "Redacted")
      }),
      { numRuns: 1000 }
    )
  })

  it("(a) the spans may be chosen anywhere: random span sets over a random text", () => {
    const textAndSpans = fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 60 }).chain((text) =>
      fc.tuple(
        fc.constant(text),
        fc.uniqueArray(fc.integer({ min: 0, max: text.length }), { minLength: 2, maxLength: 12 })
      )
    )
    fc.assert(
      fc.property(textAndSpans, ([text, cuts]) => {
        // Sorted distinct cut points paired up give disjoint non-empty spans; pairs may touch only via equal
        // cuts, which uniqueArray excludes, so touching spans come from the segment generator above instead.
        const sorted = [...cuts].sort((a, b) => a - b)
        let proposed = ""
        let at = 0
        for (let k = 0; k + 1 < sorted.length; k += 2) {
          proposed += text.slice(at, sorted[k]) + M
          at = sorted[k + 1]!
        }
        proposed += text.slice(at)
        expect(verdict(text, proposed)).toBe("Redacted")
      }),
      { numRuns: 1000 }
    )
  })

  it("(b) agrees with the exhaustive definition on every text up to 9 characters", () => {
    let rejected = 0
    let accepted = 0
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("[", "]", "r", "e", "d", "a", "x"), { maxLength: 9 }).map((cs) => cs.join("")),
        fc.array(fc.oneof(tinyUnit, fc.constant(M)), { maxLength: 6 }).map((us) => us.join("")),
        (current, randomProposed) => {
          const valid = allRedactions(current)
          for (const proposed of valid) {
            expect(verdict(current, proposed)).toBe(proposed === current ? "Unchanged" : "Redacted")
          }
          const expected = valid.has(randomProposed)
            ? (randomProposed === current ? "Unchanged" : "Redacted")
            : "Rejected"
          const got = verdict(current, randomProposed)
          expect(got).toBe(expected)
          if (got === "Rejected") rejected++
          else accepted++
        }
      ),
      { numRuns: 300 }
    )
    expect(rejected).toBeGreaterThan(50)
    expect(accepted).toBeGreaterThan(20)
  })

  it("(b) near misses: edits of a valid redaction are judged exactly as the reference judges them", () => {
    const seen = { Rejected: 0, Redacted: 0, Unchanged: 0 }
    const byEdit = new Map<string, number>()
    fc.assert(
      fc.property(
        redactionOf(tinyText(5)).chain((pair) => fc.tuple(fc.constant(pair), editOf(pair.proposed))),
        ([{ current, proposed }, { edit, name }]) => {
          const edited = edit(proposed)
          const expected = referenceVerdict(current, edited)
          expect(verdict(current, edited)).toBe(expected)
          seen[expected]++
          if (expected === "Rejected") byEdit.set(name, (byEdit.get(name) ?? 0) + 1)
        }
      ),
      { numRuns: 3000 }
    )
    // The property is only meaningful if both sides of the decision were exercised, by every kind of edit.
    expect(seen.Rejected).toBeGreaterThan(300)
    expect(seen.Redacted).toBeGreaterThan(300)
    for (const name of ["insert", "delete", "change", "marker"]) expect(byEdit.get(name) ?? 0).toBeGreaterThan(20)
  })

  it("(b) agrees with the reference on unrelated short pairs over the marker alphabet", () => {
    fc.assert(
      fc.property(tinyText(8), tinyText(8), (current, proposed) => {
        expect(verdict(current, proposed)).toBe(referenceVerdict(current, proposed))
      }),
      { numRuns: 3000 }
    )
  })

  it("(b) the exhaustive definition and the reference agree with each other (sanity of the oracles)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("[", "r", "a", "]"), { maxLength: 6 }).map((cs) => cs.join("")),
        tinyText(4),
        (current, proposed) => {
          const inSet = allRedactions(current).has(proposed)
          expect(referenceVerdict(current, proposed) !== "Rejected").toBe(inSet)
        }
      ),
      { numRuns: 500 }
    )
  })
})

describe("checkRedaction: linear time", () => {
  /** A body of about `size` characters with a span every ~60 characters, and its redaction. */
  const manySpans = (size: number) => {
    const next = lcg(42)
    const alphabet = "abcdefghij klmnop[]"
    let current = ""
    let proposed = ""
    while (current.length < size) {
      let kept = ""
      const keptLength = 20 + Math.floor(next() * 60)
      for (let i = 0; i < keptLength; i++) kept += alphabet[Math.floor(next() * alphabet.length)]
      const span = "secret" + Math.floor(next() * 1000)
      current += kept + span
      proposed += kept + M
    }
    return { current, proposed }
  }
  /** Bad for naive substring search: a long chunk that almost matches everywhere and finally fails. */
  const nearMiss = (size: number) => {
    const current = "a".repeat(size)
    return { current, proposed: "a" + M + "a".repeat(size / 2) + "b" + M + "a" }
  }
  /** Bad for backtracking: many markers, each with a one-letter chunk that matches everywhere, then a miss. */
  const manyMarkers = (size: number) => ({
    current: "a".repeat(size),
    proposed: (M + "a").repeat(size / 4) + M + "b"
  })

  /** The best of up to 7 runs, stopping early once a run is under `enough` ms. */
  const time = (f: () => void, enough = 0): number => {
    let best = Number.POSITIVE_INFINITY
    for (let run = 0; run < 7 && best >= enough; run++) {
      const t0 = performance.now()
      f()
      best = Math.min(best, performance.now() - t0)
    }
    return best
  }

  // The adversarial inputs are smaller so that a quadratic implementation fails in seconds instead of hanging.
  it.each(
    [
      ["many spans", manySpans, 100_000, "Redacted"],
      ["near miss", nearMiss, 2_000, "Rejected"],
      ["many markers", manyMarkers, 2_000, "Rejected"]
    ] as const
  )("%s: 10x the input costs about 10x as much, not 100x", (_name, make, size, expected) => {
    const small = make(size)
    const big = make(size * 10)
    expect(verdict(small.current, small.proposed)).toBe(expected)
    expect(verdict(big.current, big.proposed)).toBe(expected)
    // Ten small checks do the same amount of linear work as one big one; a quadratic algorithm would make the
    // big one ten times slower than the ten small ones. Allow a factor of 4 (plus 5 ms) for noise, and up to five
    // attempts: on a loaded machine one attempt can be descheduled, while a quadratic check misses every one.
    const attempts: Array<{ readonly oneBig: number; readonly bound: number }> = []
    while (attempts.length < 5 && !attempts.some((a) => a.oneBig < a.bound)) {
      const tenSmall = time(() => {
        for (let i = 0; i < 10; i++) checkRedaction(small.current, small.proposed)
      })
      const bound = 4 * tenSmall + 5
      attempts.push({ oneBig: time(() => checkRedaction(big.current, big.proposed), bound), bound })
    }
    expect(attempts.some((a) => a.oneBig < a.bound), JSON.stringify(attempts)).toBe(true)
  })

  it("a 1 MB body with thousands of spans is checked", () => {
    const { current, proposed } = manySpans(1_000_000)
    expect(proposed.split(M).length - 1).toBeGreaterThan(10_000)
    expect(verdict(current, proposed)).toBe("Redacted")
    expect(verdict(current, proposed.slice(0, -1))).toBe("Rejected")
  })
})
