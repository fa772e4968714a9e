/**
 * In-process HTTP test server: the real routes, middleware and error envelope behind a fetch-style handler, over
 * the memory store (or any store layer). `provision` creates an organization and a key through the operator API.
 */
import { IdGenerator, type Permission, type StoreServices } from "@feedback/core"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Layer, Redacted } from "effect"
import { makeWebHandler, type ApiServerOptions } from "../src/server/ApiServer.ts"

export const OPERATOR_TOKEN = "test-operator-token"

export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export interface TestServer {
  readonly request: (method: string, path: string, options?: { readonly token?: string | undefined; readonly body?: unknown; readonly rawBody?: string; readonly headers?: Record<string, string> }) => Promise<TestResponse>
  readonly operator: (method: string, path: string, body?: unknown) => Promise<TestResponse>
  /** A fresh organization and a key with the given permissions (all by default). */
  readonly provision: (options?: { readonly permissions?: ReadonlyArray<Permission>; readonly apiRequestsPerMinute?: number }) => Promise<{ readonly organizationId: string; readonly key: string; readonly keyId: string }>
  readonly dispose: () => Promise<void>
}

export const allPermissions: ReadonlyArray<Permission> = [
  "settings:read", "settings:write", "reviews:read", "reviews:write",
  "products:read", "products:write", "customers:read", "customers:write"
]

export const makeTestServer = (
  store: Layer.Layer<StoreServices, unknown> = MemoryStoreLayer,
  options: ApiServerOptions = {},
  /** Share the built store with a test's own runtime (e.g. to seed records the API cannot create). */
  memoMap?: Layer.MemoMap
): TestServer => {
  const { handler, dispose } = makeWebHandler(Layer.merge(store, IdGenerator.uuidV7), {
    operatorToken: Redacted.make(OPERATOR_TOKEN),
    ...options
  }, memoMap)
  const request: TestServer["request"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.token !== undefined) headers["authorization"] = `Bearer ${opts.token}`
    let body: string | undefined
    if (opts.rawBody !== undefined) body = opts.rawBody
    else if (opts.body !== undefined) body = JSON.stringify(opts.body)
    if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
    const res = await handler(new Request(`http://test${path}`, { method, headers, ...(body === undefined ? {} : { body }) }))
    const text = await res.text()
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }
  const operator: TestServer["operator"] = (method, path, body) =>
    request(method, `/operator${path}`, { token: OPERATOR_TOKEN, body })
  const provision: TestServer["provision"] = async (opts = {}) => {
    const org = await operator("POST", "/organizations", {
      name: "Test organization",
      ...(opts.apiRequestsPerMinute === undefined ? {} : { apiRequestsPerMinute: opts.apiRequestsPerMinute })
    })
    if (org.status !== 201) throw new Error(`provision failed: ${org.text}`)
    const key = await operator("POST", `/organizations/${org.body.id}/keys`, { permissions: opts.permissions ?? allPermissions })
    if (key.status !== 201) throw new Error(`key failed: ${key.text}`)
    return { organizationId: org.body.id, key: key.body.secretKey, keyId: key.body.id }
  }
  return { request, operator, provision, dispose }
}
