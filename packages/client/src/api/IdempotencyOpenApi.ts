/**
 * The `Idempotency-Key` request header and the `Idempotent-Replayed` response header (docs/DECISIONS.md §18) on
 * every secured POST, PATCH and DELETE of the document: one shared parameter and one shared header component, each
 * operation referring to them, so the contract names the behaviour the server applies to exactly those methods.
 */
import { Idempotency, Kernel } from "@feedback/core"
import { envelopeSchema } from "./OpenApiDocument.ts"

const keyed = ["post", "patch", "delete"] as const

const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: `Makes a retry safe: the first request with this key that the operation decides (a 2xx, 404, 409 or ` +
    `422) is recorded for ${
      Idempotency.IDEMPOTENCY_TTL_MS / 3_600_000
    } hours, and a repeat with the same method, path and body ` +
    `gets that answer again (with \`Idempotent-Replayed: true\`) without running anything. The same key with another ` +
    `request is 422 \`IDEMPOTENCY_KEY_REUSED\`; a repeat while the first still runs is 409 \`CONFLICT\`. Send a new ` +
    `random value (such as a UUID) for each distinct request.`,
  schema: {
    type: "string",
    minLength: 1,
    maxLength: Idempotency.MAX_IDEMPOTENCY_KEY_LENGTH,
    pattern: "^[\\x20-\\x7E]+$"
  }
}

const idempotentReplayed = {
  required: false,
  description:
    "`true` when this answer is the recorded response of an earlier request with the same `Idempotency-Key`.",
  schema: { type: "string", enum: ["true"] }
}

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/**
 * The answers the key itself can cause, on every keyed operation whether or not the operation has them otherwise:
 * 409 while the first request with the key still runs, 422 when the key comes back with another request (beside
 * the operation's own 422, if it has one).
 */
const withKeyAnswers = (responses: Record<string, any>) => {
  responses["409"] ??= {
    description: "`CONFLICT`: a request with the same `Idempotency-Key` is still running; retry it shortly.",
    content: { "application/json": { schema: schemaRef("ConflictError") } }
  }
  const reused = schemaRef("IdempotencyKeyReusedError")
  const own = responses["422"]
  if (own === undefined) {
    responses["422"] = {
      description: "`IDEMPOTENCY_KEY_REUSED`: this `Idempotency-Key` was already used with another request.",
      content: { "application/json": { schema: reused } }
    }
  } else {
    for (const media of Object.values<Record<string, any>>(own["content"] ?? {})) {
      media["schema"] = { oneOf: [media["schema"], reused] }
    }
  }
}

export const withIdempotencyKeys = (spec: Record<string, any>): Record<string, any> => {
  const components = (spec["components"] ??= {})
  ;(components["parameters"] ??= {})["IdempotencyKey"] = idempotencyKey
  ;(components["headers"] ??= {})["Idempotent-Replayed"] = idempotentReplayed
  const schemas = (components["schemas"] ??= {})
  schemas["ConflictError"] ??= envelopeSchema(Kernel.errorWire.Conflict.code)
  schemas["IdempotencyKeyReusedError"] ??= envelopeSchema(Kernel.errorWire.IdempotencyKeyReused.code)
  const paths: Record<string, Record<string, any>> = spec["paths"] ?? {}
  for (const item of Object.values(paths)) {
    for (const method of keyed) {
      const operation = item[method]
      if (operation === undefined || (operation.security ?? []).length === 0) continue
      operation["parameters"] = [...(operation["parameters"] ?? []), { $ref: "#/components/parameters/IdempotencyKey" }]
      withKeyAnswers(operation["responses"] ??= {})
      for (const [status, response] of Object.entries<Record<string, any>>(operation["responses"] ?? {})) {
        if (!/^(2\d\d|404|409|422)$/.test(status) || response["$ref"] !== undefined) continue
        response["headers"] = {
          ...response["headers"],
          "Idempotent-Replayed": { $ref: "#/components/headers/Idempotent-Replayed" }
        }
      }
    }
  }
  return spec
}
