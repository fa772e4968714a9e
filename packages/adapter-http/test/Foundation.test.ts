/**
 * The foundation's HTTP behaviour, end to end through the real routes and middleware: authentication, permissions,
 * the error envelope for every kind of failure, the operator API and the OpenAPI document.
 */
import { compileErrors, validate } from "@readme/openapi-parser"
import { HttpApi } from "effect/http-api"
import { afterAll, describe, expect, it } from "vitest"
import { AdminApi } from "@feedback/client/effect"
import { expectError } from "./Http.ts"
import { makeTestServer } from "./TestServer.ts"

const server = makeTestServer()
afterAll(() => server.dispose())

describe("authentication and permissions", () => {
  it("answers the caller's organization for a key with settings:read", async () => {
    const { organizationId, key } = await server.provision({ permissions: ["settings:read"] })
    const res = await server.request("GET", "/organization", { token: key })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      id: organizationId,
      name: "Test organization",
      plan: { apiRequestsPerMinute: 600 }
    })
    expect(res.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
  })

  it("401 without, with a malformed, and with an unknown key — one body for all", async () => {
    const none = await server.request("GET", "/organization")
    const malformed = await server.request("GET", "/organization", { headers: { authorization: "Basic abc" } })
    const unknown = await server.request("GET", "/organization", { token: "sk_" + "a".repeat(43) })
    for (const res of [none, malformed, unknown]) expectError(res, 401, "UNAUTHORIZED")
    expect(none.body).toEqual(unknown.body)
    expect(malformed.body).toEqual(unknown.body)
  })

  it("403 naming the permission when the key lacks it", async () => {
    const { key } = await server.provision({ permissions: ["reviews:read"] })
    const res = await server.request("GET", "/organization", { token: key })
    expectError(res, 403, "FORBIDDEN")
    expect(res.body.error.message).toContain("settings:read")
    expect(res.body.error.details).toEqual({ permission: "settings:read" })
  })

  it("a revoked key is 401 at once", async () => {
    const { organizationId, key, keyId } = await server.provision()
    expect((await server.request("GET", "/organization", { token: key })).status).toBe(200)
    const revoked = await server.operator("DELETE", `/organizations/${organizationId}/keys/${keyId}`)
    expect(revoked.status).toBe(200)
    expect(revoked.body.revokedAt).not.toBeNull()
    expectError(await server.request("GET", "/organization", { token: key }), 401, "UNAUTHORIZED")
  })

  it("keys are scoped to their organization", async () => {
    const a = await server.provision()
    const b = await server.provision()
    const resA = await server.request("GET", "/organization", { token: a.key })
    const resB = await server.request("GET", "/organization", { token: b.key })
    expect(resA.body.id).toBe(a.organizationId)
    expect(resB.body.id).toBe(b.organizationId)
  })
})

describe("error envelope", () => {
  it("unknown route is a 404 envelope; a known path with the wrong method is 405 with Allow", async () => {
    expectError(await server.request("GET", "/no-such-thing"), 404, "NOT_FOUND")
    const wrong = await server.request("DELETE", "/organization")
    expectError(wrong, 405, "METHOD_NOT_ALLOWED")
    expect(wrong.headers.get("allow")).toBe("GET")
  })

  it("malformed JSON, schema failures and unknown fields are 400 naming the path, and change nothing", async () => {
    const malformed = await server.request("POST", "/operator/organizations", {
      token: "test-operator-token",
      rawBody: "{\"name\": "
    })
    expectError(malformed, 400, "INVALID_REQUEST")
    const wrongType = await server.operator("POST", "/organizations", { name: 42 })
    expectError(wrongType, 400, "INVALID_REQUEST")
    expect(wrongType.body.error.details.issues).toEqual([{ path: "body.name", message: expect.any(String) }])
    const typo = await server.operator("POST", "/organizations", { name: "x", apiRequestsPerMinut: 5 })
    expectError(typo, 400, "INVALID_REQUEST")
    expect(typo.body.error.details.issues[0].path).toBe("body.apiRequestsPerMinut")
    const badPath = await server.operator("POST", "/organizations/not-a-uuid/keys", { permissions: [] })
    expectError(badPath, 400, "INVALID_REQUEST")
    expect(badPath.body.error.details.issues[0].path).toBe("path.id")
    const badPermission = await server.operator(
      "POST",
      `/organizations/${(await server.provision()).organizationId}/keys`,
      { permissions: ["admin:all"] }
    )
    expectError(badPermission, 400, "INVALID_REQUEST")
  })

  it("a body over 1 MiB is 413", async () => {
    const res = await server.operator("POST", "/organizations", { name: "x".repeat(1_100_000) })
    expectError(res, 413, "PAYLOAD_TOO_LARGE")
  })

  it("another organization's id is indistinguishable from a missing one", async () => {
    const res = await server.operator("POST", "/organizations/00000000-0000-4000-8000-000000000000/keys", {
      permissions: []
    })
    expectError(res, 404, "NOT_FOUND")
  })
})

