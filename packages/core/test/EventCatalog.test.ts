import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { EVENT_NAMES, EventName, isEventName } from "../src/webhooks/EventCatalog.ts"

describe("EventCatalog", () => {
  it("has the 67 events of the spec's table with every .* expanded", () => {
    // 7 customer/order/product + 3 site + 9 tags + 3 review + 3 question + 3 answer + 3 surveyFlow + 1 survey
    // + 3 membership + 1 transaction + 5 reward + 1 points + 3 stampCard + 1 referral + 9 loyalty config
    // + 3 wishlist + 9 emailTemplate/quickFilter/webhook
    expect(EVENT_NAMES.length).toBe(67)
  })

  it("has no duplicates", () => {
    expect(new Set(EVENT_NAMES).size).toBe(EVENT_NAMES.length)
  })

  it("names every event resource.action in camelCase", () => {
    for (const name of EVENT_NAMES) expect(name).toMatch(/^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/)
  })

  it.each([
    "customer.updated",
    "productVariant.updated",
    "review.created",
    "review.updated",
    "review.deleted",
    "productQuestion.updated",
    "productQuestionAnswer.deleted",
    "loyaltyMembership.tierChanged",
    "loyaltyPoints.expiringSoon",
    "stampCard.completed",
    "referral.updated",
    "survey.deleted",
    ...[
      "customerTag",
      "orderTag",
      "productTag",
      "loyaltyProgram",
      "loyaltyRule",
      "loyaltyTier",
      "emailTemplate",
      "quickFilter",
      "webhook",
      "site",
      "wishlist",
      "surveyFlow"
    ].flatMap((r) => [`${r}.created`, `${r}.updated`, `${r}.deleted`])
  ])("contains %s", (name) => {
    expect(EVENT_NAMES).toContain(name)
    expect(isEventName(name)).toBe(true)
    expect(Schema.decodeUnknownSync(EventName)(name)).toBe(name)
  })

  it.each([
    "customer.created", // the spec lists only updated and deleted for customers
    "order.created",
    "productVariant.deleted",
    "survey.created",
    "referral.created",
    "customerTag.*",
    "review.*",
    "Review.created",
    "review.created ",
    "review",
    "",
    "reviewcreated"
  ])("rejects %j", (name) => {
    expect(isEventName(name)).toBe(false)
    expect(Result.isFailure(Schema.decodeUnknownResult(EventName)(name))).toBe(true)
  })

  it("rejects non-strings", () => {
    for (const u of [null, undefined, 1, {}, ["review.created"]]) {
      expect(isEventName(u)).toBe(false)
      expect(Schema.is(EventName)(u)).toBe(false)
    }
  })

  it("agrees with the Schema on every name", () => {
    for (const name of EVENT_NAMES) expect(Schema.is(EventName)(name)).toBe(true)
  })
})

// Type-level: the Schema's type is the union of the names, not `string`.
const _known: EventName = "review.created"
// @ts-expect-error an unknown name is not an EventName
const _unknown: EventName = "review.published"
void _known
void _unknown
