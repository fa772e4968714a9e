/** The operator token check: constant-time comparison of SHA-256 digests, so neither length nor prefix leaks. */
import { Kernel } from "@feedback/core"
import { Effect, Layer, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { OperatorAuth } from "@feedback/client/effect"
import { guardJsonBody } from "../JsonBodyShape.ts"

const digest = (s: string) => createHash("sha256").update(s).digest()

export const OperatorAuthLive = (operatorToken: Redacted.Redacted<string>) => {
  const expected = digest(Redacted.value(operatorToken))
  return Layer.succeed(
    OperatorAuth,
    OperatorAuth.of({
      operatorToken: (httpEffect, { credential }) =>
        timingSafeEqual(digest(Redacted.value(credential)), expected)
          ? Effect.andThen(guardJsonBody, httpEffect)
          : Effect.fail(
            new Kernel.Unauthorized({
              message: "Missing or invalid operator token: send `Authorization: Bearer <OPERATOR_TOKEN>`."
            })
          )
    })
  )
}
