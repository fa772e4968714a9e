/**
 * How the admin API is secured, as part of the contract (shared by server and client):
 * - `SecretKeyAuth`: `Authorization: Bearer sk_…`; provides the caller; may refuse with 401, 403 or 429, and with
 *   400 when the JSON body is too deep or holds too many values to parse.
 * - `RequiredPermission`: the permission an endpoint needs, declared on the endpoint itself so the middleware checks
 *   it before the request is decoded and the OpenAPI document states it.
 * - `OperatorAuth`: the operator API's bearer token.
 * - `StorefrontAuth`: a publishable key (`X-Publishable-Key: pk_…` or `?apiPublishableKey=pk_…`) on `/storefront/…`
 *   routes; provides the storefront caller; may refuse with 401 or 429 (docs/DECISIONS.md §55).
 */
import { Kernel, Storefront } from "@feedback/core"
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import {
  ForbiddenResponse,
  InvalidRequestResponse,
  TooManyRequestsResponse,
  UnauthorizedResponse
} from "./ErrorResponses.ts"

export class RequiredPermission extends Context.Service<RequiredPermission, Kernel.Permission>()(
  "feedback/http/RequiredPermission"
) {}

export class SecretKeyAuth extends HttpApiMiddleware.Service<SecretKeyAuth, {
  provides: Kernel.CurrentCaller
  requires: never
}>()("feedback/http/SecretKeyAuth", {
  requiredForClient: true,
  security: { bearer: HttpApiSecurity.bearer },
  error: [UnauthorizedResponse, ForbiddenResponse, TooManyRequestsResponse, InvalidRequestResponse]
}) {}

/**
 * The storefront's scheme: the publishable key as a header or in the query (spec: Authentication 6). Both are tried,
 * the header first; a secret key never authenticates here, whichever way it is sent.
 */
export class StorefrontAuth extends HttpApiMiddleware.Service<StorefrontAuth, {
  provides: Storefront.CurrentStorefrontCaller
  requires: never
}>()("feedback/http/StorefrontAuth", {
  requiredForClient: true,
  security: {
    publishableKeyHeader: HttpApiSecurity.apiKey({ key: "X-Publishable-Key", in: "header" }),
    publishableKeyQuery: HttpApiSecurity.apiKey({ key: "apiPublishableKey", in: "query" })
  },
  error: [UnauthorizedResponse, TooManyRequestsResponse, InvalidRequestResponse]
}) {}

export class OperatorAuth extends HttpApiMiddleware.Service<OperatorAuth>()("feedback/http/OperatorAuth", {
  requiredForClient: true,
  security: { operatorToken: HttpApiSecurity.bearer },
  error: [UnauthorizedResponse, InvalidRequestResponse]
}) {}

/** Declares the permission an endpoint requires, for the middleware and for the OpenAPI document. */
export const requires = (permission: Kernel.Permission) => <E extends Annotatable<E>>(endpoint: E): E =>
  endpoint
    .annotate(RequiredPermission, permission)
    .annotate(OpenApi.Override, { "x-required-permission": permission })

/**
 * Marks an endpoint whose permission depends on its input (`POST /import-jobs?type=…` needs `<type>:write`): the
 * use-case checks it, and the value says which, for the OpenAPI document. Never open access: the middleware still
 * refuses an endpoint that declares neither this nor `RequiredPermission`.
 */
export class PermissionByInput
  extends Context.Service<PermissionByInput, string>()("feedback/http/PermissionByInput")
{}

export const requiresByInput = (permission: string) => <E extends Annotatable<E>>(endpoint: E): E =>
  endpoint
    .annotate(PermissionByInput, permission)
    .annotate(OpenApi.Override, { "x-required-permission": permission })

interface Annotatable<E> {
  annotate<I, S>(key: Context.Key<I, S>, value: S): E
}

/**
 * Renders every request that fails its schema (path, query or body) as a 400 INVALID_REQUEST that names each
 * offending field, instead of HttpApi's empty 400.
 */
export class RequestValidation
  extends HttpApiMiddleware.Service<RequestValidation>()("feedback/http/RequestValidation", {
    error: InvalidRequestResponse
  })
{}
