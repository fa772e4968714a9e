/**
 * Webhook signatures (spec: Events, rule 6; docs/DECISIONS.md §7): `X-Webhook-Signature: sha256=<hex>`, where `<hex>` is
 * the lowercase hex HMAC-SHA256 of the exact body bytes keyed with the webhook's secret. The delivery worker signs;
 * `verifyWebhookSignature` is what a receiver runs (and what our tests run against captured deliveries).
 *
 * node:crypto is pure computation here, not I/O, so this stays in core. A string body or secret is taken as its
 * UTF-8 bytes, which is what goes on the wire for a JSON body.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export const WEBHOOK_SIGNATURE_HEADER = "X-Webhook-Signature"

const PREFIX = "sha256="
const HEX_LENGTH = 64
const HEADER_LENGTH = PREFIX.length + HEX_LENGTH
const hexDigits = /^[0-9a-fA-F]{64}$/

const hmac = (rawBody: string | Uint8Array, secret: string): Buffer =>
  createHmac("sha256", secret).update(rawBody).digest()

/** The header value for a body: `sha256=` followed by 64 lowercase hex digits. */
export const signWebhookBody = (rawBody: string | Uint8Array, secret: string): string =>
  PREFIX + hmac(rawBody, secret).toString("hex")

/**
 * Whether `header` is the signature of `rawBody` under `secret`. Accepts exactly `sha256=` plus 64 hex digits
 * (either case); anything else, including a missing header, is false, never an exception. The digests are
 * compared with `timingSafeEqual` on two 32-byte buffers, so the time taken does not depend on how many leading
 * bytes of a forged signature are right. (The format checks before it only look at the header's shape, which
 * reveals nothing about the secret.)
 */
export const verifyWebhookSignature = (
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string
): boolean => {
  if (typeof header !== "string" || header.length !== HEADER_LENGTH || !header.startsWith(PREFIX)) return false
  const hex = header.slice(PREFIX.length)
  if (!hexDigits.test(hex)) return false
  const expected = hmac(rawBody, secret)
  const given = Buffer.from(hex, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com, docs/DECISIONS.md §17): `v1,` + base64 of
 * HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the secret's UTF-8 bytes. A receiver using a
 * Standard Webhooks library configures `whsec_` + base64 of the secret. Binding the id and the time into the
 * signature is what lets receivers refuse replays, which the body-only `X-Webhook-Signature` cannot.
 */
export const standardWebhookSignature = (
  webhookId: string,
  timestampSeconds: number,
  rawBody: string,
  secret: string
): string => "v1," + createHmac("sha256", secret).update(`${webhookId}.${timestampSeconds}.${rawBody}`).digest("base64")

/** The secret as a Standard Webhooks library takes it. */
export const standardWebhookSecret = (secret: string): string =>
  "whsec_" + Buffer.from(secret, "utf8").toString("base64")
