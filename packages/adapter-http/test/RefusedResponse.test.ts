/**
 * The secret-key middleware writes a 429 itself (`refusedResponse`) instead of failing with `TooManyRequests`; its
 * bytes must be exactly what the contract's `TooManyRequestsResponse` makes of that error, for every decision.
 */
import { RateLimits } from "@feedback/core"
import { TooManyRequestsResponse } from "@feedback/client/effect"
import { Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { rateLimitHeaders, refusedResponse } from "../src/server/SecretKeyAuthLive.ts"

const refusal: fc.Arbitrary<RateLimits.SpendRefused> = fc.record({
  cost: fc.oneof(
    fc.integer({ min: 0, max: 1_000 }),
    fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true })
  ),
  limit: fc.integer({ min: 1, max: 1_000_000 }),
  remaining: fc.integer({ min: 0, max: 1_000_000 }),
  fullInSeconds: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
  retryAfterSeconds: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
  refusedBy: fc.oneof(
    fc.constant(RateLimits.ORG_BUCKET_KEY),
    fc.constantFrom("POST /loyalty-stamps", "POST /loyalty-history")
  ),
  refusedByCeiling: fc.integer({ min: 1, max: 1_000_000 })
}).map((r) => ({ _tag: "Refused" as const, ...r }))

const bodyText = (response: ReturnType<typeof refusedResponse>) => {
  const body = response.body
  if (body._tag !== "Uint8Array") throw new Error(`unexpected body ${body._tag}`)
  return new TextDecoder().decode(body.body)
}

describe("refusedResponse", () => {
  it("is the contract's encoding of tooManyRequests(decision), with the rate-limit headers", () => {
    const encode = Schema.encodeSync(TooManyRequestsResponse as unknown as Schema.Codec<unknown, unknown>)
    fc.assert(
      fc.property(refusal, (decision) => {
        const response = refusedResponse(decision)
        expect(response.status).toBe(429)
        expect(bodyText(response)).toBe(JSON.stringify(encode(RateLimits.tooManyRequests(decision))))
        expect(response.body._tag === "Uint8Array" && response.body.contentType).toBe("application/json")
        for (const [name, value] of Object.entries(rateLimitHeaders(decision))) {
          expect(response.headers[name]).toBe(value)
        }
      }),
      { numRuns: 2_000 }
    )
  })
})
