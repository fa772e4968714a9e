/**
 * Headers an answer carries because of its status, whichever handler or middleware made it (docs/DECISIONS.md §63):
 * - a 401 says how to authenticate (`WWW-Authenticate`, RFC 9110 §11.6.1): `Bearer` for secret keys and the
 *   operator token, `PublishableKey` on the storefront, unless the route set its own challenge;
 * - a create says where its record lives (`Location`), from the contract's `createdResources` table.
 */
import { createdResourceOf, locationOf } from "@feedback/client/effect"
import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import type { RouteTable } from "./RouteTable.ts"

const STOREFRONT = "/storefront/"
const decoder = new TextDecoder()

const challengeOf = (path: string) =>
  path.startsWith(STOREFRONT) ? "PublishableKey realm=\"storefront\"" : "Bearer realm=\"feedback\""

/** The created record's `id`, read from the answer's JSON body; undefined when there is none. */
const createdId = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.body._tag !== "Uint8Array") return undefined
  try {
    const id = JSON.parse(decoder.decode(response.body.body))?.id
    return typeof id === "string" ? id : undefined
  } catch {
    return undefined
  }
}

export const withAnswerHeaders = (
  routes: RouteTable,
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse,
  path: string
): HttpServerResponse.HttpServerResponse => {
  if (response.status === 401) {
    return response.headers["www-authenticate"] === undefined
      ? HttpServerResponse.setHeader(response, "www-authenticate", challengeOf(path))
      : response
  }
  if (request.method !== "POST" || (response.status !== 201 && response.status !== 202)) return response
  const pattern = routes.routeOf(request.method, path)
  const entry = pattern === undefined ? undefined : createdResourceOf(request.method, pattern)
  const id = entry === undefined ? undefined : createdId(response)
  return entry === undefined || id === undefined
    ? response
    : HttpServerResponse.setHeader(response, "location", locationOf(entry, path, id))
}
