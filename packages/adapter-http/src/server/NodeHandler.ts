/**
 * A Node `(req, res)` handler for the API, beside the fetch-style `makeWebHandler`: what Express, Fastify (its raw
 * request), `node:http` and `node:https` hosts mount directly. Bodies stream through and repeated headers stay
 * repeated, because the request is read by `@effect/platform-node` itself rather than converted to a `Request`.
 */
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { ApiApplication, apiMiddleware, type ApiServerOptions, type ApiServices, requestContext } from "./ApiServer.ts"
import { readableRequest } from "./HostBody.ts"
import { optionalPackage } from "./OptionalPackage.ts"
import type { RefusalGateSlot } from "./RefusalGate.ts"

export interface NodeHandler {
  /** Serves one request; a host mounting it under a prefix strips the prefix from `req.url` first. */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void
  /** Stops the background workers (in-flight work finishes) and releases what the handler built. */
  readonly dispose: () => Promise<void>
}

/**
 * Builds the routes (and the background workers unless `options.workers` is false) over `services`. Pass a host
 * runtime's memo map to share the layers, and so the store, that the host already built.
 */
export const makeNodeHandler = <E>(
  services: Layer.Layer<ApiServices, E>,
  options: ApiServerOptions = {},
  memoMap?: Layer.MemoMap
): Promise<NodeHandler> =>
  Effect.runPromise(Effect.gen(function*() {
    // An optional peer (docs/DECISIONS.md §66): a host serving only `makeWebHandler` never installs it.
    const { NodeHttpServer } = yield* optionalPackage("@effect/platform-node", "makeNodeHandler", () =>
      import("@effect/platform-node"))
    const scope = yield* Scope.make()
    // Known refusals are answered before the framework (`RefusalGate.ts`); such a 429 records no span, and it would
    // come before the host's own authentication: neither a traced handler nor one with `authenticate` has the gate.
    const gated = options.tracer === undefined && options.authenticate === undefined
    const gate: RefusalGateSlot = options.refusalGate ?? { current: undefined }
    const app = ApiApplication(gated ? { ...options, refusalGate: gate } : options).pipe(
      Layer.provide(services),
      Layer.provide(HttpServer.layerServices)
    )
    const context = yield* Layer.buildWithMemoMap(
      // A router of its own: a host building two handlers over one memo map must not get one router with every route twice.
      Layer.provideMerge(app, Layer.fresh(HttpRouter.layer)),
      memoMap ?? Layer.makeMemoMapUnsafe(),
      scope
    ).pipe(
      Effect.onError((cause) =>
        Scope.close(scope, Exit.failCause(cause))
      )
    )
    const router = Context.get(context, HttpRouter.HttpRouter)
    // Requests record spans to the host's tracer, else none: nothing in this context could export them
    // (`untracedRequests`).
    const handle = yield* NodeHttpServer.makeHandler(router.asHttpEffect(), {
      scope,
      middleware: apiMiddleware(options)
    }).pipe(
      Effect.provideContext(Context.merge(context, requestContext(options)))
    )
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      const current = gate.current
      if (current?.refuse(req, res) === true) return
      // A body the host's own parser already read is used as parsed, or answered with the fix (`HostBody.ts`).
      const readable = readableRequest(req, res)
      if (readable === undefined) return
      // A revalidation the gate hands on is admitted with the request the framework reads.
      if (current?.revalidate(readable, res, () => handle(readable, res)) === true) return
      handle(readable, res)
    }
    let disposing: Promise<void> | undefined
    return { handler, dispose: () => disposing ??= Effect.runPromise(Scope.close(scope, Exit.void)) }
  }))
