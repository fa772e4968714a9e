import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { InvalidRequest } from "../src/kernel/Errors.ts"
import {
  canonicalFilter,
  type FieldCatalog,
  type FieldRef,
  type FieldType,
  type FilterAst,
  filterLimits,
  matchAll,
  parseFilter
} from "../src/kernel/Filter.ts"
import { compareStrings, evaluateFilter } from "../src/kernel/FilterEvaluate.ts"
import { escapeLike, foldCase, matchesSearch, searchPattern } from "../src/kernel/Search.ts"
import { reviewFilterCatalog } from "../src/reviews/ReviewLists.ts"
import { productQuestionFilterCatalog } from "../src/questions/ProductQuestionLists.ts"

const UUID = "5f0c3a1e-8b9d-4c2a-9e8f-1a2b3c4d5e6f"

const ok = (filter: unknown, catalog: FieldCatalog = reviewFilterCatalog): FilterAst => {
  const r = parseFilter(typeof filter === "string" ? filter : JSON.stringify(filter), catalog)
  if (Result.isFailure(r)) throw new Error(`expected success, got ${r.failure.message}`)
  return r.success
}

const fail = (filter: unknown, catalog: FieldCatalog = reviewFilterCatalog): InvalidRequest => {
  const r = parseFilter(typeof filter === "string" ? filter : JSON.stringify(filter), catalog)
  if (Result.isSuccess(r)) throw new Error(`expected failure, got ${JSON.stringify(r.success)}`)
  expect(r.failure).toBeInstanceOf(InvalidRequest)
  return r.failure
}

const paths = (filter: unknown, catalog?: FieldCatalog): ReadonlyArray<string> =>
  fail(filter, catalog).issues.map((i) => i.path)

const field = (path: string, type: FieldType): FieldRef => ({ _tag: "Field", path, type })

