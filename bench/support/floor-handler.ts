/**
 * What the floors of `bench storefront` and `bench reviews-list` share: their answer (`JSON.stringify` of what the
 * statements read) and their web handler (the floor's own API and handlers, no middleware, the framework's logger
 * off), so that each floor file holds only the work its request cannot do without.
 */
import { Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { type HttpApi, HttpApiBuilder, type HttpApiGroup } from "effect/http-api"

/** The body as the real routes write it. */
export const jsonResponse = (body: unknown) =>
  HttpServerResponse.text(JSON.stringify(body), { contentType: "application/json" })

/** A web handler serving `api` with `handlers`, their services from `services`. */
/** What a handler may require of the router (`HttpRouter.toWebHandler`'s bound). */
type RouterRequirement =
  | HttpRouter.Request<"Requires", any>
  | HttpRouter.Request<"GlobalRequires", any>
  | HttpRouter.Request<"Error", any>
  | HttpRouter.Request<"GlobalError", any>

export const floorWebHandler = <
  Id extends string,
  Groups extends HttpApiGroup.Constraint,
  E,
  R extends RouterRequirement,
  RS,
  ES
>(
  api: HttpApi.HttpApi<Id, Groups>,
  handlers: Layer.Layer<HttpApiGroup.ToService<Id, Groups>, E, R>,
  /** Built services to share (each floor has its own router, so not the real handler's memo map). */
  services: Layer.Layer<RS, ES>
) =>
  HttpRouter.toWebHandler(
    HttpApiBuilder.layer(api).pipe(
      Layer.provide(handlers),
      Layer.provide(services),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true }
  )
