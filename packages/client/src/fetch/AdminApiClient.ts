/**
 * A plain `fetch` client for merchants' developers who do not use Effect: `openapi-fetch` typed by the paths of the
 * server's own OpenAPI document, so every path, parameter, body and response is checked by the compiler and the
 * install is tiny (no Effect, no store, no server code: docs/DECISIONS.md §12).
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch"
import type { paths } from "./AdminApiPaths.ts"

export type { components as AdminApiComponents, paths as AdminApiPaths } from "./AdminApiPaths.ts"

export interface AdminApiClientOptions extends Omit<ClientOptions, "baseUrl"> {
  /** The API's origin, e.g. `https://api.example.com` (no trailing path). */
  readonly baseUrl: string
  /** A secret key (`sk_…`), sent as `Authorization: Bearer`. */
  readonly secretKey: string
}

export type AdminApiClient = Client<paths>

/**
 * `client.GET("/reviews/{id}", { params: { path: { id } } })` answers `{ data }` on 2xx and `{ error }` (the API's
 * error envelope) otherwise; `response` is always the raw `Response`, for headers such as `Retry-After`.
 */
export const createAdminApiClient = ({ secretKey, headers, ...options }: AdminApiClientOptions): AdminApiClient =>
  createClient<paths>({
    // List parameters (`include`, `events`) go as one comma-separated value, as the document declares them
    // (`style: form, explode: false`); the server refuses a repeated parameter.
    querySerializer: { array: { style: "form", explode: false } },
    ...options,
    headers: { ...(headers as Record<string, string> | undefined), authorization: `Bearer ${secretKey}` }
  })
