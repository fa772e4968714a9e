/** TEST SUPPORT: a fixed cursor key and issuer, for tests that parse list requests or cursors without a store. */
import { Kernel } from "@feedback/core"

export const testCursorKey = Kernel.CursorKey.fromSecret("test-cursor-secret-0123456789abcdef")

export const testIssuer = (organizationId = "00000000-0000-4000-8000-0000000000aa"): Kernel.CursorIssuer => ({
  key: testCursorKey,
  organizationId
})

/**
 * A cursor in the retired v1 format, whose checksum (cyrb53) anyone could recompute: exactly what a client could
 * forge for `binding` before cursors were sealed with a key. No list accepts these any more.
 */
export const legacyCursor = (position: Kernel.CursorPosition, binding: Kernel.CursorBinding): string => {
  const hash53 = (s: string, seed: number): string => {
    let h1 = 0xdeadbeef ^ seed
    let h2 = 0x41c6ce57 ^ seed
    for (let i = 0; i < s.length; i++) {
      const ch = s.charCodeAt(i)
      h1 = Math.imul(h1 ^ ch, 2654435761)
      h2 = Math.imul(h2 ^ ch, 1597334677)
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)
  }
  const digest = (s: string) => `${hash53(s, 1)}.${hash53(s, 2)}`
  const b = digest(JSON.stringify([
    binding.endpoint,
    binding.sort.field,
    binding.sort.direction,
    Kernel.canonicalFilter(binding.filter),
    binding.search ?? null
  ]))
  const c = digest(JSON.stringify([b, position.value, position.id]))
  return Buffer.from(JSON.stringify({ v: 1, b, k: position.value, i: position.id, c }), "utf8").toString("base64url")
}

/** A webhook list cursor in its retired format (no integrity check at all). */
export const legacyWebhookCursor = (scope: string, createdAt: string, id: string): string =>
  Buffer.from(JSON.stringify({ s: scope, t: createdAt, i: id })).toString("base64url")
