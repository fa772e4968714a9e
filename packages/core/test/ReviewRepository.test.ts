/**
 * The include loader: one loader call per requested include for a whole page, none for includes not asked for or
 * with nothing to look up, and extras present only when requested.
 */
import { Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import type { ImportJobId, OrganizationId, ProductId, ReviewId } from "../src/kernel/Ids.ts"
import { defaultListRequest } from "../src/kernel/ListQuery.ts"
import { testIssuer } from "@feedback/testing"
import type { ReviewInclude, ReviewRecord } from "../src/reviews/Review.ts"
import { newReview, reviewIncludeNames } from "../src/reviews/Review.ts"
import {
  attachIncludes,
  type ReviewIncludeLoaders,
  ReviewRepository,
  type StoredReview
} from "../src/reviews/ReviewRepository.ts"
import type { Timestamp } from "../src/kernel/Timestamp.ts"
import { reviewListEndpoint } from "../src/reviews/ReviewLists.ts"

const ORG = "00000000-0000-4000-8000-000000000001" as OrganizationId

const record = (i: number, overrides: Partial<ReviewRecord> = {}): ReviewRecord =>
  newReview(
    `00000000-0000-4000-8000-${String(i).padStart(12, "0")}` as ReviewId,
    "2026-01-01T00:00:00.000Z" as Timestamp,
    {
      productId: `00000000-0000-4000-9000-00000000000${i % 2}` as ProductId,
      rating: 5,
      published: true,
      ipAddress: i % 3 === 0 ? null : `10.0.0.${i % 2}`,
      browserFingerprint: `fp${i % 2}`,
      ...overrides
    }
  )

const countingLoaders = () => {
  const calls: Array<{ readonly name: string; readonly keys: ReadonlyArray<string> }> = []
  const track =
    <A>(name: string, answer: (keys: ReadonlyArray<string>) => ReadonlyMap<string, A>) =>
    (_org: OrganizationId, keys: ReadonlyArray<string>) =>
      Effect.sync(() => {
        calls.push({ name, keys })
        return answer(keys)
      })
  const loaders: ReviewIncludeLoaders = {
    importJobs: track(
      "importJobs",
      (keys) =>
        new Map(
          keys.map((
            k
          ) => [k, {
            id: k as ImportJobId,
            type: "reviews",
            action: "create",
            createdAt: "2026-01-01T00:00:00.000Z" as Timestamp
          }])
        )
    ),
    customers: track("customers", () => new Map()),
    products: track("products", () => new Map()),
    responses: track("responses", () => new Map()),
    files: track("files", () => new Map()),
    answers: track("answers", () => new Map()),
    collisions: (_org, keys) =>
      Effect.sync(() => {
        calls.push({ name: "collisions", keys: [...keys.browserFingerprints, ...keys.ipAddresses] })
        return {
          browserFingerprint: new Map(keys.browserFingerprints.map((k) => [k, 5])),
          ipAddress: new Map(keys.ipAddresses.map((k) => [k, 1]))
        }
      })
  }
  return { calls, loaders }
}

const page: ReadonlyArray<StoredReview> = Array.from({ length: 50 }, (_, i) => ({
  record: record(i),
  importJobId: i < 10 ? ("00000000-0000-4000-a000-000000000001" as ImportJobId) : null,
  importRow: i < 10 ? i : null
}))

describe("attachIncludes", () => {
  it("calls each requested loader once per page with distinct keys, and no other loader", async () => {
    const { calls, loaders } = countingLoaders()
    const result = await Effect.runPromise(attachIncludes(ORG, page, [...reviewIncludeNames], loaders))
    expect(calls.map((c) => c.name).sort()).toEqual([
      "answers",
      "collisions",
      "files",
      "importJobs",
      "products",
      "responses"
    ])
    expect(calls.find((c) => c.name === "products")!.keys).toHaveLength(2)
    expect(calls.find((c) => c.name === "importJobs")!.keys).toHaveLength(1)
    expect(calls.find((c) => c.name === "responses")!.keys).toHaveLength(50)
    // No review has a customer: nothing to look up, so no call; every review says null.
    expect(result.every((r) => r.customer === null)).toBe(true)
    expect(result[3]!.importJob).toMatchObject({ row: 3, type: "reviews" })
    expect(result[20]!.importJob).toBeNull()
    expect(result[1]!.collisions).toEqual({ browserFingerprint: 4, ipAddress: 0 })
    expect(result[0]!.collisions).toEqual({ browserFingerprint: 4, ipAddress: 0 })
    expect(result[5]!.files).toEqual([])
    expect(result[5]!.response).toBeNull()
  })

  it("without include calls nothing and adds no key", async () => {
    const { calls, loaders } = countingLoaders()
    const result = await Effect.runPromise(attachIncludes(ORG, page, [], loaders))
    expect(calls).toEqual([])
    for (const r of result) for (const name of reviewIncludeNames) expect(name in r).toBe(false)
  })

  it("adds exactly the requested keys, in any combination", async () => {
    for (const name of reviewIncludeNames) {
      const { calls, loaders } = countingLoaders()
      const include: ReadonlyArray<ReviewInclude> = [name]
      const [first] = await Effect.runPromise(attachIncludes(ORG, page, include, loaders))
      expect(reviewIncludeNames.filter((n) => n in first!)).toEqual([name])
      expect(calls.length).toBeLessThanOrEqual(1)
    }
  })

  it("the repository composes page and includes; get of a missing review is none", async () => {
    const { calls, loaders } = countingLoaders()
    const repo = ReviewRepository.fromReader({
      page: () => Effect.succeed({ data: page.slice(0, 3), nextCursor: "next" }),
      find: (_org, id) => Effect.succeed(Option.fromUndefinedOr(page.find((r) => r.record.id === id))),
      loaders
    })
    const request = {
      ...defaultListRequest(reviewListEndpoint, testIssuer()),
      include: ["files", "collisions"] as const
    }
    const listed = await Effect.runPromise(repo.list(ORG, request))
    expect(listed.nextCursor).toBe("next")
    expect(listed.data).toHaveLength(3)
    expect(calls.map((c) => c.name).sort()).toEqual(["collisions", "files"])
    const missing = await Effect.runPromise(
      repo.get(ORG, "00000000-0000-4000-8000-0000000000ff" as ReviewId, ["files"])
    )
    expect(Option.isNone(missing)).toBe(true)
  })
})