describe("parseFilter: documents and operators", () => {
  it("treats an omitted, blank or empty filter as matching everything", () => {
    expect(Result.getOrThrow(parseFilter(undefined, reviewFilterCatalog))).toEqual(matchAll)
    expect(Result.getOrThrow(parseFilter("   ", reviewFilterCatalog))).toEqual(matchAll)
    expect(ok({})).toEqual(matchAll)
  })

  it("reads a literal as equality, per field type", () => {
    expect(ok({ rating: 5 })).toEqual({ _tag: "Compare", field: field("rating", "number"), op: "eq", value: 5 })
    expect(ok({ published: false })).toEqual({
      _tag: "Compare",
      field: field("published", "boolean"),
      op: "eq",
      value: false
    })
    expect(ok({ "product.id": UUID.toUpperCase() })).toEqual({
      _tag: "Compare",
      field: field("product.id", "uuid"),
      op: "eq",
      value: UUID
    })
    expect(ok({ "customer.email": "a@b.c" })).toEqual({
      _tag: "Compare",
      field: field("customer.email", "string"),
      op: "eq",
      value: "a@b.c"
    })
  })

  it("parses every operator", () => {
    const rating = field("rating", "number")
    const cases: ReadonlyArray<[string, unknown, FilterAst]> = [
      ["$eq", 4, { _tag: "Compare", field: rating, op: "eq", value: 4 }],
      ["$ne", 4, { _tag: "Compare", field: rating, op: "ne", value: 4 }],
      ["$gt", 4, { _tag: "Compare", field: rating, op: "gt", value: 4 }],
      ["$gte", 4.5, { _tag: "Compare", field: rating, op: "gte", value: 4.5 }],
      ["$lt", -1, { _tag: "Compare", field: rating, op: "lt", value: -1 }],
      ["$lte", 0, { _tag: "Compare", field: rating, op: "lte", value: 0 }],
      ["$in", [1, 2], { _tag: "In", field: rating, negated: false, values: [1, 2] }],
      ["$nin", [3], { _tag: "In", field: rating, negated: true, values: [3] }],
      ["$in", [], { _tag: "In", field: rating, negated: false, values: [] }],
      ["$exists", true, { _tag: "Exists", field: rating, exists: true }],
      ["$exists", false, { _tag: "Exists", field: rating, exists: false }]
    ]
    for (const [op, operand, expected] of cases) expect(ok({ rating: { [op]: operand } })).toEqual(expected)
  })

  it("ANDs several operators and several fields", () => {
    const ast = ok({ rating: { $gte: 2, $lte: 4 }, flagged: true })
    expect(ast._tag).toBe("And")
    expect(ast._tag === "And" && ast.clauses.map((c) => c._tag === "Compare" && c.op)).toEqual(["gte", "lte", "eq"])
  })

  it("parses $and / $or recursively", () => {
    const ast = ok({ $or: [{ rating: 5 }, { $and: [{ flagged: true }, { published: false }] }] })
    expect(ast).toMatchObject({
      _tag: "Or",
      clauses: [{ _tag: "Compare" }, { _tag: "And", clauses: [{ _tag: "Compare" }, { _tag: "Compare" }] }]
    })
  })

  it("means 'is null' by a null literal or $eq null and 'is not null' by $ne null", () => {
    const moderatedAt = field("moderatedAt", "timestamp")
    expect(ok({ moderatedAt: null })).toEqual({ _tag: "Exists", field: moderatedAt, exists: false })
    expect(ok({ moderatedAt: { $eq: null } })).toEqual({ _tag: "Exists", field: moderatedAt, exists: false })
    expect(ok({ moderatedAt: { $ne: null } })).toEqual({ _tag: "Exists", field: moderatedAt, exists: true })
    expect(paths({ moderatedAt: { $gt: null } })).toEqual(["filter.moderatedAt.$gt"])
    expect(paths({ rating: { $in: [1, null] } })).toEqual(["filter.rating.$in[1]"])
  })

  it("normalises timestamps with any offset and precision to the canonical form", () => {
    const value = (s: string) => {
      const ast = ok({ createdAt: { $gte: s } })
      return ast._tag === "Compare" ? ast.value : undefined
    }
    expect(value("2026-01-31T12:00:00+02:00")).toBe("2026-01-31T10:00:00.000Z")
    expect(value("2026-01-31T12:00Z")).toBe("2026-01-31T12:00:00.000Z")
    expect(value("2026-01-31T12:00:00.123456789-00:30")).toBe("2026-01-31T12:30:00.123Z")
    expect(value("2024-02-29T00:00:00Z")).toBe("2024-02-29T00:00:00.000Z")
    expect(value("0001-01-01T00:00:00Z")).toBe("0001-01-01T00:00:00.000Z")
  })

  it("reads metadata keys under every metadata prefix as strings", () => {
    expect(ok({ "metadata.color": "red" })).toEqual({
      _tag: "Compare",
      field: { _tag: "MetadataKey", prefix: "metadata", key: "color", type: "string" },
      op: "eq",
      value: "red"
    })
    expect(ok({ "product.metadata.a.b": { $in: ["x"] } })).toMatchObject({
      field: { _tag: "MetadataKey", prefix: "product.metadata", key: "a.b" }
    })
    expect(ok({ "customer.metadata.tier": { $exists: true } })).toMatchObject({
      field: { _tag: "MetadataKey", prefix: "customer.metadata", key: "tier" }
    })
    expect(paths({ metadata: { color: "red" } })).toEqual(["filter.metadata"])
    expect(paths({ "metadata.": "x" })).toEqual(["filter.metadata."])
    expect(paths({ "metadata.n": 3 })).toEqual(["filter.metadata.n"])
  })
})

