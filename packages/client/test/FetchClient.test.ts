/**
 * The plain fetch client (`@feedback/client`): its generated types are the served document's (regenerating gives
 * the checked-in file), and it calls a real server: typed successes, the error envelope, and raw headers.
 */
import { OpenApi } from "effect/http-api"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestServer, type TestServer } from "../../adapter-http/test/TestServer.ts"
import { fetchTypesSource } from "../scripts/FetchTypes.ts"
import { AdminApi } from "../src/api/Api.ts"
import { createAdminApiClient } from "../src/index.ts"

describe("the generated types", () => {
  it("are what `npm run generate:client` writes from the served OpenAPI document", async () => {
    const checkedIn = readFileSync(new URL("../src/fetch/AdminApiPaths.ts", import.meta.url), "utf8")
    // A failure here means the contract changed: run `npm run generate:client` and commit the result.
    expect(checkedIn).toBe(await fetchTypesSource(OpenApi.fromApi(AdminApi)))
  })
})

describe("createAdminApiClient against a running server", () => {
  let server: TestServer
  let key: string
  beforeAll(async () => {
    server = makeTestServer()
    key = (await server.provision()).key
  })
  afterAll(() => server.dispose())

  const client = () =>
    createAdminApiClient({ baseUrl: "http://test", secretKey: key, fetch: (request) => server.fetch(request) })

  it("reads the organization, creates and lists products with typed bodies", async () => {
    const api = client()
    const organization = await api.GET("/organization")
    expect(organization.response.status).toBe(200)
    expect(organization.data?.plan.apiRequestsPerMinute).toBeGreaterThan(0)

    const created = await api.POST("/products", {
      body: { externalId: "sku-1", title: "Fetch-client mug", slug: "fetch-client-mug" }
    })
    expect(created.response.status, JSON.stringify(created.error)).toBe(201)
    const listed = await api.GET("/products", { params: { query: { limit: 10 } } })
    expect(listed.data?.data.map((p) => p.id)).toContain(created.data?.id)
    expect(listed.response.headers.get("x-ratelimit-remaining")).not.toBeNull()
  })

  it("answers the error envelope as `error`", async () => {
    const missing = await client().GET("/reviews/{id}", {
      params: { path: { id: "00000000-0000-4000-8000-000000000000" } }
    })
    expect(missing.response.status).toBe(404)
    expect(missing.data).toBeUndefined()
    expect(missing.error).toMatchObject({ error: { code: "NOT_FOUND" } })

    const unauthenticated = await createAdminApiClient({
      baseUrl: "http://test",
      secretKey: "sk_wrong",
      fetch: (request) => server.fetch(request)
    })
      .GET("/organization")
    expect(unauthenticated.response.status).toBe(401)
    expect(unauthenticated.error).toMatchObject({ error: { code: "UNAUTHORIZED" } })
  })
})
