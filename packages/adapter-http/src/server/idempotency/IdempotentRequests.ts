/**
 * `Idempotency-Key` on the admin API (docs/DECISIONS.md §18): run inside `SecretKeyAuth`, after authentication, the
 * rate-limit charge (a replay is charged like any request) and the permission check, around the endpoint itself.
 * The core's `Idempotency` service orders claim, run, record and release; this module says what an HTTP response
 * is worth recording and answers the key's own outcomes (400 bad key, 409 running, 422 reused, replays).
 */
import { Idempotency, Kernel, RateLimits } from "@feedback/core"
import { Cause, Effect, Exit, Option, Result, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  ConflictResponse,
  ImportFailedResponse,
  InvalidRedactionResponse,
  InvalidRequestResponse,
  NotFoundResponse
} from "@feedback/client/effect"

/** Endpoints that commit before they answer, so their response is recorded right after (see `IdempotentOptions`). */
const answersAfterCommit: ReadonlySet<string> = new Set([RateLimits.endpointKey("POST", "/webhooks/:id/ping")])

/** The errors an operation decides that a retry would meet again (404/409/422), with their wire encoders. */
const recordedErrors: Readonly<Record<string, (error: never) => unknown>> = {
  NotFound: Schema.encodeSync(NotFoundResponse) as never,
  Conflict: Schema.encodeSync(ConflictResponse) as never,
  InvalidRedaction: Schema.encodeSync(InvalidRedactionResponse) as never,
  ImportFailed: Schema.encodeSync(ImportFailedResponse) as never
}
const encodeInvalidRequest = Schema.encodeSync(InvalidRequestResponse)
const encodeConflict = Schema.encodeSync(ConflictResponse)

const json = (status: number, body: unknown): Idempotency.StoredResponse => ({
  status,
  contentType: "application/json",
  body: JSON.stringify(body)
})

const decoder = new TextDecoder()

/** A response as recorded, when its status is one to record and its body is in memory (every JSON answer is). */
const storedOf = (response: HttpServerResponse.HttpServerResponse): Idempotency.StoredResponse | undefined => {
  if (!Idempotency.isRecordedStatus(response.status)) return undefined
  const body = response.body
  if (body._tag === "Empty") return { status: response.status, contentType: null, body: "" }
  if (body._tag === "Uint8Array") {
    return { status: response.status, contentType: body.contentType, body: decoder.decode(body.body) }
  }
  return undefined
}

/** Inside a security middleware the endpoint's failures arrive wrapped (HttpApiBuilder's `HandlerError`). */
const unwrap = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "~effect/http-api/HttpApiBuilder/HandlerError" in error &&
    "error" in error
    ? error.error
    : error

const failureOf = (cause: Cause.Cause<unknown>): Idempotency.StoredResponse | undefined => {
  const error = Option.getOrUndefined(Cause.findErrorOption(cause))
  if (error !== undefined) {
    const domain = unwrap(error) as { readonly _tag?: unknown }
    const encode = typeof domain?._tag === "string" ? recordedErrors[domain._tag] : undefined
    return encode === undefined
      ? undefined
      : json(Kernel.errorWire[domain._tag as keyof typeof Kernel.errorWire].status, encode(domain as never))
  }
  // A unique clash the database caught is the operation's own 409 too (StoreRejections renders the first one).
  const defect = Result.getOrUndefined(Cause.findDefect(cause))
  return Kernel.isStoreRejection(defect) && defect.error._tag === "Conflict"
    ? json(409, encodeConflict(defect.error))
    : undefined
}

const recordOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) =>
  Effect.sync(() => Exit.isSuccess(exit) ? storedOf(exit.value) : failureOf(exit.cause))

const replay = (stored: Idempotency.StoredResponse) => {
  const headers = { [Idempotency.IDEMPOTENT_REPLAYED_HEADER]: "true" }
  return stored.contentType === null
    ? HttpServerResponse.empty({ status: stored.status, headers })
    : HttpServerResponse.text(stored.body, { status: stored.status, contentType: stored.contentType, headers })
}

/**
 * The key's own outcomes, failed by `Idempotency.run` itself (the endpoint's failures arrive wrapped, so an endpoint's
 * own Conflict is never mistaken for one of these).
 */
const isKeyOutcome = (e: unknown): e is Kernel.Conflict | Kernel.IdempotencyKeyReused =>
  e instanceof Kernel.Conflict || e instanceof Kernel.IdempotencyKeyReused

const keyAnswer = (e: Kernel.Conflict | Kernel.IdempotencyKeyReused) =>
  e._tag === "Conflict"
    ? answer(409, encodeConflict(e))
    : answer(422, { error: { code: Kernel.errorWire.IdempotencyKeyReused.code, message: e.message } })

const answer = (status: number, body: unknown) => HttpServerResponse.jsonUnsafe(body, { status })

/** The target a fingerprint covers: path and query string, whatever host the request named. */
const targetOf = (url: string) => {
  const parsed = new URL(url, "http://localhost")
  return parsed.pathname + parsed.search
}

/**
 * Runs `httpEffect` (the endpoint, already authenticated and charged) under the request's `Idempotency-Key`, if it
 * sent one on a POST, PATCH or DELETE. `route` is the endpoint's method and path template.
 */
export const idempotently = <E, R>(
  idempotency: Idempotency.Idempotency["Service"],
  route: { readonly method: string; readonly path: string },
  organizationId: string,
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!Idempotency.idempotentMethods.has(request.method)) return yield* httpEffect
    const parsed = Idempotency.parseIdempotencyKey(request.headers[Idempotency.IDEMPOTENCY_KEY_HEADER])
    if (Result.isFailure(parsed)) return answer(400, encodeInvalidRequest(parsed.failure))
    const key = parsed.success
    if (key === undefined) return yield* httpEffect
    // A body that cannot be read (too large, cut off) fails the same way inside the endpoint; nothing is recorded.
    const body = yield* Effect.option(request.arrayBuffer)
    if (Option.isNone(body)) return yield* httpEffect
    const fingerprint = Idempotency.requestFingerprint(
      request.method,
      targetOf(request.url),
      new Uint8Array(body.value)
    )
    const atomic = !answersAfterCommit.has(RateLimits.endpointKey(route.method, route.path))
    const result = yield* idempotency.run({ organizationId, key, fingerprint }, httpEffect, { recordOf, atomic }).pipe(
      Effect.catchIf(isKeyOutcome, (e) => Effect.succeed({ _tag: "Answer" as const, response: keyAnswer(e) }))
    ) as Effect.Effect<
      Idempotency.IdempotentResult<HttpServerResponse.HttpServerResponse> | {
        readonly _tag: "Answer"
        readonly response: HttpServerResponse.HttpServerResponse
      },
      E,
      R
    >
    switch (result._tag) {
      case "Ran":
        return result.value
      case "Replayed":
        return replay(result.response)
      case "Answer":
        return result.response
    }
  })
