/**
 * Organizations' external ids over the operator API (docs/DECISIONS.md §65): set on creation, looked up with
 * `GET /operator/organizations?externalId=`, changed or removed by the PATCH, a clash a 409 that changes nothing,
 * and shown by `GET /organization`. The store behaviour itself is the conformance suite's.
 */
import { afterAll, describe, expect, it } from "vitest"
import { expectError, expectInvalid } from "./Http.ts"
import { makeTestServer } from "./TestServer.ts"

const server = makeTestServer()
afterAll(() => server.dispose())

describe("organizations' external ids on the operator API", () => {
  it("creates, looks up, changes and removes an external id", async () => {
    const created = await server.operator("POST", "/organizations", { name: "Tenant A", externalId: "tenant-a" })
    expect(created.status).toBe(201)
    expect(created.body.externalId).toBe("tenant-a")

    const found = await server.operator("GET", "/organizations?externalId=tenant-a")
    expect(found.status).toBe(200)
    expect(found.body).toEqual({ data: [created.body] })
    expect((await server.operator("GET", "/organizations?externalId=tenant-b")).body).toEqual({ data: [] })

    const changed = await server.operator("PATCH", `/organizations/${created.body.id}`, {
      externalId: "tenant-b",
      apiRequestsPerMinute: 120
    })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ externalId: "tenant-b", plan: { apiRequestsPerMinute: 120 } })
    expect((await server.operator("GET", "/organizations?externalId=tenant-a")).body).toEqual({ data: [] })

    const removed = await server.operator("PATCH", `/organizations/${created.body.id}`, { externalId: null })
    expect(removed.status).toBe(200)
    expect(removed.body.externalId).toBeUndefined()
  })

  it("answers a taken external id with a 409 that changes nothing", async () => {
    await server.operator("POST", "/organizations", { name: "Owner", externalId: "owned" })
    expectError(
      await server.operator("POST", "/organizations", { name: "Thief", externalId: "owned" }),
      409,
      "CONFLICT"
    )
    const other = await server.operator("POST", "/organizations", { name: "Other" })
    expectError(
      await server.operator("PATCH", `/organizations/${other.body.id}`, {
        externalId: "owned",
        apiRequestsPerMinute: 9
      }),
      409,
      "CONFLICT"
    )
    const lookedUp = await server.operator("GET", "/organizations?externalId=owned")
    expect(lookedUp.body.data.map((o: { name: string }) => o.name)).toEqual(["Owner"])
  })

  it("refuses a lookup without an id, and ids that are empty or too long", async () => {
    expectInvalid(await server.operator("GET", "/organizations"), "query.externalId")
    expectInvalid(await server.operator("POST", "/organizations", { name: "x", externalId: "" }), "body.externalId")
    expectInvalid(
      await server.operator("POST", "/organizations", { name: "x", externalId: "x".repeat(256) }),
      "body.externalId"
    )
  })

  it("shows the external id to the organization's own GET /organization", async () => {
    const org = await server.provision()
    await server.operator("PATCH", `/organizations/${org.organizationId}`, { externalId: "mine" })
    const res = await server.request("GET", "/organization", { token: org.key })
    expect(res.body.externalId).toBe("mine")
  })
})
