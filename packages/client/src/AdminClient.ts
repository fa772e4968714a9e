/**
 * A typed client of the admin API, generated from the same contract the server serves: every endpoint is a method,
 * payloads and responses are checked at compile time, and errors come back as the core's tagged errors
 * (`NotFound`, `TooManyRequests`, …).
 */
import { Context, Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { AdminApi } from "./api/Api.ts"
import { SecretKeyAuth, StorefrontAuth } from "./api/Security.ts"

export class AdminClient extends Context.Service<AdminClient, HttpApiClient.ForApi<typeof AdminApi>>()(
  "feedback/AdminClient"
) {}

export interface AdminClientOptions {
  /** For example `http://127.0.0.1:3000`. */
  readonly baseUrl: string
  /** A secret key (`sk_…`). Keep it on servers: a key exposed to a browser counts as leaked. */
  readonly secretKey: string
  /** A publishable key (`pk_…`) for the storefront routes, sent as `X-Publishable-Key`; safe in a browser. */
  readonly publishableKey?: string | undefined
}

/** The client as a Layer, over `fetch`. */
export const AdminClientLayer = (options: AdminClientOptions) =>
  Layer.effect(
    AdminClient,
    HttpApiClient.make(AdminApi, {
      transformClient: HttpClient.mapRequest(HttpClientRequest.prependUrl(options.baseUrl))
    })
  ).pipe(
    Layer.provide(HttpApiMiddleware.layerClient(SecretKeyAuth, ({ next, request }) =>
      next(HttpClientRequest.bearerToken(request, options.secretKey)))),
    // Storefront routes take the publishable key instead (and never the secret key, which stays off them).
    Layer.provide(HttpApiMiddleware.layerClient(StorefrontAuth, ({ next, request }) =>
      next(
        options.publishableKey === undefined
          ? request
          : HttpClientRequest.setHeader(request, "x-publishable-key", options.publishableKey)
      ))),
    Layer.provide(FetchHttpClient.layer)
  )

export { Effect }
