/**
 * Pluggable authentication for an embedding host (docs/EMBEDDING.md, docs/DECISIONS.md §65): the host maps its own
 * sessions or OAuth tokens to callers of the core, so its users never need secret keys. `authenticate` runs first on
 * every admin API request; a caller it returns is used as is, `undefined` lets the bearer secret key decide.
 * - a `DashboardCaller` is a signed-in dashboard user: every permission, never rate limited (spec: Authentication 4);
 * - a `SecretKeyCaller` is an organization's caller with the permissions the host grants, charged to the
 *   organization's bucket like a secret key (its `keyId` names the host's client or grant in audit records).
 */
import type { Kernel } from "@feedback/core"
import { Context, Effect } from "effect"
import type { HttpServerRequest } from "effect/http"

/** What `authenticate` is given: the request as the API sees it, and the host framework's own request object. */
export interface HostRequest {
  readonly method: string
  /** The URL below the mount (the mount's prefix stripped), with its query. */
  readonly url: string
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly cookies: Readonly<Record<string, string>>
  /**
   * The host's request as its framework made it, with whatever its middleware added (a session, a user): Express's
   * and `node:http`'s `IncomingMessage`, Fastify's `FastifyRequest`, Hono's `Context`, or the web `Request`.
   */
  readonly original: unknown
}

/** A host's authentication: a caller, or `undefined` (the bearer secret key then decides). */
export type Authenticate = (
  request: HostRequest
) => Kernel.Caller | undefined | PromiseLike<Kernel.Caller | undefined> | Effect.Effect<Kernel.Caller | undefined>

/** The host's `authenticate`, when it gave one (`ApiServerOptions.authenticate`). */
export const HostAuthentication = Context.Reference<Authenticate | undefined>("feedback/http/HostAuthentication", {
  defaultValue: () => undefined
})

/**
 * Where a mount leaves the framework's request on the object the API reads (a Node `IncomingMessage` or a web
 * `Request`), so `authenticate` sees the session a host middleware attached to it.
 */
const ORIGINAL = Symbol.for("feedback/http/HostRequest.original")

/** Marks `source` (what the API will read) as coming from the framework request `original`. */
export const attachOriginal = <S extends object>(source: S, original: unknown): S => {
  ;(source as Record<symbol, unknown>)[ORIGINAL] = original
  return source
}

/** The framework request a mount attached to `source`, else `source` itself. */
export const originalOf = (source: unknown): unknown =>
  typeof source === "object" && source !== null && ORIGINAL in source
    ? (source as Record<symbol, unknown>)[ORIGINAL]
    : source

const hostRequestOf = (request: HttpServerRequest.HttpServerRequest): HostRequest => ({
  method: request.method,
  url: request.url,
  headers: request.headers,
  cookies: request.cookies,
  original: originalOf(request.source)
})

/** Runs the host's `authenticate` on a request; a failure or a thrown error is a defect (500), never an admission. */
export const runAuthenticate = (
  authenticate: Authenticate,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<Kernel.Caller | undefined> =>
  Effect.suspend(() => {
    const answer = authenticate(hostRequestOf(request))
    if (Effect.isEffect(answer)) return answer
    if (answer !== undefined && typeof (answer as PromiseLike<unknown>).then === "function") {
      return Effect.promise(() => Promise.resolve(answer as PromiseLike<Kernel.Caller | undefined>))
    }
    return Effect.succeed(answer as Kernel.Caller | undefined)
  })
