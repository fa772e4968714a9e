/**
 * The HTTP side of the stores' safety net (docs/SECURITY.md: no input produces a 5xx). A value that passed
 * validation but that the database refused reaches here as a `StoreRejection` defect (store interfaces have no
 * error channel); it is answered as the 400/409 it carries, in the usual envelope, on every route.
 */
import { Kernel } from "@feedback/core"
import { Effect, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { ConflictResponse, InvalidRequestResponse } from "@feedback/client/effect"

const encodeInvalidRequest = Schema.encodeSync(InvalidRequestResponse)
const encodeConflict = Schema.encodeSync(ConflictResponse)

const respond = ({ error }: Kernel.StoreRejection) =>
  HttpServerResponse.jsonUnsafe(
    error._tag === "Conflict" ? encodeConflict(error) : encodeInvalidRequest(error),
    { status: Kernel.errorWire[error._tag].status }
  )

export const StoreRejectionResponses = HttpRouter.middleware(
  (httpEffect) =>
    Effect.catchDefect(
      httpEffect,
      (defect) => Kernel.isStoreRejection(defect) ? Effect.succeed(respond(defect)) : Effect.die(defect)
    ),
  { global: true }
)