describe("operator API", () => {
  it("is refused without the operator token and invisible when not configured", async () => {
    expectError(await server.request("POST", "/operator/organizations", { body: { name: "x" } }), 401, "UNAUTHORIZED")
    const { key } = await server.provision()
    expectError(
      await server.request("POST", "/operator/organizations", { token: key, body: { name: "x" } }),
      401,
      "UNAUTHORIZED"
    )
    const closed = makeTestServer(undefined, { operatorToken: undefined })
    try {
      const res = await closed.request("POST", "/operator/organizations", {
        token: "test-operator-token",
        body: { name: "x" }
      })
      expectError(res, 404, "NOT_FOUND")
    } finally {
      await closed.dispose()
    }
  })

  it("provisions organizations, keys with chosen permissions and storefront records", async () => {
    const org = await server.operator("POST", "/organizations", { name: "Second", apiRequestsPerMinute: 120 })
    expect(org.status).toBe(201)
    expect(org.body.plan.apiRequestsPerMinute).toBe(120)
    const key = await server.operator("POST", `/organizations/${org.body.id}/keys`, {
      permissions: ["reviews:read"],
      name: "CI"
    })
    expect(key.status).toBe(201)
    expect(key.body.secretKey).toMatch(/^sk_[A-Za-z0-9_-]{43}$/)
    expect(key.body.permissions).toEqual(["reviews:read"])
    const listed = await server.operator("GET", `/organizations/${org.body.id}/keys`)
    expect(listed.body.data).toHaveLength(1)
    expect(listed.text).not.toContain(key.body.secretKey)
    const pk = await server.operator("POST", `/organizations/${org.body.id}/publishable-keys`)
    expect(pk.status).toBe(201)
    expect(pk.body.key).toMatch(/^pk_/)
    expect(
      (await server.operator("POST", `/organizations/${org.body.id}/integrations`, { platform: "shopify" })).status
    ).toBe(201)
    expectError(
      await server.operator("POST", `/organizations/${org.body.id}/integrations`, { platform: "woocommerce" }),
      400,
      "INVALID_REQUEST"
    )
    const program = await server.operator("POST", `/organizations/${org.body.id}/loyalty-programs`, {
      status: "live",
      siteId: null
    })
    expect(program.body).toMatchObject({ status: "live", siteId: null })
    expect((await server.operator("POST", `/organizations/${org.body.id}/wishlists`, {})).status).toBe(201)
    const patched = await server.operator("PATCH", `/organizations/${org.body.id}`, { apiRequestsPerMinute: 60 })
    expect(patched.body.plan.apiRequestsPerMinute).toBe(60)
    // Loyalty allowances: only sent fields change, null removes one, GET /organization shows them only when set.
    const loyal = await server.operator("PATCH", `/organizations/${org.body.id}`, {
      loyaltyEventsPerMinute: 30,
      loyaltyStampsPerMinute: 10
    })
    expect(loyal.body.plan).toEqual({
      apiRequestsPerMinute: 60,
      loyaltyEventsPerMinute: 30,
      loyaltyStampsPerMinute: 10
    })
    const cleared = await server.operator("PATCH", `/organizations/${org.body.id}`, { loyaltyStampsPerMinute: null })
    expect(cleared.body.plan).toEqual({ apiRequestsPerMinute: 60, loyaltyEventsPerMinute: 30 })
    expectError(
      await server.operator("PATCH", `/organizations/${org.body.id}`, { loyaltyEventsPerMinute: 0 }),
      400,
      "INVALID_REQUEST"
    )
    const reader = await server.operator("POST", `/organizations/${org.body.id}/keys`, {
      permissions: ["settings:read"]
    })
    const seen = await server.request("GET", "/organization", { token: reader.body.secretKey })
    expect(seen.body.plan).toEqual({ apiRequestsPerMinute: 60, loyaltyEventsPerMinute: 30 })
  })
})

describe("service endpoints", () => {
  it("health, docs and a valid OpenAPI 3.1 document listing every served route", async () => {
    expect((await server.request("GET", "/health")).body).toEqual({ status: "ok" })
    const docs = await server.request("GET", "/docs")
    expect(docs.status).toBe(200)
    expect(docs.text).toContain("<html")
    const spec = (await server.request("GET", "/openapi.json")).body
    expect(spec.openapi).toBe("3.1.0")
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(["/health", "/organization"]))
    expect(spec.paths["/organization"].get["x-rate-limit-cost"]).toBe(1)
    expect(spec.paths["/organization"].get["x-required-permission"]).toBe("settings:read")
    expect(spec.components.securitySchemes.bearer.type).toBe("http")
    expect(spec.components.securitySchemes.bearer.scheme.toLowerCase()).toBe("bearer")
    expect(JSON.stringify(spec)).not.toContain("/operator")
    // Every endpoint of the contract appears in the document with its method.
    HttpApi.reflect(AdminApi, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
        expect(spec.paths[path]?.[endpoint.method.toLowerCase()], `${endpoint.method} ${path}`).toBeDefined()
      }
    })
    const result = await validate(structuredClone(spec))
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true)
    const op = (await server.request("GET", "/operator/openapi.json")).body
    expect((await validate(structuredClone(op))).valid).toBe(true)
    expect(Object.keys(op.paths)).toContain("/operator/organizations")
  })
})
