/**
 * `capturingOnly`: a handler group built over only the services it names, so HttpApi no longer copies every service
 * of the application into each request's context (docs/DECISIONS.md §42). The group still gets what it captures at
 * build; a service it does not name is not in its requests' context; one the request's own context holds still is.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { capturingOnly } from "../src/server/HandlerGroups.ts"

class Used extends Context.Service<Used, { readonly name: string }>()("test/Used") {}
class Extra extends Context.Service<Extra, { readonly name: string }>()("test/Extra") {}

class Api extends HttpApi.make("groups").add(
  HttpApiGroup.make("probe").add(
    HttpApiEndpoint.get("get", "/probe", {
      success: Schema.Struct({ used: Schema.String, extraInRequest: Schema.Boolean })
    })
  )
) {}

const Probe = HttpApiBuilder.group(
  Api,
  "probe",
  Effect.fn(function*(handlers) {
    const used = yield* Used
    return handlers.handle(
      "get",
      () =>
        Effect.map(Effect.serviceOption(Extra), (extra) => ({ used: used.name, extraInRequest: Option.isSome(extra) }))
    )
  })
)

const serve = async (group: typeof Probe) => {
  const { dispose, handler } = HttpRouter.toWebHandler(
    HttpApiBuilder.layer(Api).pipe(
      Layer.provide(group),
      Layer.provide(Layer.mergeAll(Layer.succeed(Used, { name: "used" }), Layer.succeed(Extra, { name: "extra" }))),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true }
  )
  try {
    const response = await handler(new Request("http://test/probe"))
    return { status: response.status, body: await response.json() }
  } finally {
    await dispose()
  }
}

describe("capturingOnly", () => {
  it("keeps what the group captures and leaves the rest of the application's services out of its requests", async () => {
    expect(await serve(Probe)).toEqual({ status: 200, body: { used: "used", extraInRequest: true } })
    expect(await serve(Probe.pipe(capturingOnly(Used)))).toEqual({
      status: 200,
      body: { used: "used", extraInRequest: false }
    })
  })
})
