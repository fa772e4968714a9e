import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compareKeyset, type CursorPosition } from "../src/kernel/Cursor.ts"
import type { InvalidRequest } from "../src/kernel/Errors.ts"
import { matchAll } from "../src/kernel/Filter.ts"
import {
  type ListParams,
  type ListRequest,
  type MemoryListAccess,
  pageInMemory,
  parseInclude,
  parseLimit,
  parseListRequest,
  parseSearch,
  parseSort,
  parseSortValue,
  toPage
} from "../src/kernel/ListQuery.ts"
import { testIssuer } from "@feedback/testing"
import { reviewFilterCatalog, reviewListEndpoint } from "../src/reviews/ReviewLists.ts"
import { productQuestionListEndpoint } from "../src/questions/ProductQuestionLists.ts"

const issuesOf = <A>(r: Result.Result<A, InvalidRequest>) => {
  if (Result.isSuccess(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.success)}`)
  return r.failure.issues
}
const pathsOf = <A>(r: Result.Result<A, InvalidRequest>) => issuesOf(r).map((i) => i.path)

describe("limit", () => {
  it("defaults to 50 and accepts whole numbers from 1 to 250", () => {
    expect(Result.getOrThrow(parseLimit(undefined))).toBe(50)
    expect(Result.getOrThrow(parseLimit(""))).toBe(50)
    expect(Result.getOrThrow(parseLimit("1"))).toBe(1)
    expect(Result.getOrThrow(parseLimit("250"))).toBe(250)
    expect(Result.getOrThrow(parseLimit("007"))).toBe(7)
  })

  it("rejects anything else naming `limit`", () => {
    for (
      const raw of ["0", "251", "-1", "1.5", "1e2", " 5", "5 ", "+5", "abc", "0x10", "99999999999999999999", "NaN"]
    ) {
      expect(pathsOf(parseLimit(raw))).toEqual(["limit"])
    }
  })

  it("takes the typed value the HTTP contract decodes to, checked the same way", () => {
    expect(Result.getOrThrow(parseLimit(10))).toBe(10)
    expect(Result.getOrThrow(parseLimit(250))).toBe(250)
    for (const n of [0, 251, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(issuesOf(parseLimit(n))).toEqual([{ path: "limit", message: "must be a whole number from 1 to 250" }])
    }
  })
})

describe("sort", () => {
  const allowed = reviewListEndpoint.sorts
  it("defaults to -createdAt", () => {
    expect(Result.getOrThrow(parseSort(undefined, allowed, reviewFilterCatalog))).toEqual({
      field: "createdAt",
      direction: "desc",
      type: "timestamp"
    })
  })

  it("reads a leading - as descending and types the field", () => {
    expect(Result.getOrThrow(parseSort("rating", allowed, reviewFilterCatalog))).toEqual({
      field: "rating",
      direction: "asc",
      type: "number"
    })
    expect(Result.getOrThrow(parseSort("-moderatedAt", allowed, reviewFilterCatalog))).toEqual({
      field: "moderatedAt",
      direction: "desc",
      type: "timestamp"
    })
  })

  it("parseSortValue: an allowed value, blank for the default, the same message otherwise", () => {
    expect(Result.getOrThrow(parseSortValue("-rating", allowed))).toBe("-rating")
    expect(Result.getOrThrow(parseSortValue("", allowed))).toBeUndefined()
    expect(issuesOf(parseSortValue("title", allowed))).toEqual([
      {
        path: "sort",
        message:
          "must be one of rating, -rating, createdAt, -createdAt, moderatedAt, -moderatedAt, updatedAt, -updatedAt"
      }
    ])
  })

  it("rejects values the endpoint does not allow", () => {
    for (const raw of ["title", "--rating", "+rating", "Rating", "rating ", "answeredAt", "id"]) {
      expect(pathsOf(parseSort(raw, allowed, reviewFilterCatalog))).toEqual(["sort"])
    }
    expect(
      Result.isSuccess(parseSort("answeredAt", productQuestionListEndpoint.sorts, productQuestionListEndpoint.catalog))
    ).toBe(true)
  })
})

describe("include", () => {
  const allowed = reviewListEndpoint.includes
  it("splits, trims and drops duplicates, keeping the order", () => {
    expect(Result.getOrThrow(parseInclude(undefined, allowed))).toEqual([])
    expect(Result.getOrThrow(parseInclude("product, customer,product,,", allowed))).toEqual(["product", "customer"])
  })

  it("takes the list the HTTP contract decodes to, read the same way", () => {
    expect(Result.getOrThrow(parseInclude(["product", " customer", "product", ""], allowed))).toEqual([
      "product",
      "customer"
    ])
    expect(Result.getOrThrow(parseInclude([], allowed))).toEqual([])
    expect(pathsOf(parseInclude(["product", "reviews"], allowed))).toEqual(["include"])
  })

  it("rejects unknown names and says which", () => {
    const r = parseInclude("product,reviews,Customer", allowed)
    expect(pathsOf(r)).toEqual(["include"])
    expect(issuesOf(r)[0]!.message).toContain("\"reviews\", \"Customer\"")
    expect(pathsOf(parseInclude("collisions", productQuestionListEndpoint.includes))).toEqual(["include"])
  })
})

describe("search", () => {
  it("trims the term and treats a blank one as no search", () => {
    expect(Result.getOrThrow(parseSearch("  Mug "))).toBe("Mug")
    expect(Result.getOrThrow(parseSearch("   "))).toBeUndefined()
    expect(Result.getOrThrow(parseSearch(undefined))).toBeUndefined()
  })

  it("rejects over-long or non-text terms", () => {
    expect(pathsOf(parseSearch("x".repeat(201)))).toEqual(["search"])
    expect(pathsOf(parseSearch("a\u0000"))).toEqual(["search"])
    expect(pathsOf(parseSearch("a\udc00"))).toEqual(["search"])
  })
})

describe("parseListRequest", () => {
  it("gives the defaults for an empty query", () => {
    expect(Result.getOrThrow(parseListRequest({}, reviewListEndpoint, testIssuer()))).toEqual({
      endpoint: "reviews",
      limit: 50,
      sort: { field: "createdAt", direction: "desc", type: "timestamp" },
      filter: matchAll,
      search: undefined,
      after: undefined,
      include: [],
      issuer: testIssuer()
    })
  })

  it("takes typed values as well as strings", () => {
    const request = Result.getOrThrow(
      parseListRequest({ limit: 10, include: ["files", "product"] }, reviewListEndpoint, testIssuer())
    )
    expect(request.limit).toBe(10)
    expect(request.include).toEqual(["files", "product"])
  })

  it("reports every bad parameter at once", () => {
    const r = parseListRequest(
      { limit: "0", sort: "title", include: "nope", filter: "{\"ratng\":1}", search: "x".repeat(300) },
      reviewListEndpoint,
      testIssuer()
    )
    expect(pathsOf(r)).toEqual(["limit", "sort", "include", "search", "filter.ratng"])
    expect(Result.isFailure(r) && r.failure.message).toMatch(/^limit: .*4 more/)
  })

  it("accepts the cursor of a previous page only with the same sort, filter and search", () => {
    const params: ListParams = { sort: "-rating", filter: "{\"published\":true}", search: "mug", limit: "1" }
    const request = Result.getOrThrow(parseListRequest(params, reviewListEndpoint, testIssuer()))
    const rows = [{ id: "00000000-0000-4000-8000-000000000001", rating: 5 }, {
      id: "00000000-0000-4000-8000-000000000002",
      rating: 4
    }]
    const page = toPage(rows, request, (r) => ({ value: r.rating, id: r.id }))
    expect(page.data).toEqual([rows[0]])
    const cursor = page.nextCursor!
    expect(Result.getOrThrow(parseListRequest({ ...params, cursor }, reviewListEndpoint, testIssuer())).after).toEqual({
      value: 5,
      id: rows[0]!.id
    })
    // limit and include may change between pages
    expect(
      Result.isSuccess(
        parseListRequest({ ...params, cursor, limit: "100", include: "product" }, reviewListEndpoint, testIssuer())
      )
    )
      .toBe(true)
    for (
      const change of [{ sort: "rating" }, { filter: "{\"published\":false}" }, { search: "cup" }, {
        search: undefined
      }]
    ) {
      expect(pathsOf(parseListRequest({ ...params, ...change, cursor }, reviewListEndpoint, testIssuer()))).toEqual([
        "cursor"
      ])
    }
    expect(pathsOf(parseListRequest({ ...params, cursor }, productQuestionListEndpoint, testIssuer()))).toEqual([
      "sort"
    ])
    expect(pathsOf(parseListRequest({ ...params, cursor: cursor.slice(1) }, reviewListEndpoint, testIssuer()))).toEqual(
      ["cursor"]
    )
  })

  it("ends with a null cursor when the rows fit the page", () => {
    const request = Result.getOrThrow(parseListRequest({ limit: "2" }, reviewListEndpoint, testIssuer()))
    expect(toPage([1, 2], request, () => ({ value: null, id: "x" })).nextCursor).toBeNull()
  })
})

interface Row {
  readonly id: string
  readonly rating: number
  readonly moderatedAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly title: string | null
}

const access: MemoryListAccess<Row> = {
  get: (row, path) => (row as unknown as Record<string, unknown>)[path],
  id: (row) => row.id,
  searchValues: (row) => [row.title]
}

const arbRow: fc.Arbitrary<Row> = fc.record({
  id: fc.uuid().map((u) => u.toLowerCase()),
  rating: fc.integer({ min: 1, max: 5 }),
  moderatedAt: fc.option(fc.constantFrom("2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"), { nil: null }),
  createdAt: fc.constantFrom("2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", "2026-01-03T00:00:00.000Z"),
  updatedAt: fc.constantFrom("2026-01-03T00:00:00.000Z", "2026-01-04T00:00:00.000Z"),
  title: fc.option(fc.constantFrom("Great mug", "MUG", "cup", "Mugs"), { nil: null })
})

const walk = (rows: ReadonlyArray<Row>, params: ListParams): Array<Row> => {
  const seen: Array<Row> = []
  let cursor: string | undefined
  for (let pages = 0; pages < 1_000; pages++) {
    const request = Result.getOrThrow(parseListRequest({ ...params, cursor }, reviewListEndpoint, testIssuer()))
    const page = pageInMemory(rows, request, access)
    expect(page.data.length).toBeLessThanOrEqual(request.limit)
    seen.push(...page.data)
    if (page.nextCursor === null) return seen
    expect(page.data.length).toBe(request.limit)
    cursor = page.nextCursor
  }
  throw new Error("pagination did not end")
}

describe("pageInMemory", () => {
  const arbParams = fc.record({
    sort: fc.constantFrom(...reviewListEndpoint.sorts),
    limit: fc.integer({ min: 1, max: 6 }).map(String),
    search: fc.constantFrom(undefined, "mug", "CUP"),
    filter: fc.constantFrom(undefined, "{\"rating\":{\"$gte\":3}}", "{\"moderatedAt\":null}")
  })

  it("visits every matching record once, in keyset order, across pages", () => {
    fc.assert(
      fc.property(fc.uniqueArray(arbRow, { selector: (r) => r.id, maxLength: 25 }), arbParams, (rows, params) => {
        const seen = walk(rows, params)
        const request: ListRequest = Result.getOrThrow(
          parseListRequest({ ...params, limit: "250" }, reviewListEndpoint, testIssuer())
        )
        const all = pageInMemory(rows, request, access).data
        expect(seen.map((r) => r.id)).toEqual(all.map((r) => r.id))
        const position = (r: Row): CursorPosition => ({
          value: r[request.sort.field as "rating" | "createdAt" | "moderatedAt" | "updatedAt"],
          id: r.id
        })
        for (let i = 1; i < all.length; i++) {
          expect(compareKeyset(request.sort, position(all[i - 1]!), position(all[i]!))).toBeLessThan(0)
        }
        const expectedIds = rows
          .filter((r) =>
            params.search === undefined || (r.title ?? "").toLowerCase().includes(params.search.toLowerCase())
          )
          .filter((r) =>
            params.filter === undefined
              ? true
              : params.filter.includes("rating")
              ? r.rating >= 3
              : r.moderatedAt === null
          )
          .map((r) => r.id)
          .sort()
        expect(seen.map((r) => r.id).sort()).toEqual(expectedIds)
      }),
      { numRuns: 200 }
    )
  })

  it("stays stable when records are inserted or deleted between pages", () => {
    const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
    const row = (n: number, rating: number): Row => ({
      id: id(n),
      rating,
      moderatedAt: null,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      title: null
    })
    let rows = [row(1, 5), row(2, 4), row(3, 4), row(4, 3), row(5, 1)]
    const params = { sort: "-rating", limit: "2" }
    const first = pageInMemory(
      rows,
      Result.getOrThrow(parseListRequest(params, reviewListEndpoint, testIssuer())),
      access
    )
    expect(first.data.map((r) => r.id)).toEqual([id(1), id(3)])
    // delete the last record shown, insert one before the cursor and one after it
    rows = rows.filter((r) => r.id !== id(3)).concat([row(6, 5), row(0, 2)])
    const second = pageInMemory(
      rows,
      Result.getOrThrow(parseListRequest({ ...params, cursor: first.nextCursor! }, reviewListEndpoint, testIssuer())),
      access
    )
    expect(second.data.map((r) => r.id)).toEqual([id(2), id(4)])
  })
})
