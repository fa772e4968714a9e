/**
 * The OpenAPI document the running server serves at `/openapi.json` passes Redocly's `recommended` ruleset with no
 * error and Spectral's `spectral:oas` with no warning (docs/DECISIONS.md §21): what an integrator's tooling would
 * complain about is caught here first. A new endpoint is linted as soon as it is in the contract.
 */
import { afterAll, describe, expect, it } from "vitest"
import { redoclyErrors, spectralWarnings } from "./openapi/Linters.ts"
import { makeTestServer } from "./TestServer.ts"

const server = makeTestServer()
afterAll(() => server.dispose())

const served = async (): Promise<object> => {
  const res = await server.request("GET", "/openapi.json")
  expect(res.status).toBe(200)
  return res.body
}

describe("the served OpenAPI document", () => {
  it("has no Redocly `recommended` error", async () => {
    expect(await redoclyErrors(await served())).toEqual([])
  }, 60_000)

  it("has no Spectral `spectral:oas` warning", async () => {
    expect(await spectralWarnings(await served())).toEqual([])
  }, 60_000)
})
