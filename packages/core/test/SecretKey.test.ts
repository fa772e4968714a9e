/** Stored key hashes must never change: every key already issued is found by its SHA-256 in hex. */
import * as fc from "fast-check"
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { generateSecretKey, hashSecretKey } from "../src/organizations/SecretKey.ts"

describe("hashSecretKey", () => {
  it("is the hex SHA-256 of the key's UTF-8 bytes, for issued keys and any other string", () => {
    expect(hashSecretKey("sk_test")).toBe("12b2820cf1639904311da5771de1e5bb65c77073fdc7c555df395942df42896b")
    for (let i = 0; i < 20; i++) {
      const key = generateSecretKey()
      expect(hashSecretKey(key)).toBe(createHash("sha256").update(key).digest("hex"))
    }
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), (s) => {
      expect(hashSecretKey(s)).toBe(createHash("sha256").update(s, "utf8").digest("hex"))
    }))
  })
})