describe("parseFilter: errors name the offending path", () => {
  const cases: ReadonlyArray<[string, unknown, ReadonlyArray<string>]> = [
    ["unknown field", { ratng: 5 }, ["filter.ratng"]],
    ["unknown nested field", { $or: [{ rating: 5 }, { publised: true }] }, ["filter.$or[1].publised"]],
    ["unknown operator", { rating: { $regex: "x" } }, ["filter.rating.$regex"]],
    ["operator without $", { rating: { gte: 4 } }, ["filter.rating.gte"]],
    ["unknown logical operator", { $not: { rating: 5 } }, ["filter.$not"]],
    ["empty $and", { $and: [] }, ["filter.$and"]],
    ["$or not an array", { $or: { rating: 5 } }, ["filter.$or"]],
    ["empty member document", { $or: [{ rating: 5 }, {}] }, ["filter.$or[1]"]],
    ["non-object member", { $and: [{ rating: 5 }, 3] }, ["filter.$and[1]"]],
    ["empty operator object", { rating: {} }, ["filter.rating"]],
    ["number as string", { rating: "5" }, ["filter.rating"]],
    ["operand of the wrong type", { rating: { $gte: "4" } }, ["filter.rating.$gte"]],
    ["infinite number", "{\"rating\": 1e400}", ["filter.rating"]],
    ["boolean as number", { published: 1 }, ["filter.published"]],
    ["boolean as string", { "customer.emailOptOut": "true" }, ["filter.customer.emailOptOut"]],
    ["malformed uuid", { id: "5f0c3a1e-8b9d-4c2a-9e8f-1a2b3c4d5e6" }, ["filter.id"]],
    ["uuid of the wrong type", { surveyId: 7 }, ["filter.surveyId"]],
    ["prose timestamp", { createdAt: "yesterday" }, ["filter.createdAt"]],
    ["date without time", { createdAt: "2026-01-31" }, ["filter.createdAt"]],
    ["time without zone", { createdAt: "2026-01-31T12:00:00" }, ["filter.createdAt"]],
    ["impossible day", { createdAt: "2026-02-30T00:00:00Z" }, ["filter.createdAt"]],
    ["hour 24", { createdAt: "2026-01-01T24:00:00Z" }, ["filter.createdAt"]],
    ["year 0", { createdAt: "0000-06-01T00:00:00Z" }, ["filter.createdAt"]],
    ["year 10000 after the offset", { createdAt: "9999-12-31T23:30:00-01:00" }, ["filter.createdAt"]],
    ["timestamp as epoch number", { createdAt: { $lt: 1767225600000 } }, ["filter.createdAt.$lt"]],
    ["ordering a boolean", { published: { $gt: false } }, ["filter.published.$gt"]],
    ["ordering a uuid", { "customer.id": { $lte: UUID } }, ["filter.customer.id.$lte"]],
    ["$exists not boolean", { rating: { $exists: 1 } }, ["filter.rating.$exists"]],
    ["$in not an array", { rating: { $in: 5 } }, ["filter.rating.$in"]],
    ["$in element of the wrong type", { rating: { $in: [1, "2", 3] } }, ["filter.rating.$in[1]"]],
    ["array literal", { rating: [1, 2] }, ["filter.rating"]],
    ["string with NUL", { ipAddress: "a\u0000b" }, ["filter.ipAddress"]],
    ["lone surrogate", { ipAddress: "a\ud800b" }, ["filter.ipAddress"]],
    ["metadata key with NUL", { "metadata.a\u0000": "x" }, ["filter.metadata.a\u0000"]],
    ["over-long string", { "product.slug": "x".repeat(filterLimits.maxStringLength + 1) }, ["filter.product.slug"]],
    ["field of the other endpoint", { answeredAt: "2026-01-01T00:00:00Z" }, ["filter.answeredAt"]],
    ["prototype key", "{\"__proto__\": {\"rating\": 5}}", ["filter.__proto__"]],
    ["inherited property name", { constructor: 1 }, ["filter.constructor"]],
    ["nested object path", { product: { id: UUID } }, ["filter.product"]],
    ["malformed JSON", "{rating: 5}", ["filter"]],
    ["truncated JSON", "{\"rating\": ", ["filter"]],
    ["array document", "[]", ["filter"]],
    ["null document", "null", ["filter"]],
    ["number document", "42", ["filter"]],
    ["string document", "\"rating\"", ["filter"]]
  ]
  for (const [name, filter, expected] of cases) {
    it(name, () => {
      const error = fail(filter)
      expect(error.issues.map((i) => i.path)).toEqual(expected)
      expect(error._tag).toBe("InvalidRequest")
      expect(error.message.startsWith(expected[0]!)).toBe(true)
    })
  }

  it("reports several problems at once", () => {
    const error = fail({ ratng: 5, published: "yes", rating: { $foo: 1 } })
    expect(error.issues.map((i) => i.path)).toEqual(["filter.ratng", "filter.published", "filter.rating.$foo"])
    expect(error.message).toContain("2 more")
  })

  it("uses each endpoint's catalog", () => {
    expect(ok({ answeredAt: { $exists: true }, source: "widget" }, productQuestionFilterCatalog)._tag).toBe("And")
    expect(paths({ rating: 5 }, productQuestionFilterCatalog)).toEqual(["filter.rating"])
  })
})

