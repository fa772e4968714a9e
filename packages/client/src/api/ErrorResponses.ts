/**
 * The wire form of every core error (docs/DECISIONS.md §1): `{"error": {"code", "message", "details"?}}` with the status of
 * `errorWire`. Each schema decodes the envelope into the core's tagged error and encodes the error back, so the
 * server answers the envelope and the typed client gets the core error class.
 */
import { Kernel } from "@feedback/core"
import { Schema, SchemaTransformation } from "effect"
import { HttpApiSchema } from "effect/http-api"

type Wire = typeof Kernel.errorWire
type Tag = keyof Wire

const envelope = <T extends Tag, D extends Schema.Top>(tag: T, details: D) =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(Kernel.errorWire[tag].code),
      message: Schema.String,
      details
    })
  }).annotate({ identifier: `${tag}Error` })

/**
 * Builds the wire schema of one error class. `toDetails` picks what the envelope's `details` shows of the error's
 * fields; `fromDetails` restores them on the client side.
 */
const wire = <
  Self extends { readonly _tag: T; readonly message: string },
  T extends Tag,
  Enc extends { readonly _tag: T; readonly message: string },
  D extends Schema.Top
>(
  cls: Schema.Codec<Self, Enc>,
  tag: T,
  details: D,
  toDetails: (e: Enc) => D["Type"] | undefined,
  fromDetails: (d: D["Type"]) => Omit<Enc, "_tag" | "message">
) =>
  envelope(tag, details).pipe(
    Schema.decodeTo(
      cls,
      SchemaTransformation.transform({
        decode: (w: { readonly error: { readonly message: string; readonly details: D["Type"] } }) =>
          ({ _tag: tag, message: w.error.message, ...fromDetails(w.error.details) }) as unknown as Enc,
        encode: (e: Enc) => {
          const details = toDetails(e)
          return {
            error: {
              code: Kernel.errorWire[tag].code,
              message: e.message,
              ...(details === undefined ? {} : { details })
            }
          } as never
        }
      }) as never
    ),
    HttpApiSchema.status(Kernel.errorWire[tag].status)
  )

const NoDetails = Schema.optionalKey(Schema.Struct({}))

export const InvalidRequestResponse = wire(
  Kernel.InvalidRequest,
  "InvalidRequest",
  Schema.Struct({ issues: Schema.Array(Kernel.RequestIssue) }),
  // Builders cap their issues already (`InvalidRequest.of`); this keeps the wire bound whoever built the error.
  (e) => ({
    issues: e.issues.length > Kernel.MAX_REQUEST_ISSUES ? e.issues.slice(0, Kernel.MAX_REQUEST_ISSUES) : e.issues
  }),
  (d) => ({ issues: d.issues })
)
export const UnauthorizedResponse = wire(Kernel.Unauthorized, "Unauthorized", NoDetails, () => undefined, () => ({}))
export const ForbiddenResponse = wire(
  Kernel.Forbidden,
  "Forbidden",
  Schema.Struct({ permission: Schema.String }),
  (e) => ({ permission: e.permission }),
  (d) => ({ permission: d.permission })
)
export const NotFoundResponse = wire(
  Kernel.NotFound,
  "NotFound",
  Schema.Struct({ resource: Schema.String }),
  (e) => ({ resource: e.resource }),
  (d) => ({ resource: d.resource })
)
export const ConflictResponse = wire(Kernel.Conflict, "Conflict", NoDetails, () => undefined, () => ({}))
export const StoreUnavailableResponse = wire(
  Kernel.StoreUnavailable,
  "StoreUnavailable",
  NoDetails,
  () => undefined,
  () => ({})
)
export const PayloadTooLargeResponse = wire(
  Kernel.PayloadTooLarge,
  "PayloadTooLarge",
  Schema.Struct({ limitBytes: Schema.Int }),
  (e) => ({ limitBytes: e.limitBytes }),
  (d) => ({ limitBytes: d.limitBytes })
)
export const InvalidRedactionResponse = wire(
  Kernel.InvalidRedaction,
  "InvalidRedaction",
  Schema.Struct({ field: Schema.String }),
  (e) => ({ field: e.field }),
  (d) => ({ field: d.field })
)
export const ImportFailedResponse = wire(
  Kernel.ImportFailed,
  "ImportFailed",
  Schema.Struct({ index: Schema.Int, message: Schema.String }),
  (e) => ({ index: e.index, message: e.message }),
  (d) => ({ index: d.index })
)
export const TooManyRequestsResponse = wire(
  Kernel.TooManyRequests,
  "TooManyRequests",
  Schema.Struct({
    retryAfterSeconds: Schema.optionalKey(Schema.Int),
    cost: Schema.Finite,
    limit: Schema.Finite,
    remaining: Schema.Finite
  }),
  (e) => ({
    ...(e.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: e.retryAfterSeconds }),
    cost: e.cost,
    limit: e.limit,
    remaining: e.remaining
  }),
  (d) => ({ retryAfterSeconds: d.retryAfterSeconds, cost: d.cost, limit: d.limit, remaining: d.remaining })
)
