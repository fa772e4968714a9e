/**
 * A reference point for the hot-path benchmark: the least an Effect HttpApi server does for the same request —
 * one `GET /organization` endpoint with a success schema, whose handler hashes the bearer key, finds it in a Map and
 * returns the organization; no middleware, no error envelope, no rate limit. What our server adds beyond this is
 * ours to optimise; what this costs beyond bare node:http is the framework's.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiError, HttpApiGroup } from "effect/http-api"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { organizationByKeyHash as byHash } from "./bench-organization.ts"

const Organization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  plan: Schema.Struct({ apiRequestsPerMinute: Schema.Number }),
  createdAt: Schema.String
})

class Api extends HttpApi.make("floor").add(
  HttpApiGroup.make("organization").add(
    HttpApiEndpoint.get("get", "/organization", { success: Organization, error: HttpApiError.Unauthorized })
  )
) {}

const Handlers = HttpApiBuilder.group(
  Api,
  "organization",
  (handlers) =>
    handlers.handle("get", () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const auth = request.headers["authorization"] ?? ""
        const found = auth.startsWith("Bearer ")
          ? byHash.get(createHash("sha256").update(auth.slice(7)).digest("hex"))
          : undefined
        return found === undefined ? Effect.fail(new HttpApiError.Unauthorized()) : Effect.succeed(found)
      }))
)

const Announce = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  yield* Effect.sync(() =>
    process.stdout.write(`Admin API listening on ${HttpServer.formatAddress(server.address)} (Effect floor)\n`)
  )
}))

const App = HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(Handlers)), {
  disableLogger: true,
  disableListenLog: true
}).pipe(
  Layer.merge(Announce),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env["PORT"] ?? 0), host: "127.0.0.1" }))
)

NodeRuntime.runMain(Layer.launch(App) as Effect.Effect<never, unknown>)
