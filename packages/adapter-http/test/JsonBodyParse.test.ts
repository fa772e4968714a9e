/**
 * A large JSON body parsed in slices (docs/DECISIONS.md §69): the value is the one `JSON.parse` gives, a text it
 * refuses is refused, and the event loop turns while a large body is parsed.
 */
import { Catalog, Kernel, Reviews } from "@feedback/core"
import { Effect, Exit, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeInSlices, parseJsonBody, ROWS_PER_SLICE } from "../src/server/JsonBodyParse.ts"

const bytes = (s: string) => new TextEncoder().encode(s)
/** Parsed with tiny slices, so that nearly every container is split. */
const sliced = (s: string, slice = 8) => Effect.runSyncExit(parseJsonBody(bytes(s), slice))
const reference = (s: string): Exit.Exit<unknown, unknown> => {
  try {
    return Exit.succeed(s === "" ? undefined : JSON.parse(s))
  } catch (e) {
    return Exit.fail(e)
  }
}

/** Both accept with the same value (own keys in the same order, prototypes alike), or both refuse. */
const expectAlike = (text: string, slice?: number) => {
  const ours = sliced(text, slice)
  const theirs = reference(text)
  expect(Exit.isSuccess(ours), text.slice(0, 200)).toBe(Exit.isSuccess(theirs))
  if (Exit.isSuccess(ours) && Exit.isSuccess(theirs)) {
    expect(ours.value).toStrictEqual(theirs.value)
    expect(JSON.stringify(ours.value)).toBe(JSON.stringify(theirs.value))
  }
}

describe("JSON bodies parsed in slices", () => {
  it("gives JSON.parse's value for any JSON text, however it is spaced", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 64 }), fc.constantFrom(undefined, 2, "\t"), (v, s, sp) => {
        expectAlike(JSON.stringify(v, null, sp), s)
      }),
      { numRuns: 500 }
    )
  })

  it("refuses what JSON.parse refuses", () => {
    const cases = [
      "[1,]",
      "[,1]",
      "[1 2]",
      "{\"a\" 1}",
      "{\"a\":1,}",
      "{a:1}",
      "{\"a\":1 \"b\":2}",
      "[1}",
      "{\"a\":[1,2}",
      "[\"a\\q\"]",
      "[1] [2]",
      "[\"\u0001\"]",
      "[\ufeff1]",
      "{\"\\ud800\":1,\"b\":[1,2,3,4,5,6]}",
      "[[1,2,3,4,5,6,7,8,9],[1,2,3,4,5,6,7,8,9]",
      "[\"unterminated, 1, 2, 3, 4, 5]"
    ]
    for (const text of cases) for (const slice of [1, 2, 4, 8]) expectAlike(text, slice)
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.nat(),
        fc.constantFrom(",", "]", "}", "[", "{", ":", "\"", " ", "x"),
        (v, at, c) => {
          const text = JSON.stringify(v)
          const i = at % (text.length + 1)
          expectAlike(text.slice(0, i) + c + text.slice(i), 4)
          expectAlike(text.slice(0, i) + text.slice(i + 1), 4)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("keeps JSON.parse's reading of duplicate keys and `__proto__`", () => {
    const text = "{\"a\":[1,2,3,4,5,6,7],\"__proto__\":{\"polluted\":[1,2,3,4,5]},\"b\":2,\"a\":[7,6,5,4,3,2,1]}"
    expectAlike(text, 4)
    const value = Effect.runSync(parseJsonBody(bytes(text), 4)) as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect(Object.keys(value)).toEqual(["a", "__proto__", "b"])
  })

  it("an empty body is no value, and a leading BOM is dropped as the framework's reading drops it", () => {
    expect(Effect.runSync(parseJsonBody(new Uint8Array(0)))).toBeUndefined()
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("[1,2,3,4,5,6,7,8,9,10]")])
    expect(Effect.runSync(parseJsonBody(withBom, 4))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  })

  it("lets the event loop turn while a large body is parsed", async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ product: `p-${i}`, rating: 5, body: "x".repeat(400) }))
    const text = JSON.stringify({ data: rows })
    let turns = 0
    let parsing = true
    const tick = () => {
      if (!parsing) return
      turns++
      setImmediate(tick)
    }
    setImmediate(tick)
    const value = await Effect.runPromise(parseJsonBody(bytes(text)))
    parsing = false
    expect(value).toEqual(JSON.parse(text))
    // Several megabytes in slices of 256 KiB: the loop turned between them, not only once at the end.
    expect(turns).toBeGreaterThan(5)
  })
})

describe("import bodies decoded a run of rows at a time", () => {
  const options = { onExcessProperty: "error", errors: "all" } as const
  /** What decoding the whole body at once answers (HttpApi's own decoding of a payload). */
  const whole = (schema: Schema.Top, value: unknown) =>
    Effect.runSyncExit(
      Effect.mapError(
        Schema.decodeUnknownEffect(schema as Schema.Codec<unknown, unknown>, options)(value),
        (e) => Kernel.invalidRequestOfSchema("body", e)
      )
    )
  const inSlices = (schema: Schema.Top, value: unknown) =>
    Effect.runSyncExit(decodeInSlices(schema as Schema.Codec<unknown, unknown>)(value))
  const review = (i: number) => ({
    product: `p-${i}`,
    rating: 1 + (i % 5),
    body: `review ${i}`,
    customer: "c@example.com"
  })

  it("answers what decoding the whole body answers: the rows, or the same issues numbered by the whole body", () => {
    const n = ROWS_PER_SLICE * 3 + 7
    const valid = { data: Array.from({ length: n }, (_, i) => review(i)), strict: true }
    const ours = inSlices(Reviews.ImportRequest, valid)
    expect(Exit.isSuccess(ours)).toBe(true)
    expect(ours).toStrictEqual(whole(Reviews.ImportRequest, valid))
    const bad = {
      data: valid.data.map((row, i) =>
        i === 3 || i === ROWS_PER_SLICE + 1 ? { ...row, rating: 9 } : i === n - 1 ? { ...row, extra: 1 } : row
      )
    }
    const refused = inSlices(Reviews.ImportRequest, bad)
    expect(Exit.isFailure(refused)).toBe(true)
    expect(refused).toStrictEqual(whole(Reviews.ImportRequest, bad))
    // More issues than are listed: the count is of them all.
    const many = {
      data: Array.from({ length: n }, (_, i) => i % 40 === 0 ? { sku: i } : { slug: `s-${i}`, title: "T" })
    }
    expect(inSlices(Catalog.ProductImport, many)).toStrictEqual(whole(Catalog.ProductImport, many))
  })

  it("refuses too many rows, or a wrong outer field, as the whole body's decoding does", () => {
    const tooMany = { data: Array.from({ length: 10_001 }, (_, i) => review(i)) }
    expect(inSlices(Reviews.ImportRequest, tooMany)).toStrictEqual(whole(Reviews.ImportRequest, tooMany))
    const outer = { data: Array.from({ length: ROWS_PER_SLICE + 1 }, (_, i) => review(i)), strict: "yes" }
    expect(inSlices(Reviews.ImportRequest, outer)).toStrictEqual(whole(Reviews.ImportRequest, outer))
  })
})