describe("parseFilter: limits and hostile input", () => {
  const nest = (depth: number): unknown => depth === 1 ? { rating: 5 } : { $and: [nest(depth - 1)] }
  const clauses = (n: number) => ({ $and: Array.from({ length: n }, (_, i) => ({ rating: i })) })

  it("keeps SQL-looking strings as plain values", () => {
    const hostile = "'; DROP TABLE reviews; --"
    expect(ok({ "product.title": hostile })).toMatchObject({ value: hostile })
    expect(ok({ "metadata.x') OR 1=1 --": { $gt: "\\' OR '1'='1" } })).toMatchObject({
      field: { key: "x') OR 1=1 --" },
      value: "\\' OR '1'='1"
    })
  })

  it("accepts 64 clauses and rejects 65", () => {
    expect(ok(clauses(filterLimits.maxClauses))._tag).toBe("And")
    expect(paths(clauses(filterLimits.maxClauses + 1))).toEqual(["filter"])
    // operators of one field count one by one
    const ops = { $and: Array.from({ length: 33 }, () => ({ rating: { $gte: 1, $lte: 5 } })) }
    expect(paths(ops)).toEqual(["filter"])
  })

  it("accepts 250 values in $in and rejects 251 or 10,000 as one issue", () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => i)
    expect(ok({ rating: { $in: values(250) } })).toMatchObject({ _tag: "In" })
    expect(paths({ rating: { $nin: values(251) } })).toEqual(["filter.rating.$nin"])
    // One issue for the list, not one per value: the list is counted before its values are read.
    expect(paths({ rating: { $in: values(10_000) } })).toEqual(["filter.rating.$in"])
  })

  it("accepts nesting up to the depth limit and rejects deeper documents", () => {
    expect(ok(nest(filterLimits.maxDepth))).toMatchObject({ _tag: "Compare" })
    const error = fail(nest(filterLimits.maxDepth + 1))
    expect(error.issues).toHaveLength(1)
    expect(error.issues[0]!.path).toBe(`filter${".$and[0]".repeat(filterLimits.maxDepth)}`)
  })

  it("rejects pathologically deep JSON without crashing", () => {
    const deep = "[".repeat(40_000) + "]".repeat(40_000)
    expect(paths(deep)).toEqual(["filter"])
    const deepObjects = "{\"$and\":[".repeat(5_000) + "{}" + "]}".repeat(5_000)
    expect(paths(deepObjects)).toHaveLength(1)
  })

  it("rejects documents over the size limit before parsing them", () => {
    const huge = JSON.stringify({ "product.title": "x".repeat(filterLimits.maxLength) })
    const error = fail(huge)
    expect(error.issues).toEqual([{ path: "filter", message: expect.stringContaining("longer than") }])
  })

  it("caps the number of reported issues", () => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`bad${i}`, 1]))
    expect(fail(many).issues).toHaveLength(filterLimits.maxIssues)
  })

  it("never throws, whatever the input", () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string()), (text) => {
        const r = parseFilter(text, reviewFilterCatalog)
        if (Result.isFailure(r)) {
          expect(r.failure.issues.length).toBeGreaterThan(0)
          for (const issue of r.failure.issues) expect(issue.path.startsWith("filter")).toBe(true)
        }
      }),
      { numRuns: 300 }
    )
  })
})

