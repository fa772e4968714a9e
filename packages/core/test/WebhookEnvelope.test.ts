import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../src/kernel/EventOutbox.ts"
import { envelopeBodies, envelopeBody } from "../src/webhooks/WebhookDispatcher.ts"

const event = (data: unknown): DomainEvent =>
  ({
    id: "01930000-0000-7000-8000-000000000001",
    organizationId: "01930000-0000-7000-8000-000000000002",
    event: "review.updated",
    data,
    occurredAt: "2026-11-26T09:00:00.000Z"
  }) as DomainEvent

describe("envelopeBodies", () => {
  it("makes the same bytes as envelopeBody for any data and key", () => {
    fc.assert(fc.property(fc.jsonValue(), fc.uuid(), fc.string(), (data, key, name) => {
      const e = { ...event(data), event: name }
      expect(envelopeBodies(e)(key)).toBe(envelopeBody(e, key))
    }))
  })

  it("omits data the envelope would omit, and keeps the documented key order", () => {
    const e = event(undefined)
    expect(envelopeBodies(e)("k")).toBe(envelopeBody(e, "k"))
    expect(envelopeBodies(event({ b: 1, a: [null, "\u2028"] }))("k")).toBe(
      "{\"event\":\"review.updated\",\"timestamp\":\"2026-11-26T09:00:00.000Z\",\"idempotencyKey\":\"k\",\"eventId\":\"01930000-0000-7000-8000-000000000001\",\"data\":{\"b\":1,\"a\":[null,\"\u2028\"]}}"
    )
  })
})
