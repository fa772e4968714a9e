/**
 * The HTTP test helpers every test of this package uses: a request as tests send it (to the in-process server or to
 * any fetch-style handler), provisioning an organization and a key through the operator API, a server with a key for
 * a whole file, and the assertions on the error envelope (shared DECISIONS §1).
 */
import { Kernel } from "@feedback/core"
import { afterAll, beforeAll, expect } from "vitest"
import type { TestServer } from "./TestServer.ts"

export const OPERATOR_TOKEN = "test-operator-token"

export const allPermissions: ReadonlyArray<Kernel.Permission> = Kernel.permissions

export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export interface RequestOptions {
  readonly token?: string | undefined
  readonly body?: unknown
  /** Sent as is instead of `body` as JSON (still `application/json` unless `headers` say otherwise). */
  readonly rawBody?: string | undefined
  readonly headers?: Record<string, string>
}

export type TestRequest = (method: string, path: string, options?: RequestOptions) => Promise<TestResponse>

/**
 * Requests to a fetch-style handler (`makeWebHandler`'s, or the in-process server's): the token as a bearer, a body
 * as JSON, and the answer's body parsed when it is JSON. `context` is passed with every request.
 */
export const requestVia = <C extends ReadonlyArray<unknown> = []>(
  handler: (request: Request, ...context: C) => Promise<Response>,
  origin = "http://test",
  ...context: C
): TestRequest =>
async (method, path, opts = {}) => {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.token !== undefined) headers["authorization"] = `Bearer ${opts.token}`
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body))
  if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
  const res = await handler(
    new Request(`${origin}${path}`, { method, headers, ...(body === undefined ? {} : { body }) }),
    ...context
  )
  const text = await res.text()
  let parsed: unknown = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, body: parsed, text }
}

/** An answer with its headers as a plain object, so that whole answers compare with `toEqual`. */
export interface PlainAnswer {
  readonly status: number
  readonly text: string
  readonly headers: Record<string, string>
}

/**
 * Requests to a fetch-style handler with exactly the headers given (a body adds only its JSON content type), for
 * tests that compare one path's answer with another's. `context` is passed with every request.
 */
export const plainCallVia = <C extends ReadonlyArray<unknown> = []>(
  handler: (request: Request, ...context: C) => Promise<Response>,
  origin: string,
  ...context: C
) =>
async (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<PlainAnswer> => {
  const res = await handler(
    new Request(`${origin}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }),
    ...context
  )
  return { status: res.status, text: await res.text(), headers: Object.fromEntries(res.headers) }
}

/** A request to the operator API (`/operator…`) with the operator token. */
export const operatorVia =
  (request: TestRequest, token = OPERATOR_TOKEN) => (method: string, path: string, body?: unknown) =>
    request(method, `/operator${path}`, { token, body })

export interface ProvisionOptions {
  readonly permissions?: ReadonlyArray<Kernel.Permission>
  readonly apiRequestsPerMinute?: number
}

export interface Provisioned {
  readonly organizationId: string
  readonly key: string
  readonly keyId: string
}

/** A fresh organization and a key with the given permissions (all by default), through the operator API. */
export const provisionVia =
  (request: TestRequest, token = OPERATOR_TOKEN) => async (opts: ProvisionOptions = {}): Promise<Provisioned> => {
    const operator = operatorVia(request, token)
    const org = await operator("POST", "/organizations", {
      name: "Test organization",
      ...(opts.apiRequestsPerMinute === undefined ? {} : { apiRequestsPerMinute: opts.apiRequestsPerMinute })
    })
    if (org.status !== 201) throw new Error(`provision failed: ${org.text}`)
    const key = await operator("POST", `/organizations/${org.body.id}/keys`, {
      permissions: opts.permissions ?? allPermissions
    })
    if (key.status !== 201) throw new Error(`key failed: ${key.text}`)
    return { organizationId: org.body.id, key: key.body.secretKey, keyId: key.body.id }
  }

/**
 * A server built before a file's tests with one provisioned key, disposed after them. `call` and `get` send as that
 * key unless given another token.
 */
export const useTestServer = (make: () => TestServer) => {
  let server: TestServer | undefined
  let provisioned: Provisioned | undefined
  beforeAll(async () => {
    server = make()
    provisioned = await server.provision()
  })
  afterAll(() => server?.dispose())
  const current = () => server!
  const key = () => provisioned!.key
  return {
    get server(): TestServer {
      return current()
    },
    get key(): string {
      return key()
    },
    call: (method: string, path: string, body?: unknown, token: string = key()) =>
      current().request(method, path, { token, body }),
    get: (path: string, token: string = key()) => current().request("GET", path, { token })
  }
}

/**
 * The error envelope (shared DECISIONS §1): the status, a JSON body holding `error` alone, its code, a message that
 * says something, and with `path` an issue naming that field. `label` names the case in a failure.
 */
export const expectError = (
  res: { readonly status: number; readonly headers: Headers; readonly body: any },
  status: number,
  code: string,
  path?: string,
  label?: string
) => {
  expect(res.status, `${label ?? ""} ${JSON.stringify(res.body)?.slice(0, 500)}`).toBe(status)
  expect(res.headers.get("content-type"), label).toContain("application/json")
  expect(Object.keys(res.body ?? {}), label).toEqual(["error"])
  expect(res.body.error.code, label).toBe(code)
  expect(typeof res.body.error.message, label).toBe("string")
  expect(res.body.error.message.length, label).toBeGreaterThan(10)
  if (path !== undefined) expect(issuePaths(res), label).toContain(path)
}

/** A 400 `INVALID_REQUEST` naming `path` among its issues. */
export const expectInvalid = (
  res: { readonly status: number; readonly headers: Headers; readonly body: any },
  path: string,
  label?: string
) => expectError(res, 400, "INVALID_REQUEST", path, label)

/** The fields an `INVALID_REQUEST` names, in its order. */
export const issuePaths = (res: { readonly body: any }): Array<string> =>
  res.body.error.details.issues.map((i: { path: string }) => i.path)