describe("canonicalFilter", () => {
  it("ignores key order, member order and $in order, and sees every difference of meaning", () => {
    const a = ok({ rating: { $in: [1, 2] }, flagged: true, $or: [{ published: true }, { "metadata.k": "v" }] })
    const b = ok({ $or: [{ "metadata.k": "v" }, { published: true }], flagged: true, rating: { $in: [2, 1, 2] } })
    expect(canonicalFilter(a)).toBe(canonicalFilter(b))
    expect(canonicalFilter(ok({ rating: 1 }))).not.toBe(canonicalFilter(ok({ rating: 2 })))
    expect(canonicalFilter(ok({ rating: { $in: [1] } }))).not.toBe(canonicalFilter(ok({ rating: { $nin: [1] } })))
    expect(canonicalFilter(ok({ "metadata.a": "b" }))).not.toBe(canonicalFilter(ok({ "product.metadata.a": "b" })))
  })
})

describe("evaluateFilter", () => {
  const record: Readonly<Record<string, unknown>> = {
    rating: 4,
    published: true,
    moderatedAt: null,
    createdAt: "2026-01-31T10:00:00.000Z",
    id: UUID,
    ipAddress: "b",
    metadata: { color: "red" },
    "product.title": "Mug",
    "customer.email": undefined
  }
  const matches = (filter: unknown) => evaluateFilter(ok(filter), (path) => record[path])

  it("compares values by type", () => {
    expect(matches({ rating: 4 })).toBe(true)
    expect(matches({ rating: { $gt: 3.5, $lt: 4.5 } })).toBe(true)
    expect(matches({ rating: { $gt: 4 } })).toBe(false)
    expect(matches({ createdAt: { $gte: "2026-01-31T12:00:00+02:00" } })).toBe(true)
    expect(matches({ createdAt: { $gt: "2026-01-31T12:00:00+02:00" } })).toBe(false)
    expect(matches({ id: UUID.toUpperCase() })).toBe(true)
    expect(matches({ ipAddress: { $gt: "a", $lt: "c" } })).toBe(true)
    expect(matches({ "product.title": { $in: ["Cup", "Mug"] } })).toBe(true)
  })

  it("lets $ne and $nin match null fields, but never $eq, $in or orderings", () => {
    expect(matches({ moderatedAt: { $ne: "2026-01-01T00:00:00Z" } })).toBe(true)
    expect(matches({ moderatedAt: { $nin: ["2026-01-01T00:00:00Z"] } })).toBe(true)
    expect(matches({ "customer.email": { $ne: "x" } })).toBe(true)
    expect(matches({ moderatedAt: { $lt: "2999-01-01T00:00:00Z" } })).toBe(false)
    expect(matches({ moderatedAt: { $gte: "0001-01-01T00:00:00Z" } })).toBe(false)
    expect(matches({ "customer.email": { $in: ["x"] } })).toBe(false)
    expect(matches({ moderatedAt: null })).toBe(true)
    expect(matches({ rating: null })).toBe(false)
    expect(matches({ rating: { $ne: null } })).toBe(true)
  })

  it("reads metadata keys as own string properties only", () => {
    expect(matches({ "metadata.color": "red" })).toBe(true)
    expect(matches({ "metadata.size": { $exists: false } })).toBe(true)
    expect(matches({ "metadata.constructor": { $exists: true } })).toBe(false)
    expect(matches({ "metadata.__proto__": { $exists: true } })).toBe(false)
    expect(matches({ "metadata.toString": { $ne: "x" } })).toBe(true)
    expect(matches({ "product.metadata.color": { $exists: false } })).toBe(true)
  })

  it("combines with $and / $or", () => {
    expect(matches({ $or: [{ rating: 1 }, { published: true }] })).toBe(true)
    expect(matches({ $and: [{ rating: 4 }, { published: false }] })).toBe(false)
    expect(evaluateFilter(matchAll, () => null)).toBe(true)
  })
})

