/**
 * The arrival rules of shopper reviews (docs/DECISIONS.md §57) as pure functions: each flag at its threshold and not
 * below it, auto-publishing from the review settings, the seconds a form took, and how texts are compared.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Setup, Storefront } from "@feedback/core"

const quiet: Storefront.ArrivalFacts = { duplicateOf: null, sameIpAddress: 0, sameFingerprint: 0, submitSeconds: null }
const codes = (facts: Partial<Storefront.ArrivalFacts>) =>
  Storefront.arrivalFlags({ ...quiet, ...facts }).map((f) => f.code)

describe("arrival flags", () => {
  it("raise nothing for an ordinary review", () => {
    expect(Storefront.arrivalFlags(quiet)).toEqual([])
    expect(codes({ submitSeconds: 60, sameIpAddress: 1, sameFingerprint: 1 })).toEqual([])
  })

  it("fire each at its documented threshold and not below it", () => {
    const t = Storefront.arrivalThresholds
    expect(codes({ sameIpAddress: t.ipCollisions - 1 })).toEqual([])
    expect(codes({ sameIpAddress: t.ipCollisions })).toEqual(["ip_collision"])
    expect(codes({ sameFingerprint: t.fingerprintCollisions - 1 })).toEqual([])
    expect(codes({ sameFingerprint: t.fingerprintCollisions })).toEqual(["fingerprint_collision"])
    expect(codes({ submitSeconds: t.minSubmitSeconds })).toEqual([])
    expect(codes({ submitSeconds: t.minSubmitSeconds - 0.001 })).toEqual(["too_fast"])
    expect(codes({ duplicateOf: "r-1" })).toEqual(["duplicate"])
  })

  it("list every flag that fires, in rule order, each with a detail and a score of 1 at its threshold", () => {
    const flags = Storefront.arrivalFlags({
      duplicateOf: "r-1",
      sameIpAddress: Storefront.arrivalThresholds.ipCollisions,
      sameFingerprint: 2 * Storefront.arrivalThresholds.fingerprintCollisions,
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
  const on = { ...Setup.defaultReviewSettings, autoPublish: true, autoPublishMinRating: 4 }

  it("only with autoPublish, an unflagged review at or above the minimum rating", () => {
    const review = { rating: 5, verifiedBuyer: false, flagged: false }
    expect(Storefront.publishedOnArrival(Setup.defaultReviewSettings, review)).toBe(false)
    expect(Storefront.publishedOnArrival(on, review)).toBe(true)
    expect(Storefront.publishedOnArrival(on, { ...review, rating: 4 })).toBe(true)
    expect(Storefront.publishedOnArrival(on, { ...review, rating: 3 })).toBe(false)
    expect(Storefront.publishedOnArrival(on, { ...review, flagged: true })).toBe(false)
  })

  it("from verified buyers only when the settings say so", () => {
    const verifiedOnly = { ...on, autoPublishVerifiedOnly: true }
    expect(Storefront.publishedOnArrival(verifiedOnly, { rating: 5, verifiedBuyer: false, flagged: false })).toBe(false)
    expect(Storefront.publishedOnArrival(verifiedOnly, { rating: 5, verifiedBuyer: true, flagged: false })).toBe(true)
  })

  it("never publishes a flagged review, whatever the settings and rating", () => {
    fc.assert(fc.property(
      fc.boolean(),
      fc.integer({ min: 1, max: 5 }),
      fc.boolean(),
      fc.integer({ min: 1, max: 5 }),
      fc.boolean(),
      (autoPublish, autoPublishMinRating, autoPublishVerifiedOnly, rating, verifiedBuyer) =>
        !Storefront.publishedOnArrival({ autoPublish, autoPublishMinRating, autoPublishVerifiedOnly }, {
          rating,
          verifiedBuyer,
          flagged: true
        })
    ))
  })
})

describe("submission facts", () => {
  it("seconds from the form's rendering, never negative, null without it", () => {
    expect(Storefront.submitSecondsOf(undefined, 10_000)).toBeNull()
    expect(Storefront.submitSecondsOf(1_000, 43_500)).toBe(42.5)
    expect(Storefront.submitSecondsOf(50_000, 10_000)).toBe(0)
  })

  it("texts compare without case and runs of white space; a review without text is never a duplicate", () => {
    expect(Storefront.comparableText({ title: " Great ", body: "Very\n\n good" })).toBe(
      Storefront.comparableText({ title: "great", body: "very good" })
    )
    expect(Storefront.comparableText({ title: "a", body: null })).not.toBe(
      Storefront.comparableText({ title: null, body: "a" })
    )
    expect(Storefront.hasText({ title: null, body: "  " })).toBe(false)
    expect(Storefront.hasText({ title: null, body: "x" })).toBe(true)
  })

  it("a shopper's one name becomes a first name and a last name", () => {
    expect(Storefront.splitAuthorName("Ada")).toEqual({ firstName: "Ada", lastName: null })
    expect(Storefront.splitAuthorName("  Ada  King Lovelace ")).toEqual({ firstName: "Ada", lastName: "King Lovelace" })
  })
})
