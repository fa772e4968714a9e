/**
 * Size before work (docs/DECISIONS.md §11, `docs/SECURITY.md`): an over-long array or record is refused before any
 * member is decoded (members are counted by a filter that records each call), the JSON Schema still describes the
 * members, and a failure lists at most 20 issues, formatted without flattening the rest.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { BoundedArray, BoundedRecord } from "../src/kernel/BoundedArray.ts"
import { InvalidRequest, MAX_REQUEST_ISSUES } from "../src/kernel/Errors.ts"
import { firstIssues } from "../src/kernel/RequestIssues.ts"

const counted = () => {
  const calls = { n: 0 }
  const member = Schema.String.check(Schema.makeFilter((s: string) => {
    calls.n++
    return s.length <= 3 ? undefined : "is longer than 3 characters"
  }))
  return { calls, member }
}

describe("BoundedArray", () => {
  it("refuses an over-long array without decoding a single member", () => {
    const { calls, member } = counted()
    const schema = Schema.Struct({ data: BoundedArray(member, 5, "at most 5 rows") })
    const result = Schema.decodeUnknownResult(schema)({ data: Array.from({ length: 1_000_000 }, () => "bad value") }, {
      errors: "all"
    })
    expect(result._tag).toBe("Failure")
    expect(calls.n).toBe(0)
    const { issues, total } = firstIssues(result._tag === "Failure" ? result.failure.issue : (undefined as never))
    expect(total).toBe(1)
    expect(issues).toEqual([{ path: ["data"], message: "at most 5 rows" }])
  })

  it("decodes the members of an array within the bound, as Schema.Array would", () => {
    const { calls, member } = counted()
    const bounded = BoundedArray(member, 5)
    expect(Schema.decodeUnknownSync(bounded)(["a", "bb"])).toEqual(["a", "bb"])
    expect(calls.n).toBe(2)
    const failure = Schema.decodeUnknownResult(bounded)(["a", "long", 3], { errors: "all" })
    const plain = Schema.decodeUnknownResult(Schema.Array(member))(["a", "long", 3], { errors: "all" })
    expect(failure._tag === "Failure" && firstIssues(failure.failure.issue)).toEqual(
      plain._tag === "Failure" && firstIssues(plain.failure.issue)
    )
    expect(Schema.decodeUnknownResult(bounded)("not an array")._tag).toBe("Failure")
    expect(Schema.encodeSync(bounded)(["a"])).toEqual(["a"])
  })

  it("the JSON Schema describes the members and the bound", () => {
    const row = Schema.Struct({ rating: Schema.Number, title: Schema.String.check(Schema.isMaxLength(500)) })
    const document = Schema.toJsonSchemaDocument(Schema.toCodecJson(BoundedArray(row, 10_000)))
    expect(document.schema).toEqual({
      ...Schema.toJsonSchemaDocument(Schema.toCodecJson(Schema.Array(row))).schema,
      maxItems: 10_000
    })
  })
})

describe("BoundedRecord", () => {
  it("counts the keys before decoding an entry", () => {
    const { calls, member } = counted()
    const record = BoundedRecord(Schema.String, member, 3)
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, "bad value"]))
    expect(Schema.decodeUnknownResult(record)(many, { errors: "all" })._tag).toBe("Failure")
    expect(calls.n).toBe(0)
    expect(Schema.decodeUnknownSync(record)({ a: "x", b: "y" })).toEqual({ a: "x", b: "y" })
    expect(calls.n).toBe(2)
    expect(Schema.decodeUnknownResult(record)([])._tag).toBe("Failure")
  })
})

describe("at most 20 issues", () => {
  it("firstIssues formats the first 20 and counts the rest", () => {
    const { member } = counted()
    const schema = Schema.Array(Schema.Struct({ a: member, b: Schema.Number }))
    const result = Schema.decodeUnknownResult(schema)(Array.from({ length: 5_000 }, () => ({ a: "long", b: "x" })), {
      errors: "all"
    })
    const { issues, total } = firstIssues(result._tag === "Failure" ? result.failure.issue : (undefined as never))
    expect(total).toBe(10_000)
    expect(issues).toHaveLength(MAX_REQUEST_ISSUES)
    expect(issues[0]).toEqual({ path: [0, "a"], message: "is longer than 3 characters" })
    expect(issues[1]!.path).toEqual([0, "b"])
  })

  it("InvalidRequest.of lists at most 20 issues and says how many more there were", () => {
    const issues = Array.from({ length: 30 }, (_, i) => ({ path: `body.f${i}`, message: "unknown field" }))
    const error = InvalidRequest.of(issues)
    expect(error.issues).toHaveLength(20)
    expect(error.message).toBe("body.f0: unknown field (and 29 more issues; details list the first 20).")
    expect(InvalidRequest.of(issues.slice(0, 2)).message).toBe(
      "body.f0: unknown field (and 1 more issue, see details)."
    )
    expect(InvalidRequest.of(issues.slice(0, 20), 500).message).toContain("and 499 more issues")
    expect(InvalidRequest.of(issues.slice(0, 1))).toEqual(InvalidRequest.single("body.f0", "unknown field"))
  })
})
