/**
 * The compiled response encoder gives the very JSON the schema interpreter gives, byte for byte (key order
 * included), for arbitrary values of every success schema of the admin and operator APIs, and strips the keys a
 * schema does not declare as the interpreter does.
 */
import { Arbitrary, Effect, Schema } from "effect"
import { HttpApi } from "effect/http-api"
import { AdminApi, OperatorApi, ReviewPage } from "@feedback/client/effect"
import { Catalog, Kernel, Organizations, Reviews } from "@feedback/core"
import { describe, expect, it } from "vitest"
import {
  encodedOnceJsonResponse,
  RECORDS_PER_SLICE,
  trustedEncoder,
  trustedJsonResponse,
  trustedPageResponse
} from "../src/server/TrustedEncoder.ts"

const successSchemas = (): ReadonlyArray<{ readonly name: string; readonly schema: Schema.Top }> => {
  const out: Array<{ name: string; schema: Schema.Top }> = []
  for (const api of [AdminApi, OperatorApi] as unknown as ReadonlyArray<HttpApi.Top>) {
    HttpApi.reflect(api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint, group }) => {
        let i = 0
        for (const schema of endpoint.success) {
          out.push({ name: `${group.identifier}.${endpoint.identifier}#${i++}`, schema })
        }
      }
    })
  }
  return out
}

const samples = (schema: Schema.Top, seed: number): ReadonlyArray<unknown> => {
  const arbitrary = Arbitrary.schema(Schema.toType(schema) as Schema.Top)
  return [3, 12].flatMap((size, i) =>
    Effect.runSync(Arbitrary.sampleEffect(arbitrary, { count: 15, size, seed: seed + i }))
  )
}

const bySchema = (schema: Schema.Top) => Schema.encodeUnknownSync(schema as Schema.Codec<unknown>)

describe("trustedEncoder", () => {
  const schemas = successSchemas()

  it("covers the success schemas of both APIs", () => {
    expect(schemas.length).toBeGreaterThan(40)
  })

  it.each(schemas.map((s, i) => [s.name, s.schema, i] as const))(
    "%s: the same JSON as the schema",
    (_name, schema, i) => {
      let values: ReadonlyArray<unknown>
      try {
        values = samples(schema, 1000 + i)
      } catch {
        return // a schema Effect cannot generate values for (e.g. no-content declarations) is not a JSON body
      }
      const fast = trustedEncoder(schema)
      const slow = bySchema(schema)
      for (const value of values) expect(JSON.stringify(fast(value))).toBe(JSON.stringify(slow(value)))
    }
  )

  it("drops undeclared keys at every level, as the schema does", () => {
    const [page] = samples(ReviewPage, 7).filter((p) => (p as typeof ReviewPage.Type).data.length > 0) as Array<
      typeof ReviewPage.Type
    >
    expect(page).toBeDefined()
    const customer = Catalog.newCustomer(
      Kernel.CustomerId.make("0190a0b1-c2d3-7e4f-8a5b-6c7d8e9fa0b1"),
      "2026-01-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp,
      {
        email: "a@example.com",
        metadata: JSON.parse(`{"__proto__":"kept"}`)
      }
    )
    const noisy = {
      ...page!,
      secret: 1,
      data: page!.data.map((r) => ({ ...r, organizationId: "x", customer: { ...customer, internal: true } }))
    }
    const fast = JSON.stringify(trustedEncoder(ReviewPage)(noisy as never))
    expect(fast).not.toContain("secret")
    expect(fast).not.toContain("organizationId")
    expect(fast).not.toContain("internal")
    expect(fast).toContain("\"__proto__\":\"kept\"")
    expect(fast).toBe(JSON.stringify(Schema.encodeUnknownSync(ReviewPage, { disableChecks: true })(noisy)))
  })
})

describe("encodedOnceJsonResponse", () => {
  const textOf = (response: ReturnType<ReturnType<typeof encodedOnceJsonResponse>>) =>
    response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : undefined

  it("answers the schema's JSON for each value, the first time and every time after", () => {
    const respond = encodedOnceJsonResponse(Organizations.Organization)
    for (
      const organization of samples(Organizations.Organization, 42) as ReadonlyArray<
        typeof Organizations.Organization.Type
      >
    ) {
      const expected = JSON.stringify(bySchema(Organizations.Organization)(organization))
      for (let i = 0; i < 2; i++) {
        const response = respond(organization)
        expect(response.status).toBe(200)
        expect(response.body._tag === "Uint8Array" ? response.body.contentType : undefined).toBe("application/json")
        expect(textOf(response)).toBe(expected)
      }
    }
  })

  it("a replaced value gets its own text; a value that fails its schema fails every time, as HttpApi's encoding does", () => {
    const respond = encodedOnceJsonResponse(Organizations.Organization)
    const [organization] = samples(Organizations.Organization, 43) as ReadonlyArray<
      typeof Organizations.Organization.Type
    >
    expect(textOf(respond(organization!))).toContain(
      `"apiRequestsPerMinute":${organization!.plan.apiRequestsPerMinute}`
    )
    const replanned = { ...organization!, plan: { apiRequestsPerMinute: 7 } }
    expect(textOf(respond(replanned))).toBe(JSON.stringify(bySchema(Organizations.Organization)(replanned)))
    const broken = { ...organization!, createdAt: "not a timestamp" } as never
    expect(() => respond(broken)).toThrow()
    expect(() => respond(broken)).toThrow()
  })
})

describe("trustedPageResponse", () => {
  it("answers the very text of trustedJsonResponse, a run of records at a time", async () => {
    const whole = trustedJsonResponse(ReviewPage)
    const inRuns = trustedPageResponse(Reviews.Review)
    const text = (response: { readonly body: unknown }) =>
      new TextDecoder().decode((response.body as { readonly body: Uint8Array }).body)
    const records = samples(Reviews.Review, 7) as ReadonlyArray<Reviews.Review>
    for (const count of [0, 1, RECORDS_PER_SLICE, RECORDS_PER_SLICE + 1, records.length]) {
      for (const nextCursor of [null, "c\"ursor"]) {
        const page = { data: Array.from({ length: count }, (_, i) => records[i % records.length]!), nextCursor }
        const ours = await Effect.runPromise(inRuns(page))
        expect(ours.status).toBe(200)
        expect(text(ours)).toBe(text(whole(page)))
      }
    }
  })
})
