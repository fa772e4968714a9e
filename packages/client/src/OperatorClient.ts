/**
 * A typed client of the operator API (`/operator`: provisioning organizations, keys and plans), derived from the
 * same contract, authenticated with the operator token. The `feedback-admin-api` CLI's `org` and `key` commands
 * are built on it.
 */
import { Context, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { OperatorApi } from "./api/organizations/OperatorApi.ts"
import { OperatorAuth } from "./api/Security.ts"

export class OperatorClient extends Context.Service<OperatorClient, HttpApiClient.ForApi<typeof OperatorApi>>()(
  "feedback/OperatorClient"
) {}

export interface OperatorClientOptions {
  /** The server's origin, e.g. `http://127.0.0.1:3000`. */
  readonly baseUrl: string
  /** The server's `OPERATOR_TOKEN`. */
  readonly operatorToken: string
}

export const OperatorClientLayer = (options: OperatorClientOptions) =>
  Layer.effect(
    OperatorClient,
    HttpApiClient.make(OperatorApi, {
      transformClient: HttpClient.mapRequest(HttpClientRequest.prependUrl(options.baseUrl))
    })
  ).pipe(
    Layer.provide(HttpApiMiddleware.layerClient(OperatorAuth, ({ next, request }) =>
      next(HttpClientRequest.bearerToken(request, options.operatorToken)))),
    Layer.provide(FetchHttpClient.layer)
  )
