/**
 * Handlers of organization setup, and where the setup state's two URLs come from: `embedScriptUrl` from the
 * configuration (EMBED_SCRIPT_URL), `apiBaseUrl` from PUBLIC_API_BASE_URL or, when that is unset, the origin the
 * request was addressed to (the server's own URL as the caller reached it).
 */
import {
  type EventOutbox,
  type IdGenerator,
  getSetupState,
  recordSetupOutcome,
  type ReviewAutomationRepository,
  SetupConfig,
  type SetupRepository,
  setupReviews,
  type StorefrontRecordRepository,
  type UnitOfWork
} from "@feedback/core"
import { Context, Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../../api/Api.ts"

/** A placeholder until the widget bundle has a real home: set EMBED_SCRIPT_URL in every real deployment. */
export const DEFAULT_EMBED_SCRIPT_URL = "https://cdn.example.com/widgets/v1/embed.js"

/** The configured URLs; `apiBaseUrl` undefined means "the origin of each request". */
export class SetupUrls extends Context.Service<SetupUrls, {
  readonly embedScriptUrl: string
  readonly apiBaseUrl: string | undefined
}>()("feedback/http/SetupUrls") {
  static readonly layer = (options: {
    readonly embedScriptUrl?: string | undefined
    readonly publicApiBaseUrl?: string | undefined
  }) =>
    Layer.succeed(SetupUrls, SetupUrls.of({
      embedScriptUrl: options.embedScriptUrl ?? DEFAULT_EMBED_SCRIPT_URL,
      apiBaseUrl: options.publicApiBaseUrl === undefined ? undefined : withoutTrailingSlash(options.publicApiBaseUrl)
    }))
}

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, "")

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

type Services =
  | SetupRepository
  | StorefrontRecordRepository
  | ReviewAutomationRepository
  | EventOutbox
  | IdGenerator
  | UnitOfWork

export const SetupHandlers = HttpApiBuilder.group(AdminApi, "setup", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Services>()
  const urls = yield* SetupUrls
  const configOfRequest = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
    SetupConfig.of({
      embedScriptUrl: urls.embedScriptUrl,
      apiBaseUrl: urls.apiBaseUrl ?? requestOrigin(request)
    }))
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(configOfRequest, (config) =>
      effect.pipe(Effect.provideService(SetupConfig, config), Effect.provide(services)))
  return handlers
    .handle("get", () => run(getSetupState))
    .handle("update", ({ payload }) => run(recordSetupOutcome(payload)))
    .handle("setupReviews", ({ payload }) => run(setupReviews(payload.data)))
}))
