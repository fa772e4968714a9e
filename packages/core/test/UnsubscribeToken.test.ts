import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { maskEmail } from "../src/catalog/Unsubscribes.ts"
import {
  isUnsubscribeToken,
  newUnsubscribeToken,
  UNSUBSCRIBE_TOKEN_BYTES,
  unsubscribeUrl
} from "../src/catalog/UnsubscribeToken.ts"
import { DEFAULT_SERVER_URL, publicBaseUrl } from "../src/setup/SetupConfig.ts"

describe("unsubscribe tokens", () => {
  it("are 22..64 characters of [A-Za-z0-9_-] carrying at least 128 random bits, and never repeat", () => {
    expect(UNSUBSCRIBE_TOKEN_BYTES * 8).toBeGreaterThanOrEqual(128)
    const tokens = Array.from({ length: 2_000 }, newUnsubscribeToken)
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{22,64}$/)
      expect(isUnsubscribeToken(token)).toBe(true)
      expect(Buffer.from(token, "base64url").length).toBe(UNSUBSCRIBE_TOKEN_BYTES)
    }
    expect(new Set(tokens).size).toBe(tokens.length)
  })

  it("anything else is not a token", () => {
    for (
      const bad of [
        "",
        "a".repeat(21),
        "a".repeat(65),
        `${"a".repeat(30)}=`,
        `${"a".repeat(30)}/`,
        `${"a".repeat(30)}.`,
        `${"a".repeat(30)}\n`
      ]
    ) {
      expect(isUnsubscribeToken(bad), JSON.stringify(bad)).toBe(false)
    }
    fc.assert(fc.property(fc.string({ minLength: 22, maxLength: 64 }), (s) => {
      expect(isUnsubscribeToken(s)).toBe(/^[A-Za-z0-9_-]+$/.test(s))
    }))
  })

  it("the URL is the public base URL (PUBLIC_API_BASE_URL, else the server's own, else the default) + /u/{token}", () => {
    const base = (apiBaseUrl: string | undefined, serverUrl?: string) =>
      publicBaseUrl({ embedScriptUrl: "", apiBaseUrl, serverUrl })
    expect(base("https://api.shop.example/", "http://127.0.0.1:3000")).toBe("https://api.shop.example")
    expect(base(undefined, "http://127.0.0.1:3000")).toBe("http://127.0.0.1:3000")
    expect(base(undefined)).toBe(DEFAULT_SERVER_URL)
    expect(unsubscribeUrl("https://api.shop.example/v1/", "abc")).toBe("https://api.shop.example/v1/u/abc")
  })

  it("the page shows an address masked to its first character and domain", () => {
    expect(maskEmail("ada.lovelace@example.com")).toBe("a***@example.com")
    expect(maskEmail("x@y.z")).toBe("x***@y.z")
    expect(maskEmail("no-at-sign")).toBe("***")
    expect(maskEmail("@example.com")).toBe("***")
  })
})
