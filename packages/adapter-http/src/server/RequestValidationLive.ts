/**
 * Maps HttpApi's schema failures to INVALID_REQUEST with one issue per offending field. Only the request's own parts
 * are the client's fault: a response that fails to encode (`Body`, `ResponseHeaders`) is our defect, so it dies and
 * is answered 500 with a request id, instead of blaming the client with a 400.
 */
import { Effect } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { RequestValidation } from "@feedback/client/effect"
import { Kernel } from "@feedback/core"

const requestParts = { Params: "path", Query: "query", Payload: "body", Headers: "headers" } as const

export const RequestValidationLive = HttpApiMiddleware.layerSchemaErrorTransform(
  RequestValidation,
  (error) =>
    error.kind in requestParts
      ? Effect.fail(Kernel.invalidRequestOfSchema(requestParts[error.kind as keyof typeof requestParts], error.cause))
      : Effect.die(error)
)
