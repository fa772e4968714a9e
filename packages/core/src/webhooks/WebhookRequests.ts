/** What the webhook endpoints accept (docs/DECISIONS.md §7, §11): URLs, event lists and secrets, bounded. */
import { Schema } from "effect"
import { BoundedArray } from "../kernel/BoundedArray.ts"
import { EVENT_NAMES } from "./EventCatalog.ts"
import { BoundedText, characterCount, textProblem } from "../kernel/Text.ts"

/**
 * A webhook's HMAC secret: long enough to resist guessing, short enough to be a secret and not a payload. Counted in
 * characters (code points), as JSON Schema's `minLength` counts them, so the document states the rule exactly.
 */
const HMAC_SECRET_MIN_LENGTH = 16
const HMAC_SECRET_MAX_LENGTH = 256
/** More than the event catalog holds, so any subscription fits, yet a bounded amount of work to check. */
export const MAX_SUBSCRIBED_EVENTS = 100
const WEBHOOK_URL_MAX_LENGTH = 2048

const secretLength =
  `must be ${HMAC_SECRET_MIN_LENGTH} to ${HMAC_SECRET_MAX_LENGTH} characters; send null to remove the secret`

/** Why `secret` cannot be a webhook secret, or undefined. */
export const hmacSecretProblem = (secret: string): string | undefined => {
  // A character is at most two code units: the cheap bound first, so an over-long value is never counted.
  if (secret.length < HMAC_SECRET_MIN_LENGTH || secret.length > 2 * HMAC_SECRET_MAX_LENGTH) return secretLength
  const problem = textProblem(secret)
  if (problem !== undefined) return problem
  const n = characterCount(secret)
  return n < HMAC_SECRET_MIN_LENGTH || n > HMAC_SECRET_MAX_LENGTH ? secretLength : undefined
}

const HmacSecret = Schema.String.check(
  Schema.isMaxLength(2 * HMAC_SECRET_MAX_LENGTH, { message: secretLength }).abort(),
  Schema.makeFilter(hmacSecretProblem, {
    toJsonSchema: () => ({ minLength: HMAC_SECRET_MIN_LENGTH, maxLength: HMAC_SECRET_MAX_LENGTH }),
    // The length rule lives in the predicate, so generated secrets are told it: otherwise nearly all are too short.
    arbitraryConstraint: { minCodePoints: HMAC_SECRET_MIN_LENGTH, maxCodePoints: HMAC_SECRET_MAX_LENGTH }
  })
)

/** An absolute URL; the webhook rules check the rest (https, a public host: docs/DECISIONS.md §7). */
const WebhookUrl = BoundedText(WEBHOOK_URL_MAX_LENGTH, 1).check(
  Schema.makeFilter(() => undefined, { toJsonSchema: () => ({ format: "uri" }) })
)
/**
 * Each name is checked against the catalog by the webhook rules (a 400 naming the unknown ones), not by this
 * schema; the OpenAPI document lists the catalog's names so generated clients type them.
 */
const EventNameInput = BoundedText(200).check(
  Schema.makeFilter(() => true, { toJsonSchema: () => ({ enum: [...EVENT_NAMES] }) })
)
const EventNames = BoundedArray(
  EventNameInput,
  MAX_SUBSCRIBED_EVENTS,
  `list at most ${MAX_SUBSCRIBED_EVENTS} event names`,
  { min: 1, message: "list at least one event name; GET /webhook-events lists them" }
)

/** `POST /webhooks`. `hmacSecret` omitted or null: deliveries are unsigned. */
export const CreateWebhook = Schema.Struct({
  url: WebhookUrl,
  events: EventNames,
  hmacSecret: Schema.optionalKey(Schema.NullOr(HmacSecret))
}).annotate({ identifier: "CreateWebhook" })
export type CreateWebhook = typeof CreateWebhook.Type

/**
 * `PATCH /webhooks/{id}`: only sent fields change. `events` replaces the subscription wholesale; `hmacSecret`
 * omitted keeps the secret, a string replaces it, `null` removes it.
 */
export const UpdateWebhook = Schema.Struct({
  url: Schema.optionalKey(WebhookUrl),
  events: Schema.optionalKey(EventNames),
  hmacSecret: Schema.optionalKey(Schema.NullOr(HmacSecret))
}).annotate({ identifier: "UpdateWebhook" })
export type UpdateWebhook = typeof UpdateWebhook.Type

/** Longest overlap of a rotation: a week (docs/DECISIONS.md §17). */
const MAX_ROTATION_OVERLAP_SECONDS = 604_800
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400

/** `POST /webhooks/{id}/rotate-secret`: the new secret, and how long the replaced one still signs beside it. */
export const RotateWebhookSecret = Schema.Struct({
  hmacSecret: HmacSecret,
  overlapSeconds: Schema.optionalKey(
    Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: MAX_ROTATION_OVERLAP_SECONDS })))
  )
}).annotate({ identifier: "RotateWebhookSecret" })
export type RotateWebhookSecret = typeof RotateWebhookSecret.Type
