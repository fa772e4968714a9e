import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  decideClaim,
  type IdempotencyClaim,
  type IdempotencyRecord,
  isRecordedStatus,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  parseIdempotencyKey,
  redactStoredResponse,
  requestFingerprint
} from "../src/idempotency/IdempotencyRules.ts"
import { fromMillis } from "../src/kernel/Timestamp.ts"

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c))
const validKey = fc.array(printable, { minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH }).map((cs) => cs.join(""))

describe("parseIdempotencyKey", () => {
  it("accepts every 1..255 printable ASCII key as it is", () => {
    fc.assert(fc.property(validKey, (key) => {
      expect(Result.getOrThrow(parseIdempotencyKey(key))).toBe(key)
    }))
  })

  it("an absent header is no key", () => {
    expect(Result.getOrThrow(parseIdempotencyKey(undefined))).toBeUndefined()
  })

  it("refuses empty, too long, or any character outside printable ASCII, naming the header", () => {
    const outside = fc.integer({ min: 0, max: 0x2fff }).filter((c) => c < 0x20 || c > 0x7e).map((c) =>
      String.fromCharCode(c)
    )
    const bad = fc.oneof(
      fc.constant(""),
      fc.array(printable, { minLength: MAX_IDEMPOTENCY_KEY_LENGTH + 1, maxLength: 400 }).map((cs) => cs.join("")),
      fc.tuple(fc.string({ maxLength: 100 }), outside, fc.string({ maxLength: 100 })).map(([a, c, b]) => a + c + b)
    )
    fc.assert(fc.property(bad, (key) => {
      const result = parseIdempotencyKey(key)
      expect(Result.isFailure(result)).toBe(true)
      if (Result.isFailure(result)) expect(result.failure.issues[0]?.path).toBe("headers.idempotency-key")
    }))
  })
})

describe("requestFingerprint", () => {
  const part = fc.tuple(
    fc.constantFrom("POST", "PATCH", "DELETE"),
    fc.stringMatching(/^\/[a-z0-9/?=&-]{0,30}$/),
    fc.uint8Array({ maxLength: 64 })
  )

  it("is equal exactly when method, target and body are", () => {
    fc.assert(fc.property(part, part, ([m1, t1, b1], [m2, t2, b2]) => {
      const same = m1 === m2 && t1 === t2 && Buffer.from(b1).equals(Buffer.from(b2))
      expect(requestFingerprint(m1, t1, b1) === requestFingerprint(m2, t2, b2)).toBe(same)
    }))
  })

  it("no part can slide into another", () => {
    const body = new TextEncoder().encode("x")
    expect(requestFingerprint("POST", "/a", body)).not.toBe(requestFingerprint("POST", "/ax", new Uint8Array()))
    expect(requestFingerprint("post", "/a", body)).toBe(requestFingerprint("POST", "/a", body))
  })
})

describe("isRecordedStatus", () => {
  it("records 2xx and the operation's 404/409/422, never 400/401/403/429/5xx", () => {
    for (const s of [200, 201, 202, 204, 404, 409, 422]) expect(isRecordedStatus(s)).toBe(true)
    for (const s of [400, 401, 403, 405, 413, 415, 429, 500, 503]) expect(isRecordedStatus(s)).toBe(false)
  })
})

describe("decideClaim", () => {
  const at = (m: number) => fromMillis(Date.UTC(2026, 0, 1) + m)
  const claim: IdempotencyClaim = {
    organizationId: "o",
    key: "k",
    fingerprint: "f",
    token: "t2",
    now: at(1_000),
    leaseUntil: at(2_000),
    expiresAt: at(9_000)
  }
  const record = (fields: Partial<IdempotencyRecord>): IdempotencyRecord => ({
    fingerprint: "f",
    token: "t1",
    leaseUntil: at(1_500),
    expiresAt: at(5_000),
    response: null,
    ...fields
  })
  const response = { status: 201, contentType: "application/json", body: "{}" }

  it("follows the table: none/expired → claim; other fingerprint → reused; recorded → replay; running → busy until its lease ends", () => {
    expect(decideClaim(undefined, claim)._tag).toBe("Claimed")
    expect(decideClaim(record({ expiresAt: at(1_000), fingerprint: "other", response }), claim)._tag).toBe("Claimed")
    expect(decideClaim(record({ fingerprint: "other", response }), claim)._tag).toBe("Reused")
    expect(decideClaim(record({ fingerprint: "other" }), claim)._tag).toBe("Reused")
    expect(decideClaim(record({ response }), claim)).toEqual({ _tag: "Replay", response })
    expect(decideClaim(record({ response, leaseUntil: at(0) }), claim)._tag).toBe("Replay")
    expect(decideClaim(record({}), claim)._tag).toBe("InProgress")
    expect(decideClaim(record({ leaseUntil: at(1_000) }), claim)._tag).toBe("Claimed")
  })
})

describe("redactStoredResponse", () => {
  const id = "00000000-0000-4000-8000-000000000001"
  const redaction = { resource: "productQuestion", recordId: id, fields: ["askerEmail"] }
  it("blanks the fields of the record's own body and leaves every other body as it is", () => {
    const own = {
      status: 200,
      contentType: "application/json",
      body: JSON.stringify({ id, askerEmail: "a@b.c", body: "q" })
    }
    expect(JSON.parse(redactStoredResponse(own, redaction).body)).toEqual({ id, askerEmail: null, body: "q" })
    const other = { ...own, body: JSON.stringify({ id: "x", note: id, askerEmail: "a@b.c" }) }
    expect(redactStoredResponse(other, redaction)).toBe(other)
    const empty = { status: 204, contentType: null, body: "" }
    expect(redactStoredResponse(empty, redaction)).toBe(empty)
  })
})