describe("compareStrings", () => {
  it("orders by code point, like COLLATE \"C\", also above U+FFFF", () => {
    expect(compareStrings("a", "b")).toBeLessThan(0)
    expect(compareStrings("B", "a")).toBeLessThan(0)
    expect(compareStrings("ab", "a")).toBeGreaterThan(0)
    expect(compareStrings("\uFFFD", "😀")).toBeLessThan(0) // UTF-16 `<` says the opposite
    expect("\uFFFD" < "😀").toBe(false)
    expect(compareStrings("é", "z")).toBeGreaterThan(0)
  })

  it("agrees with comparing arrays of code points", () => {
    const cmp = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => {
      for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
      return a.length - b.length
    }
    // Also strings of characters around the surrogates, where UTF-16 order and code point order disagree.
    const near = fc.constantFrom("a", "\ud7ff", "\ue000", "\ufffd", "\uffff", "😀", "\u{10ffff}")
    for (const unit of ["grapheme", near] as const) {
      fc.assert(
        fc.property(fc.string({ unit }), fc.string({ unit }), (a, b) => {
          const expected = Math.sign(cmp([...a].map((c) => c.codePointAt(0)!), [...b].map((c) => c.codePointAt(0)!)))
          expect(Math.sign(compareStrings(a, b))).toBe(expected)
        })
      )
    }
  })
})

describe("search", () => {
  it("matches a case-insensitive substring of any non-null value", () => {
    expect(matchesSearch("mug", [null, "Coffee MUG"])).toBe(true)
    expect(matchesSearch("ÉTÉ", ["un été chaud"])).toBe(true)
    expect(matchesSearch("été", ["UN ÉTÉ"])).toBe(true)
    expect(matchesSearch("cup", [null, undefined, "Mug"])).toBe(false)
    expect(matchesSearch("", [null])).toBe(true)
  })

  it("folds exactly ASCII and Latin-1 capitals", () => {
    expect(foldCase("ABCXYZ ÀÖØÞ ×ß ÿŸ Ω")).toBe("abcxyz àöøþ ×ß ÿŸ Ω")
  })

  it("escapes LIKE wildcards so they match literally", () => {
    expect(escapeLike("50%_off\\")).toBe("50\\%\\_off\\\\")
    expect(searchPattern("A_b")).toBe("%a\\_b%")
    expect(matchesSearch("50%", ["500"])).toBe(false)
    expect(matchesSearch("a_c", ["abc"])).toBe(false)
    expect(matchesSearch("a_c", ["xA_Cx"])).toBe(true)
  })
})

describe("catalogs", () => {
  it("hold exactly the spec's filterable fields, and updatedAt for sync (docs/DECISIONS.md §48)", () => {
    const related = [
      "product.id",
      "product.slug",
      "product.title",
      "product.createdAt",
      "customer.id",
      "customer.email",
      "customer.firstName",
      "customer.lastName",
      "customer.emailOptOut",
      "customer.emailOptOutSource",
      "customer.createdAt"
    ]
    expect([...reviewFilterCatalog.fields.keys()].sort()).toEqual(
      [
        "id",
        "rating",
        "published",
        "flagged",
        "moderatedAt",
        "surveyId",
        "ipAddress",
        "browserFingerprint",
        "createdAt",
        "updatedAt",
        ...related
      ].sort()
    )
    expect([...productQuestionFilterCatalog.fields.keys()].sort()).toEqual(
      ["id", "published", "flagged", "moderatedAt", "answeredAt", "source", "createdAt", "updatedAt", ...related].sort()
    )
    for (const catalog of [reviewFilterCatalog, productQuestionFilterCatalog]) {
      expect(catalog.metadataPrefixes).toEqual(["metadata", "product.metadata", "customer.metadata"])
    }
  })
})
