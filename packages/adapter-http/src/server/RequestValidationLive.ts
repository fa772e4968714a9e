/** Maps HttpApi's schema failures to INVALID_REQUEST with one issue per offending field. */
import { Effect } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { RequestValidation } from "../api/Security.ts"
import { invalidRequestOf } from "./SchemaIssues.ts"

const roots = { Params: "path", Query: "query", Payload: "body", Body: "body", Headers: "headers", ResponseHeaders: "response" } as const

export const RequestValidationLive = HttpApiMiddleware.layerSchemaErrorTransform(
  RequestValidation,
  (error) => Effect.fail(invalidRequestOf(roots[error.kind], error.cause))
)
