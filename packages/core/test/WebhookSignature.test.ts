import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { signWebhookBody, verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER } from "../src/webhooks/WebhookSignature.ts"

const envelope =
  `{"event":"review.created","timestamp":"2026-01-31T12:00:00.000Z","idempotencyKey":"7f2c3a9e-1d2b-4c5d-8e9f-0a1b2c3d4e5f","data":{"id":"r1"}}`

/** Vectors computed independently with OpenSSL 3.0.19; each comment is the exact command. */
const vectors: ReadonlyArray<{ readonly body: string | Uint8Array; readonly secret: string; readonly hex: string }> = [
  // printf '%s' '<envelope above>' | openssl dgst -sha256 -hmac 'whsec_test_123'
  { body: envelope, secret: "whsec_test_123", hex: "9938c415151e18e877243298c87dc92b547ff58756a5f6967fcc1861bad0d4b3" },
  // printf '%s' 'Grüße, 世界 😀' | openssl dgst -sha256 -hmac 'clé-secrète'       (UTF-8 body and key)
  {
    body: "Grüße, 世界 😀",
    secret: "clé-secrète",
    hex: "8afd3a41104834eb9ea8c4e0b5a3d281f6b2731f1ab0ef2f7d14eba94e5441c6"
  },
  // printf '' | openssl dgst -sha256 -hmac 'k'
  { body: "", secret: "k", hex: "8bb990c40a7d61cb97597a942125025be50ac8beb74436e3735b98893a7f6620" },
  // printf '\x00\xff\x80\x01binary' | openssl dgst -sha256 -hmac 'whsec_test_123'   (bytes that are not UTF-8)
  {
    body: new Uint8Array([0x00, 0xff, 0x80, 0x01, ...new TextEncoder().encode("binary")]),
    secret: "whsec_test_123",
    hex: "5c11dd848cec9b1c37f86cdf45f3408c827f8fda6e7a2baabafa4c460809db5a"
  },
  // printf '%s' 'The quick brown fox jumps over the lazy dog' | openssl dgst -sha256 -hmac 'key'   (also RFC-style
  // textbook vector)
  {
    body: "The quick brown fox jumps over the lazy dog",
    secret: "key",
    hex: "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
  }
]

describe("signWebhookBody", () => {
  it.each(vectors)("matches openssl (vector %#)", ({ body, secret, hex }) => {
    expect(signWebhookBody(body, secret)).toBe(`sha256=${hex}`)
    expect(verifyWebhookSignature(body, `sha256=${hex}`, secret)).toBe(true)
  })

  it("signs a string as its UTF-8 bytes", () => {
    const text = "Grüße, 世界 😀"
    expect(signWebhookBody(new TextEncoder().encode(text), "clé-secrète")).toBe(signWebhookBody(text, "clé-secrète"))
  })

  it("has the documented shape", () => {
    expect(signWebhookBody("x", "s")).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(WEBHOOK_SIGNATURE_HEADER).toBe("X-Webhook-Signature")
  })
})

describe("verifyWebhookSignature", () => {
  const secret = "whsec_test_123"
  const good = signWebhookBody(envelope, secret)

  it("accepts the right signature, also in upper-case hex", () => {
    expect(verifyWebhookSignature(envelope, good, secret)).toBe(true)
    expect(verifyWebhookSignature(envelope, "sha256=" + good.slice(7).toUpperCase(), secret)).toBe(true)
    expect(verifyWebhookSignature(new TextEncoder().encode(envelope), good, secret)).toBe(true)
  })

  it("rejects a tampered body or the wrong secret", () => {
    expect(verifyWebhookSignature(envelope.replace("r1", "r2"), good, secret)).toBe(false)
    expect(verifyWebhookSignature(envelope + " ", good, secret)).toBe(false)
    expect(verifyWebhookSignature(envelope, good, secret + "x")).toBe(false)
    expect(verifyWebhookSignature(envelope, good, "")).toBe(false)
  })

  const flipLastHexDigit = (h: string) => h.slice(0, -1) + (h.endsWith("0") ? "1" : "0")
  it.each([
    ["missing", undefined],
    ["null", null],
    ["empty", ""],
    ["no prefix", good.slice(7)],
    ["other algorithm", "sha1=" + good.slice(7)],
    ["upper-case prefix", "SHA256=" + good.slice(7)],
    ["one digit changed", flipLastHexDigit(good)],
    ["truncated", good.slice(0, -2)],
    ["extended", good + "00"],
    ["trailing space", good + " "],
    ["leading space", " " + good],
    ["non-hex digits", "sha256=" + "g".repeat(64)],
    ["odd hex inside", "sha256=" + good.slice(7, 70) + "z"],
    ["two signatures", `${good},${good}`],
    ["huge", "sha256=" + "a".repeat(1_000_000)]
  ])("rejects a %s header without throwing", (_name, header) => {
    expect(verifyWebhookSignature(envelope, header, secret)).toBe(false)
  })

  it("round-trips: what is signed verifies, and any other body or secret does not", () => {
    const body = fc.oneof(fc.string({ unit: "binary" }), fc.uint8Array())
    fc.assert(
      fc.property(body, fc.string({ minLength: 1 }), body, fc.string(), (b, s, otherBody, otherSecret) => {
        const header = signWebhookBody(b, s)
        expect(verifyWebhookSignature(b, header, s)).toBe(true)
        const bytes = (x: string | Uint8Array) => Buffer.from(typeof x === "string" ? new TextEncoder().encode(x) : x)
        if (!bytes(otherBody).equals(bytes(b))) expect(verifyWebhookSignature(otherBody, header, s)).toBe(false)
        if (otherSecret !== s) expect(verifyWebhookSignature(b, header, otherSecret)).toBe(false)
      }),
      { numRuns: 500 }
    )
  })

  it("never throws on arbitrary headers", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (header) => {
        expect(verifyWebhookSignature(envelope, header, secret)).toBe(false)
        expect(verifyWebhookSignature(envelope, "sha256=" + header, secret)).toBe(false)
      })
    )
  })
})
