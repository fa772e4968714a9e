import { afterAll, beforeAll, expect, it } from "vitest"
import { startEmbeddedHost } from "./server.ts"

let host: Awaited<ReturnType<typeof startEmbeddedHost>>
beforeAll(async () => {
  host = await startEmbeddedHost(0)
})
afterAll(() => host.close())

it("serves the host's own routes and the Admin API under /api on one shared store", async () => {
  expect(await (await fetch(`${host.url}/`)).text()).toContain("host's own page")
  expect((await fetch(`${host.url}/api/health`)).status).toBe(200)
  const res = await fetch(`${host.url}/api/organization`, { headers: { authorization: `Bearer ${host.key}` } })
  expect(res.status).toBe(200)
  expect(((await res.json()) as { name: string }).name).toBe("Embedded shop")
  const denied = await fetch(`${host.url}/api/organization`)
  expect(denied.status).toBe(401)
})
