/**
 * Handlers of organization setup, and where the setup state's two URLs come from: `embedScriptUrl` from the
 * configuration (EMBED_SCRIPT_URL, else the API's own `/storefront/embed.js`), `apiBaseUrl` from PUBLIC_API_BASE_URL or, when that is unset, the origin the
 * request was addressed to (the server's own URL as the caller reached it). The configuration is the core's
 * `SetupConfig`, which the `Setup` service captures when it is built; each call only passes its request's origin.
 */
import { Setup } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"

export const EMBED_SCRIPT_PATH = Setup.EMBED_SCRIPT_PATH

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, "")

/** The setup configuration of the server's options, for the `Setup` service to capture. */
export const setupConfigLayer = (options: {
  readonly embedScriptUrl?: string | undefined
  readonly publicApiBaseUrl?: string | undefined
  readonly serverUrl?: string | undefined
}) =>
  Layer.succeed(Setup.SetupConfig, {
    // Unset: the API's own copy at EMBED_SCRIPT_PATH (shared DECISIONS §19).
    embedScriptUrl: options.embedScriptUrl,
    apiBaseUrl: options.publicApiBaseUrl === undefined ? undefined : withoutTrailingSlash(options.publicApiBaseUrl),
    serverUrl: options.serverUrl === undefined ? undefined : withoutTrailingSlash(options.serverUrl)
  })

/**
 * The origin a request was addressed to: a fetch-style request (embedded handler) carries an absolute URL; a Node
 * request a path, and the origin comes from its Host header.
 */
const requestOrigin = (request: HttpServerRequest.HttpServerRequest): string => {
  try {
    return new URL(request.originalUrl).origin
  } catch {
    return Option.match(HttpServerRequest.toURL(request), { onNone: () => "", onSome: (url) => url.origin })
  }
}

/** What the current request says about how it was reached. */
const thisRequest: Effect.Effect<Setup.SetupRequest, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => ({ apiOrigin: requestOrigin(request) })
)

export const SetupHandlers = HttpApiBuilder.group(
  AdminApi,
  "setup",
  Effect.fn(function*(handlers) {
    const setup = yield* Setup.Setup
    return handlers
      .handle("get", () => Effect.flatMap(thisRequest, (request) => setup.getState(request)))
      .handle(
        "update",
        ({ payload }) => Effect.flatMap(thisRequest, (request) => setup.recordOutcome(payload, request))
      )
      .handle(
        "setupReviews",
        ({ payload }) => Effect.flatMap(thisRequest, (request) => setup.setupReviews(payload.data, request))
      )
  })
).pipe(capturingOnly(Setup.Setup))
