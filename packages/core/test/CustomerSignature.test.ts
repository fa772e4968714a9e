/**
 * Signed customer calls (docs/STOREFRONT.md): the published test vectors (cross-checked with
 * `openssl dgst -sha256 -hmac`), the time window's both edges, and that changing any signed part fails.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalCustomerString, signCustomer, verifyCustomerSignature } from "../src/storefront/CustomerSignature.ts"

/** The vectors docs/STOREFRONT.md publishes. */
const vectors = [
  {
    secret: "pks_test_secret_0123456789abcdefghijklmnopqrstuv",
    key: "pk_test_0123456789abcdefghijklmnopqrstu",
    email: "ada@example.com",
    timestamp: "1767225600",
    signature: "e4431eab9367320ce7cb37b99f34282fd6b8dd16cd71dce453042afae851c470"
  },
  {
    secret: "pks_test_secret_0123456789abcdefghijklmnopqrstuv",
    key: "pk_test_0123456789abcdefghijklmnopqrstu",
    email: "ada@example.com",
    timestamp: "1767225601",
    signature: "f502ed391536bb3e4a81ac36cf13402267a87bce4cdd18010d8bc8d8ea04ea28"
  },
  {
    secret: "pks_ünïcødé_sécret",
    key: "pk_test_0123456789abcdefghijklmnopqrstu",
    email: "zoë@exämple.com",
    timestamp: "1700000000",
    signature: "8969e49567f2b9d120fc5d333f9d88a278e46b72b37ab442e11f5d2af0694dbf"
  }
]

describe("signed customer calls", () => {
  it("signs the canonical string key\\nemail\\ntimestamp as the published vectors say", () => {
    expect(canonicalCustomerString("pk_a", "b@c.d", "1")).toBe("pk_a\nb@c.d\n1")
    for (const v of vectors) {
      expect(signCustomer(v.secret, v.key, v.email, v.timestamp)).toBe(v.signature)
      const signed = { publishableKey: v.key, customerEmail: v.email, timestamp: v.timestamp, signature: v.signature }
      expect(verifyCustomerSignature(v.secret, signed, Number(v.timestamp))._tag).toBe("Valid")
    }
  })

  it("is valid from 300 s before to 86,400 s after the timestamp, and only then", () => {
    const v = vectors[0]!
    const signed = { publishableKey: v.key, customerEmail: v.email, timestamp: v.timestamp, signature: v.signature }
    const t = Number(v.timestamp)
    expect(verifyCustomerSignature(v.secret, signed, t - 300)._tag).toBe("Valid")
    expect(verifyCustomerSignature(v.secret, signed, t - 301)).toEqual({ _tag: "Invalid", reason: "early" })
    expect(verifyCustomerSignature(v.secret, signed, t + 86_400)._tag).toBe("Valid")
    expect(verifyCustomerSignature(v.secret, signed, t + 86_401)).toEqual({ _tag: "Invalid", reason: "stale" })
  })

  it("refuses malformed input, upper-case hex, a key without a secret, and any changed part", () => {
    const v = vectors[0]!
    const signed = { publishableKey: v.key, customerEmail: v.email, timestamp: v.timestamp, signature: v.signature }
    const t = Number(v.timestamp)
    expect(verifyCustomerSignature(null, signed, t)).toEqual({ _tag: "Invalid", reason: "no secret" })
    for (
      const bad of [
        { signature: v.signature.toUpperCase() },
        { signature: v.signature.slice(1) },
        { timestamp: "-1" },
        { timestamp: "1.5" },
        { timestamp: "" }
      ]
    ) {
      expect(verifyCustomerSignature(v.secret, { ...signed, ...bad }, t)).toEqual({
        _tag: "Invalid",
        reason: "malformed"
      })
    }
    fc.assert(fc.property(
      fc.constantFrom("publishableKey", "customerEmail", "secret"),
      fc.string({ minLength: 1, maxLength: 8 }),
      (part, extra) => {
        const changed = part === "secret"
          ? signed
          : { ...signed, [part]: (signed as Record<string, string>)[part] + extra }
        const secret = part === "secret" ? v.secret + extra : v.secret
        expect(verifyCustomerSignature(secret, changed, t)).toEqual({ _tag: "Invalid", reason: "mismatch" })
      }
    ))
  })
})
