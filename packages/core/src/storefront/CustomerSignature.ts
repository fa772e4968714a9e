/**
 * Signed customer calls (shared §18, docs/STOREFRONT.md): the merchant's backend signs a customer's email with the
 * publishable key's signing secret, and the storefront believes the email only with a valid, fresh signature.
 *
 *   signature = lowercase hex HMAC-SHA256(key = UTF-8(signingSecret), message = UTF-8(`${key}\n${email}\n${timestamp}`))
 *
 * valid from 300 s before to 86,400 s after `timestamp` (Unix seconds), compared in constant time. A pure function
 * over its inputs and the current time, so the documented test vectors are checked without any server.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/** A signature may be used from this many seconds before its timestamp (clock skew of the signing server)… */
export const SIGNATURE_EARLY_SECONDS = 300
/** …to this many after it (a page signed once may stay open for a day). */
export const SIGNATURE_LIFETIME_SECONDS = 86_400

export interface SignedCustomer {
  readonly publishableKey: string
  readonly customerEmail: string
  /** Unix seconds, as sent (decimal digits). */
  readonly timestamp: string
  /** 64 lowercase hex digits. */
  readonly signature: string
}

/** The exact string that is signed. */
export const canonicalCustomerString = (publishableKey: string, customerEmail: string, timestamp: string): string =>
  `${publishableKey}\n${customerEmail}\n${timestamp}`

/** The signature of a customer call (what the merchant's backend computes). */
export const signCustomer = (
  signingSecret: string,
  publishableKey: string,
  customerEmail: string,
  timestamp: string
): string =>
  createHmac("sha256", Buffer.from(signingSecret, "utf8"))
    .update(Buffer.from(canonicalCustomerString(publishableKey, customerEmail, timestamp), "utf8"))
    .digest("hex")

export type SignatureVerdict =
  | { readonly _tag: "Valid" }
  | { readonly _tag: "Invalid"; readonly reason: "malformed" | "stale" | "early" | "mismatch" | "no secret" }

const HEX64 = /^[0-9a-f]{64}$/
const SECONDS = /^\d{1,12}$/

/**
 * Whether `signed` is a valid signature at `nowSeconds`. The time window is checked first (it reveals nothing the
 * caller does not know), then the HMAC in constant time. A key without a signing secret verifies nothing.
 */
export const verifyCustomerSignature = (
  signingSecret: string | null,
  signed: SignedCustomer,
  nowSeconds: number
): SignatureVerdict => {
  if (signingSecret === null) return { _tag: "Invalid", reason: "no secret" }
  if (!HEX64.test(signed.signature) || !SECONDS.test(signed.timestamp)) return { _tag: "Invalid", reason: "malformed" }
  const timestamp = Number(signed.timestamp)
  if (nowSeconds < timestamp - SIGNATURE_EARLY_SECONDS) return { _tag: "Invalid", reason: "early" }
  if (nowSeconds > timestamp + SIGNATURE_LIFETIME_SECONDS) return { _tag: "Invalid", reason: "stale" }
  const expected = Buffer.from(
    signCustomer(signingSecret, signed.publishableKey, signed.customerEmail, signed.timestamp),
    "hex"
  )
  const given = Buffer.from(signed.signature, "hex")
  return timingSafeEqual(expected, given) ? { _tag: "Valid" } : { _tag: "Invalid", reason: "mismatch" }
}
