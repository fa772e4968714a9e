/**
 * The error model of the API (docs/DECISIONS.md §1) as tagged Schema errors. Use-cases fail with these; the HTTP adapter
 * renders each as `{"error": {"code", "message", "details"?}}` with the status of `errorStatus`. Messages are one
 * sentence that says what was wrong and how to fix it; they never carry internal names, SQL or stack traces.
 */
import { Schema } from "effect"

/**
 * Builds an error that answers a request without capturing a stack trace: the envelope never shows one, and on the
 * paths a flood of bad requests takes (401 for unknown keys, 429 while a bucket is empty) capturing it was about a
 * tenth of the request's CPU.
 */
export const withoutStack = <A>(make: () => A): A => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}

/** One problem found in a request: where (`path`, dot/bracket notation such as `body.data[3].rating`) and what. */
export const RequestIssue = Schema.Struct({ path: Schema.String, message: Schema.String }).annotate({
  identifier: "RequestIssue"
})
export type RequestIssue = typeof RequestIssue.Type

/**
 * At most this many issues are listed in one answer: enough to fix a request, and a hostile request cannot make the
 * answer grow with its size (`docs/SECURITY.md`).
 */
export const MAX_REQUEST_ISSUES = 20

/** 400: malformed JSON, schema failure, unknown field, bad filter, bad cursor, limit out of range. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  issues: Schema.Array(RequestIssue)
}) {
  static single(path: string, message: string): InvalidRequest {
    return new InvalidRequest({ message: path === "" ? message : `${path}: ${message}`, issues: [{ path, message }] })
  }

  /**
   * The answer for several issues: the first `MAX_REQUEST_ISSUES` are listed, and the message names the first and
   * says how many more there were. `total` is the number found when the caller stopped collecting early.
   */
  static of(issues: ReadonlyArray<RequestIssue>, total = issues.length): InvalidRequest {
    const [first] = issues
    if (first === undefined) return InvalidRequest.single("", "The request is invalid.")
    if (total <= 1) return InvalidRequest.single(first.path, first.message)
    const listed = issues.length > MAX_REQUEST_ISSUES ? issues.slice(0, MAX_REQUEST_ISSUES) : issues
    const more = total - 1
    const head = first.path === "" ? first.message : `${first.path}: ${first.message}`
    const tail = total > listed.length ? `; details list the first ${listed.length}` : ", see details"
    return new InvalidRequest({
      message: `${head} (and ${more} more issue${more === 1 ? "" : "s"}${tail}).`,
      issues: listed
    })
  }
}

/** 401: missing, malformed, unknown or revoked credentials. One message for every case, so it is no oracle. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}) {
  static readonly default = (): Unauthorized =>
    withoutStack(() =>
      new Unauthorized({ message: "Missing or invalid API key: send `Authorization: Bearer <secret key>`." })
    )
  /** A signed customer call whose signature is wrong, malformed, early or stale (one message for every case). */
  static readonly customerSignature = (): Unauthorized =>
    withoutStack(() =>
      new Unauthorized({
        message:
          "Invalid or expired customer signature: sign `{apiPublishableKey}\\n{customerEmail}\\n{timestamp}` with the key's signing secret (docs/STOREFRONT.md)."
      })
    )
  /** The storefront routes' one 401: the same for a missing, unknown, revoked or secret key. */
  static readonly publishable = (): Unauthorized =>
    withoutStack(() =>
      new Unauthorized({
        message:
          "Missing or invalid publishable key: send `X-Publishable-Key: pk_…` or the query parameter `apiPublishableKey`."
      })
    )
}

/** 403: the key lacks the permission the operation needs. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String,
  permission: Schema.String
}) {
  static missing(permission: string): Forbidden {
    return withoutStack(() =>
      new Forbidden({
        message: `This API key lacks the \`${permission}\` permission needed for this operation.`,
        permission
      })
    )
  }
}

/** 404: no such record in the caller's organization (another organization's record looks exactly the same). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String,
  resource: Schema.String
}) {
  static of(resource: string, id?: string): NotFound {
    return new NotFound({
      message: id === undefined ? `No such ${resource}.` : `No ${resource} with id ${id} exists in this organization.`,
      resource
    })
  }
}

/** 409: a uniqueness clash, such as a second reply to a review. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {}

/** 413: the request body is over the size limit. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String,
  limitBytes: Schema.Int
}) {}

/** 422: a title/body edit that is not the current text with spans replaced by `[redacted]`. */
export class InvalidRedaction extends Schema.TaggedError<InvalidRedaction>()("InvalidRedaction", {
  message: Schema.String,
  field: Schema.String
}) {}

/** 422: a strict import met a row it could not resolve; nothing was imported. */
export class ImportFailed extends Schema.TaggedError<ImportFailed>()("ImportFailed", {
  message: Schema.String,
  index: Schema.Int
}) {}

/**
 * 422: an `Idempotency-Key` already used, within 24 hours, for a request with another method, path or body
 * (docs/DECISIONS.md §18). A client sends a fresh key for each distinct request.
 */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  message: Schema.String
}) {
  static readonly default = (): IdempotencyKeyReused =>
    new IdempotencyKeyReused({
      message:
        "This Idempotency-Key was already used for a request with another method, path or body; send a new key for a new request."
    })
}

/** 429: the request cannot afford its token cost. `retryAfterSeconds` is absent when it never can (cost > ceiling). */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", {
  message: Schema.String,
  retryAfterSeconds: Schema.optional(Schema.Int),
  cost: Schema.Finite,
  limit: Schema.Finite,
  remaining: Schema.Finite
}) {}

/** 500: a defect. The body repeats the request id under which it was logged. */
export class Internal extends Schema.TaggedError<Internal>()("Internal", {
  message: Schema.String,
  requestId: Schema.String
}) {}

/** Every error a client can see, and its wire code and status: the single table the HTTP adapter renders from. */
export const errorWire = {
  InvalidRequest: { status: 400, code: "INVALID_REQUEST" },
  Unauthorized: { status: 401, code: "UNAUTHORIZED" },
  Forbidden: { status: 403, code: "FORBIDDEN" },
  NotFound: { status: 404, code: "NOT_FOUND" },
  Conflict: { status: 409, code: "CONFLICT" },
  PayloadTooLarge: { status: 413, code: "PAYLOAD_TOO_LARGE" },
  UnsupportedMediaType: { status: 415, code: "UNSUPPORTED_MEDIA_TYPE" },
  InvalidRedaction: { status: 422, code: "INVALID_REDACTION" },
  ImportFailed: { status: 422, code: "IMPORT_FAILED" },
  IdempotencyKeyReused: { status: 422, code: "IDEMPOTENCY_KEY_REUSED" },
  TooManyRequests: { status: 429, code: "TOO_MANY_REQUESTS" },
  Internal: { status: 500, code: "INTERNAL" },
  StoreUnavailable: { status: 503, code: "SERVICE_UNAVAILABLE" }
} as const
