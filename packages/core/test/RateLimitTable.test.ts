import { describe, expect, it } from "vitest"
import {
  bucketsFor,
  costOf,
  costTable,
  DEFAULT_COST,
  endpointBucketTable,
  endpointKey,
  ORG_BUCKET_KEY
} from "../src/ratelimit/RateLimitTable.ts"

describe("costOf (spec: Limits, token costs)", () => {
  it.each([
    ["POST", "/customers/import"],
    ["POST", "/orders/import"],
    ["POST", "/products/import"],
    ["POST", "/reviews/import"],
    ["POST", "/wishlists/import"],
    ["POST", "/loyalty-memberships/import"],
    ["POST", "/loyalty-history"],
    ["POST", "/import-jobs"],
    ["POST", "/export-jobs"]
  ])("%s %s costs 10", (method, path) => {
    expect(costOf(method, path)).toBe(10)
  })

  it.each([
    ["POST", "/analytics/query"],
    ["PATCH", "/customers/bulk-update"],
    ["PATCH", "/orders/bulk-update"],
    ["PATCH", "/products/bulk-update"],
    ["PATCH", "/reviews/bulk-update"],
    ["POST", "/loyalty-activity/bulk-expire"]
  ])("%s %s costs 5", (method, path) => {
    expect(costOf(method, path)).toBe(5)
  })

  it.each([
    ["GET", "/reviews"],
    ["GET", "/reviews/{id}"],
    ["PATCH", "/reviews/{id}"],
    ["DELETE", "/reviews/{id}"],
    ["POST", "/reviews/{id}/response"],
    ["GET", "/product-questions"],
    ["POST", "/product-questions/{id}/answers"],
    ["GET", "/organization/setup"],
    ["POST", "/webhooks"],
    ["GET", "/organization"],
    ["POST", "/loyalty-events"],
    ["GET", "/customers/import"], // a different method of a costly path is "everything else"
    ["GET", "/loyalty-history"]
  ])("%s %s costs 1", (method, path) => {
    expect(costOf(method, path)).toBe(1)
  })

  it("the table holds exactly the spec's 9 ten-token and 6 five-token endpoints; the default is 1", () => {
    const values = Object.values(costTable)
    expect(values.filter((c) => c === 10)).toHaveLength(9)
    expect(values.filter((c) => c === 5)).toHaveLength(6)
    expect(values.every((c) => c === 1 || c === 5 || c === 10)).toBe(true)
    expect(DEFAULT_COST).toBe(1)
  })

  it("accepts a router's :id form, a lower-case method and a trailing slash", () => {
    expect(endpointKey("get", "/reviews/:id/response")).toBe("GET /reviews/{id}/response")
    expect(endpointKey("POST", "/reviews/import/")).toBe("POST /reviews/import")
    expect(endpointKey("GET", "/")).toBe("GET /")
    expect(costOf("post", "/reviews/import/")).toBe(10)
    expect(costOf("patch", "/reviews/bulk-update")).toBe(5)
  })

  it("every key of the tables is already canonical", () => {
    for (const key of [...Object.keys(costTable), ...Object.keys(endpointBucketTable)]) {
      const [method, path] = key.split(" ")
      expect(endpointKey(method!, path!)).toBe(key)
    }
  })
})

describe("bucketsFor (spec: Limits, per-endpoint buckets)", () => {
  const plan = { apiRequestsPerMinute: 600 }

  it("an ordinary endpoint spends from the organization bucket only, sized by the plan", () => {
    expect(bucketsFor("GET", "/reviews", plan)).toEqual([
      { key: ORG_BUCKET_KEY, spec: { ceiling: 600, refillPerSecond: 10 } }
    ])
    expect(bucketsFor("GET", "/reviews", { apiRequestsPerMinute: 120 })[0]!.spec).toEqual({
      ceiling: 120,
      refillPerSecond: 2
    })
    expect(ORG_BUCKET_KEY).toBe("org")
  })

  it("POST /loyalty-events: organization first, then 120 burst at 2 per second", () => {
    expect(bucketsFor("POST", "/loyalty-events", plan)).toEqual([
      { key: "org", spec: { ceiling: 600, refillPerSecond: 10 } },
      { key: "POST /loyalty-events", spec: { ceiling: 120, refillPerSecond: 2 } }
    ])
  })

  it("POST /loyalty-stamps: 120 burst at 2 per second", () => {
    expect(bucketsFor("post", "/loyalty-stamps/", plan)[1]).toEqual({
      key: "POST /loyalty-stamps",
      spec: { ceiling: 120, refillPerSecond: 2 }
    })
  })

  it("POST /loyalty-history: 30 burst at 1 per second, whatever the plan", () => {
    const expected = { key: "POST /loyalty-history", spec: { ceiling: 30, refillPerSecond: 1 } }
    expect(bucketsFor("POST", "/loyalty-history", plan)[1]).toEqual(expected)
    expect(
      bucketsFor("POST", "/loyalty-history", {
        apiRequestsPerMinute: 6000,
        loyaltyEventsPerMinute: 1,
        loyaltyStampsPerMinute: 1
      })[1]
    ).toEqual(expected)
  })

  it("the plan allowances size their endpoint buckets (ceiling N, N/60 per second)", () => {
    const big = { apiRequestsPerMinute: 600, loyaltyEventsPerMinute: 300, loyaltyStampsPerMinute: 60 }
    expect(bucketsFor("POST", "/loyalty-events", big)[1]!.spec).toEqual({ ceiling: 300, refillPerSecond: 5 })
    expect(bucketsFor("POST", "/loyalty-stamps", big)[1]!.spec).toEqual({ ceiling: 60, refillPerSecond: 1 })
    // Each allowance sizes only its own endpoint.
    expect(bucketsFor("POST", "/loyalty-events", { apiRequestsPerMinute: 600, loyaltyStampsPerMinute: 60 })[1]!.spec)
      .toEqual({ ceiling: 120, refillPerSecond: 2 })
  })

  it("other methods of those paths have no endpoint bucket", () => {
    expect(bucketsFor("GET", "/loyalty-events", plan)).toHaveLength(1)
    expect(bucketsFor("DELETE", "/loyalty-stamps", plan)).toHaveLength(1)
  })
})
