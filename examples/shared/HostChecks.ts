/**
 * The checks every example host's test runs: the host's own page, the API under its prefix with and without a key,
 * a JSON body that reaches the API intact (also when the host's own JSON parser runs before the mount, where the
 * host has one: `echo`), and a refused body that comes back in the API's error envelope.
 */
import { afterAll, beforeAll, expect, it } from "vitest"

export interface RunningHost {
  readonly url: string
  readonly key: string
  readonly close: () => Promise<void>
}

export interface HostTraits {
  /** The host parses JSON for its own `POST /echo` (Express and Hono: ahead of the mount too). */
  readonly echo?: boolean
  /**
   * The host's own JSON parser runs before the mount and answers malformed JSON itself (Express's `express.json()`):
   * such a body never reaches the API.
   */
  readonly parsesFirst?: boolean
}

export const checkHost = (
  start: (port: number) => Promise<RunningHost>,
  prefix = "/api",
  { echo = false, parsesFirst = false }: HostTraits = {}
) => {
  let host: RunningHost
  beforeAll(async () => {
    host = await start(0)
  })
  afterAll(() => host.close())
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${host.url}${prefix}${path}`, { ...init, headers: { authorization: `Bearer ${host.key}`, ...init.headers } })

  it("serves its own page and the API's health check under the prefix", async () => {
    expect(await (await fetch(`${host.url}/`)).text()).toContain("host's own page")
    const health = await fetch(`${host.url}${prefix}/health`)
    expect(health.status).toBe(200)
  })

  it("authenticates with the tenant's key and refuses without it", async () => {
    const res = await api("/organization")
    expect(res.status).toBe(200)
    expect(((await res.json()) as { name: string }).name).toMatch(/shop$/)
    const denied = await fetch(`${host.url}${prefix}/organization`)
    expect(denied.status).toBe(401)
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED")
  })

  it("passes request bodies through untouched, and query strings", async () => {
    const created = await api("/products", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "Host mug", slug: "host-mug" })
    })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: string }
    const listed = await api("/products?limit=5")
    expect(((await listed.json()) as { data: Array<{ id: string }> }).data.map((p) => p.id)).toContain(id)
  })

  it.runIf(echo)("parses JSON for its own routes while the API still gets every body", async () => {
    const echoed = await fetch(`${host.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ hello: "host" })
    })
    expect(await echoed.json()).toEqual({ hello: "host" })
    const created = await api("/customers", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ email: "parsed@example.com", firstName: "Parsed first" })
    })
    expect(created.status, await created.clone().text()).toBe(201)
    expect(((await created.json()) as { email: string }).email).toBe("parsed@example.com")
  })

  it.skipIf(parsesFirst)("answers the API's own error envelope for a malformed body", async () => {
    const res = await api("/products", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{\"title\":"
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INVALID_REQUEST")
  })
}
