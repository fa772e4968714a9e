/**
 * The arrival rules of shopper reviews (docs/DECISIONS.md §57) as pure functions: each flag at its threshold and not
 * below it, auto-publishing from the review settings, the seconds a form took, and how texts are compared.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type ArrivalFacts,
  arrivalFlags,
  arrivalThresholds,
  comparableText,
  defaultReviewSettings,
  hasText,
  publishedOnArrival,
  splitAuthorName,
  submitSecondsOf
} from "@feedback/core"

const quiet: ArrivalFacts = { duplicateOf: null, sameIpAddress: 0, sameFingerprint: 0, submitSeconds: null }
const codes = (facts: Partial<ArrivalFacts>) => arrivalFlags({ ...quiet, ...facts }).map((f) => f.code)

describe("arrival flags", () => {
  it("raise nothing for an ordinary review", () => {
    expect(arrivalFlags(quiet)).toEqual([])
    expect(codes({ submitSeconds: 60, sameIpAddress: 1, sameFingerprint: 1 })).toEqual([])
  })

  it("fire each at its documented threshold and not below it", () => {
    const t = arrivalThresholds
    expect(codes({ sameIpAddress: t.ipCollisions - 1 })).toEqual([])
    expect(codes({ sameIpAddress: t.ipCollisions })).toEqual(["ip_collision"])
    expect(codes({ sameFingerprint: t.fingerprintCollisions - 1 })).toEqual([])
    expect(codes({ sameFingerprint: t.fingerprintCollisions })).toEqual(["fingerprint_collision"])
    expect(codes({ submitSeconds: t.minSubmitSeconds })).toEqual([])
    expect(codes({ submitSeconds: t.minSubmitSeconds - 0.001 })).toEqual(["too_fast"])
    expect(codes({ duplicateOf: "r-1" })).toEqual(["duplicate"])
  })

  it("list every flag that fires, in rule order, each with a detail and a score of 1 at its threshold", () => {
    const flags = arrivalFlags({
      duplicateOf: "r-1",
      sameIpAddress: arrivalThresholds.ipCollisions,
      sameFingerprint: 2 * arrivalThresholds.fingerprintCollisions,
      submitSeconds: 0
    })
    expect(flags.map((f) => [f.code, f.score])).toEqual([
      ["duplicate", 1],
      ["ip_collision", 1],
      ["fingerprint_collision", 2],
      ["too_fast", 1]
    ])
    expect(flags.every((f) => f.detail.length > 0)).toBe(true)
    expect(flags[0]!.detail).toContain("r-1")
  })
})

describe("published on arrival", () => {
  const on = { ...defaultReviewSettings, autoPublish: true, autoPublishMinRating: 4 }

  it("only with autoPublish, an unflagged review at or above the minimum rating", () => {
    const review = { rating: 5, verifiedBuyer: false, flagged: false }
    expect(publishedOnArrival(defaultReviewSettings, review)).toBe(false)
    expect(publishedOnArrival(on, review)).toBe(true)
    expect(publishedOnArrival(on, { ...review, rating: 4 })).toBe(true)
    expect(publishedOnArrival(on, { ...review, rating: 3 })).toBe(false)
    expect(publishedOnArrival(on, { ...review, flagged: true })).toBe(false)
  })

  it("from verified buyers only when the settings say so", () => {
    const verifiedOnly = { ...on, autoPublishVerifiedOnly: true }
    expect(publishedOnArrival(verifiedOnly, { rating: 5, verifiedBuyer: false, flagged: false })).toBe(false)
    expect(publishedOnArrival(verifiedOnly, { rating: 5, verifiedBuyer: true, flagged: false })).toBe(true)
  })

  it("never publishes a flagged review, whatever the settings and rating", () => {
    fc.assert(fc.property(
      fc.boolean(),
      fc.integer({ min: 1, max: 5 }),
      fc.boolean(),
      fc.integer({ min: 1, max: 5 }),
      fc.boolean(),
      (autoPublish, autoPublishMinRating, autoPublishVerifiedOnly, rating, verifiedBuyer) =>
        !publishedOnArrival({ autoPublish, autoPublishMinRating, autoPublishVerifiedOnly }, {
          rating,
          verifiedBuyer,
          flagged: true
        })
    ))
  })
})

describe("submission facts", () => {
  it("seconds from the form's rendering, never negative, null without it", () => {
    expect(submitSecondsOf(undefined, 10_000)).toBeNull()
    expect(submitSecondsOf(1_000, 43_500)).toBe(42.5)
    expect(submitSecondsOf(50_000, 10_000)).toBe(0)
  })

  it("texts compare without case and runs of white space; a review without text is never a duplicate", () => {
    expect(comparableText({ title: " Great ", body: "Very\n\n good" })).toBe(
      comparableText({ title: "great", body: "very good" })
    )
    expect(comparableText({ title: "a", body: null })).not.toBe(comparableText({ title: null, body: "a" }))
    expect(hasText({ title: null, body: "  " })).toBe(false)
    expect(hasText({ title: null, body: "x" })).toBe(true)
  })

  it("a shopper's one name becomes a first name and a last name", () => {
    expect(splitAuthorName("Ada")).toEqual({ firstName: "Ada", lastName: null })
    expect(splitAuthorName("  Ada  King Lovelace ")).toEqual({ firstName: "Ada", lastName: "King Lovelace" })
  })
})
