/**
 * The catalog of webhook event names: the spec's Events table, in its order, with every `resource.*` expanded to
 * `.created`, `.updated`, `.deleted` (docs/DECISIONS.md §7). Subscriptions must name events from this list exactly
 * (unknown names are a 400), and `GET /webhook-events` returns it.
 */
import { Schema } from "effect"

/** The three events a `resource.*` row of the spec stands for. */
const crud = <R extends string>(resource: R) =>
  [`${resource}.created`, `${resource}.updated`, `${resource}.deleted`] as const

export const EVENT_NAMES = [
  "customer.updated",
  "customer.deleted",
  "order.updated",
  "order.deleted",
  "product.updated",
  "product.deleted",
  "productVariant.updated",
  ...crud("site"),
  ...crud("customerTag"),
  ...crud("orderTag"),
  ...crud("productTag"),
  ...crud("review"),
  ...crud("productQuestion"),
  ...crud("productQuestionAnswer"),
  ...crud("surveyFlow"),
  "survey.deleted",
  "loyaltyMembership.created",
  "loyaltyMembership.tierChanged",
  "loyaltyMembership.deleted",
  "loyaltyTransaction.created",
  "loyaltyReward.issued",
  "loyaltyReward.redeemed",
  "loyaltyReward.revoked",
  "loyaltyReward.expired",
  "loyaltyReward.expiringSoon",
  "loyaltyPoints.expiringSoon",
  "stampCard.created",
  "stampCard.updated",
  "stampCard.completed",
  "referral.updated",
  ...crud("loyaltyProgram"),
  ...crud("loyaltyRule"),
  ...crud("loyaltyTier"),
  ...crud("wishlist"),
  ...crud("emailTemplate"),
  ...crud("quickFilter"),
  ...crud("webhook")
] as const

export const EventName = Schema.Literals(EVENT_NAMES).annotate({ identifier: "EventName" })
export type EventName = typeof EventName.Type

const known: ReadonlySet<string> = new Set(EVENT_NAMES)

export const isEventName = (u: unknown): u is EventName => typeof u === "string" && known.has(u)

/**
 * The names this service's own use-cases record, in catalog order. The rest of the catalog concerns records an
 * embedding host owns (loyalty, wishlists, tags…): they fire only when the host declares and records them
 * (`HostEvents`). `test/EventCatalog.test.ts` checks this list against the names the sources record.
 */
export const SERVICE_EVENT_NAMES: ReadonlyArray<EventName> = EVENT_NAMES.filter((name) =>
  [
    "customer.updated",
    "order.updated",
    "order.deleted",
    "product.updated",
    "product.deleted",
    "site.created",
    "review.created",
    "review.updated",
    "review.deleted",
    "productQuestion.created",
    "productQuestion.updated",
    "productQuestion.deleted",
    "productQuestionAnswer.created",
    "productQuestionAnswer.updated",
    "productQuestionAnswer.deleted",
    "surveyFlow.created",
    "surveyFlow.updated",
    "surveyFlow.deleted",
    "survey.deleted",
    "emailTemplate.created",
    "emailTemplate.updated",
    "emailTemplate.deleted",
    "webhook.created",
    "webhook.updated",
    "webhook.deleted"
  ].includes(name)
)
