/**
 * The floor of a storefront read, for `bench storefront`: the least an Effect HttpApi endpoint does to answer
 * `GET /storefront/ratings` or a product's first page of reviews — one endpoint each with its query as strings, no
 * middleware, no error envelope, no rate limit, the publishable key found in a Map — then the statements the request
 * cannot do without and `JSON.stringify` of what they read. What the real route costs beyond these is ours.
 */
import type { Kernel, StoreServices } from "@feedback/core"
import { Effect, type Layer, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { HttpServerRequest } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiError, HttpApiGroup } from "effect/http-api"
import { floorWebHandler, jsonResponse } from "./floor-handler.ts"

class FloorApi extends HttpApi.make("storefrontFloor").add(
  HttpApiGroup.make("storefront").add(
    HttpApiEndpoint.get("ratings", "/ratings", {
      query: { products: Schema.String },
      success: Schema.Unknown,
      error: HttpApiError.Unauthorized
    }),
    HttpApiEndpoint.get("reviews", "/reviews", {
      query: { product: Schema.String },
      success: Schema.Unknown,
      error: HttpApiError.Unauthorized
    })
  )
) {}

type Reads = StoreServices | SqlClient.SqlClient

export interface StorefrontFloorOptions {
  readonly publishableKey: string
  readonly organizationId: Kernel.OrganizationId
  /** The ratings of these product ids, as the route writes them. */
  readonly ratings: (ids: ReadonlyArray<string>) => Effect.Effect<unknown, never, Reads>
  /** The product's first page of published reviews, as the route writes it. */
  readonly reviews: (productId: string) => Effect.Effect<unknown, never, Reads>
}

export const makeStorefrontFloor = (services: Layer.Layer<Reads>, options: StorefrontFloorOptions) => {
  const byKey = new Map([[options.publishableKey, options.organizationId]])
  const authorized = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (byKey.get(request.headers["x-publishable-key"] ?? "") === undefined) {
      return yield* new HttpApiError.Unauthorized()
    }
  })
  const Handlers = HttpApiBuilder.group(
    FloorApi,
    "storefront",
    (handlers) =>
      handlers
        .handle("ratings", ({ query }) =>
          Effect.andThen(authorized, Effect.map(options.ratings(query.products.split(",")), jsonResponse)))
        .handle("reviews", ({ query }) =>
          Effect.andThen(authorized, Effect.map(options.reviews(query.product), jsonResponse)))
  )
  return floorWebHandler(FloorApi, Handlers, services)
}
