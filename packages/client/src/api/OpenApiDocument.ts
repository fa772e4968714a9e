/**
 * The one post-processing step of the generated OpenAPI document (docs/DECISIONS.md §21): what Effect's HttpApi
 * annotations cannot express, added from tables here rather than by hand per operation.
 *
 * - `info.contact`, and component schemas that Effect emitted twice under `Name` and `Name_1` merged into one.
 * - Response headers: `X-Request-Id` on every response; on every rate-limited operation the `X-RateLimit-*` pair,
 *   the IETF `RateLimit-Policy` / `RateLimit` fields and `x-rate-limit-cost`, and `Retry-After` on its 429.
 * - The errors every operation can answer whatever its handler does: 500, 503, and 413/415 where a body is taken.
 * - A description per response status that says when it happens; errors shared as `components.responses`.
 * - List-valued query parameters (`include`, `events`) as comma-separated (`style: form`, `explode: false`).
 * - An `example` on every request and response body, built from the body's schema with the values in `samples`.
 * - `WWW-Authenticate` on every 401; `Location` and a link to the read on every create (`CreatedResources.ts`).
 */
import { Kernel } from "@feedback/core"
import { createdResources } from "./CreatedResources.ts"
import { requestExamples } from "./RequestExamples.ts"

type Json = Record<string, any>

const methods = ["get", "put", "post", "patch", "delete"] as const

const header = (description: string, schema: Json, example: unknown, required = false) => ({
  description,
  schema,
  example,
  ...(required ? { required } : {})
})

/** The response headers, as `components.headers`. */
const headers: Json = {
  "X-Request-Id": header(
    "This request's id (`req_…`), also in the access log and in a 500's body; quote it when asking for support.",
    { type: "string" },
    "req_01jd8k3x5v2w7y9z",
    true
  ),
  "X-RateLimit-Limit": header(
    "The organization's budget per minute (tokens; most requests cost 1, see `x-rate-limit-cost`).",
    { type: "integer", minimum: 0 },
    120
  ),
  "X-RateLimit-Remaining": header("Whole tokens left in the organization's bucket after this request.", {
    type: "integer",
    minimum: 0
  }, 119),
  "X-Rate-Limit-Cost": header("Tokens this request cost.", { type: "integer", minimum: 0 }, 1),
  "RateLimit-Policy": header(
    "The IETF rate-limit policy (draft-ietf-httpapi-ratelimit-headers): `\"org\";q=<tokens>;w=60`.",
    { type: "string" },
    "\"org\";q=120;w=60"
  ),
  "RateLimit": header(
    "The IETF rate-limit state: `\"org\";r=<whole tokens left>;t=<whole seconds until the bucket is full>`.",
    { type: "string" },
    "\"org\";r=119;t=1"
  ),
  "Retry-After": header(
    "Whole seconds to wait before the request can be afforded.",
    { type: "integer", minimum: 1 },
    2
  ),
  "WWW-Authenticate": header(
    "The scheme to authenticate with (RFC 9110 §11.6.1): `Bearer` for secret keys and the operator token, " +
      "`PublishableKey` for the storefront.",
    { type: "string" },
    "Bearer realm=\"feedback\"",
    true
  ),
  "Location": header(
    "The created record's path; follow it (or the response's link) to read the record.",
    { type: "string", format: "uri-reference" },
    "/webhooks/0192f5c8-7a1b-7c3d-8e4f-5a6b7c8d9e0f",
    true
  )
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })
const rateLimited = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-Rate-Limit-Cost", "RateLimit-Policy", "RateLimit"]

/** When each status is answered, for the response's `description`. */
const statusText: Readonly<Record<string, string>> = {
  "200": "The request succeeded.",
  "201": "Created.",
  "202": "Accepted: queued, to be done shortly.",
  "400": "`INVALID_REQUEST`: a parameter or body field is missing or wrong; `details.issues` names each one.",
  "401": "`UNAUTHORIZED`: no key, or a key that is unknown or revoked.",
  "403": "`FORBIDDEN`: the key lacks the permission this operation needs (`details.permission`).",
  "404": "`NOT_FOUND`: no such record in this organization (`details.resource`).",
  "409": "`CONFLICT`: the request contradicts the current state (a duplicate, or a record still in use).",
  "413": "`PAYLOAD_TOO_LARGE`: the body is larger than `details.limitBytes`.",
  "415": "`UNSUPPORTED_MEDIA_TYPE`: the body is not `application/json`.",
  "422": "The request is well-formed but cannot be carried out (see the error's `code`).",
  "429": "`TOO_MANY_REQUESTS`: the organization's rate limit cannot afford this request; wait `Retry-After` seconds.",
  "500": "`INTERNAL`: an unexpected failure, logged under `details.requestId`; nothing was changed.",
  "503": "`SERVICE_UNAVAILABLE`: the store does not answer or the server is shutting down; retry shortly."
}

/** The error envelope of a status Effect does not see (answered by the server's middleware), as a schema. */
export const envelopeSchema = (code: string, details?: Json): Json => ({
  type: "object",
  required: ["error"],
  additionalProperties: false,
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      additionalProperties: false,
      properties: {
        code: { type: "string", enum: [code] },
        message: { type: "string" },
        ...(details === undefined ? {} : { details })
      }
    }
  }
})

const middlewareErrors: Readonly<Record<string, Json>> = {
  PayloadTooLargeError: envelopeSchema(Kernel.errorWire.PayloadTooLarge.code, {
    type: "object",
    required: ["limitBytes"],
    additionalProperties: false,
    properties: { limitBytes: { type: "integer" } }
  }),
  UnsupportedMediaTypeError: envelopeSchema(Kernel.errorWire.UnsupportedMediaType.code),
  InternalError: envelopeSchema(Kernel.errorWire.Internal.code, {
    type: "object",
    required: ["requestId"],
    additionalProperties: false,
    properties: { requestId: { type: "string" } }
  }),
  StoreUnavailableError: envelopeSchema(Kernel.errorWire.StoreUnavailable.code)
}

const errorResponse = (status: string, component: string): Json => ({
  description: statusText[status],
  content: { "application/json": { schema: { $ref: `#/components/schemas/${component}` } } }
})

/**
 * Values examples are built from, by property name (the first that fits the schema's type and bounds wins);
 * any other field gets a value of its type.
 */
const samples: Readonly<Record<string, ReadonlyArray<unknown>>> = {
  email: ["ada@example.com"],
  url: ["https://hooks.example.com/feedback"],
  domain: ["shop.example.com"],
  title: ["Fits perfectly", "Everyday ceramic mug"],
  body: ["Comfortable from day one and true to size. Would buy again."],
  name: ["Summer collection"],
  slug: ["everyday-ceramic-mug"],
  externalId: ["sku-1042"],
  firstName: ["Ada"],
  lastName: ["Lovelace"],
  responderName: ["The Example Shop team"],
  authorName: ["The Example Shop team"],
  subject: ["How did we do?"],
  message: ["A human-readable explanation."],
  code: ["profanity"],
  customer: ["ada@example.com"],
  product: ["everyday-ceramic-mug"],
  response: ["Thank you for the kind words!"],
  note: ["Posted twice by mistake."],
  originalTitle: ["Fits perfectly"],
  originalBody: ["Comfortable from day one and true to size. Would buy again."],
  browserFingerprint: ["fp_3c9a1e7b"],
  type: ["rating"],
  action: ["created"],
  event: ["review.created"],
  timestamp: ["2026-03-14T09:26:53.000Z"],
  responseStatus: [200],
  durationMs: [182],
  averageRating: [4.6],
  reviewCount: [12],
  publishedReviewCount: [10],
  path: ["body.rating"],
  // Not `whsec_…`: Standard Webhooks verifiers read that prefix as base64 of the key, which this secret is not.
  hmacSecret: ["f3Kq9vX2mB7tLw4pR8zN1cY6"],
  reason: ["Requested by the customer"],
  rating: [5],
  country: ["GB"],
  currency: ["EUR"],
  locale: ["en"],
  nextCursor: [null],
  requestId: ["req_01jd8k3x5v2w7y9z"],
  phone: ["+44 20 7946 0958"],
  birthday: ["1990-12-10"],
  notes: ["Prefers email."],
  emailOptOutSource: ["unsubscribe-link"],
  responderEmail: ["support@example.com"],
  error: [null],
  ipAddress: ["203.0.113.7"],
  userAgent: ["Mozilla/5.0"],
  ipCountry: ["GB"],
  fileName: ["photo.jpg"],
  contentType: ["image/jpeg"],
  label: ["How would you rate the fit?"],
  lowLabel: ["Too small"],
  highLabel: ["Too large"],
  middleLabel: ["Just right"],
  detail: ["Repeated text"],
  description: ["Hand-glazed stoneware, 350 ml."],
  currencyCode: ["EUR"],
  permission: ["reviews:write"],
  key: ["pk_Xv3mQ9a1Lr7tZ2kB8nW4yC6eF0hJ5sPd"],
  signingSecret: ["pks_q7Nf2xV9LmB4tR8kW1zY6cH3jS5aD0eG2uI9oP7lK4n"],
  resource: ["review"]
}

/** Values by the end of a property's name, when `samples` has none for the whole name. */
const bySuffix: ReadonlyArray<readonly [RegExp, string]> = [
  [/email$/i, "ada@example.com"],
  [/urls?$/i, "https://shop.example.com/images/everyday-ceramic-mug.jpg"],
  [/name$/i, "Ada Lovelace"],
  [/label$/i, "Just right"],
  [/labels$/i, "Just right"]
]

const uuid = "0192f5c8-7a1b-7c3d-8e4f-5a6b7c8d9e0f"
const timestamp = "2026-03-14T09:26:53.000Z"

const typeOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value

/** Formats a sample may stand for: the samples under those names are of that format. */
const formats = new Set(["email", "uri"])

const fits = (schema: Json, value: unknown): boolean => {
  // A sample never stands in for a referenced record; a union fits when one member does.
  if (schema["$ref"] !== undefined) return false
  const alternatives: ReadonlyArray<Json> | undefined = schema["anyOf"] ?? schema["oneOf"]
  if (alternatives !== undefined) return alternatives.some((alternative) => fits(alternative, value))
  if (schema["enum"] !== undefined) return schema["enum"].includes(value)
  if (schema["const"] !== undefined) return schema["const"] === value
  const types: ReadonlyArray<string> = [schema["type"]].flat().filter(Boolean)
  const type = typeOf(value)
  if (types.length > 0 && !types.includes(type) && !(type === "integer" && types.includes("number"))) return false
  if (typeof value === "string") {
    if (schema["format"] !== undefined && !formats.has(schema["format"])) return false
    if (schema["maxLength"] !== undefined && value.length > schema["maxLength"]) return false
    if (schema["minLength"] !== undefined && value.length < schema["minLength"]) return false
    if (schema["pattern"] !== undefined && !new RegExp(schema["pattern"], "u").test(value)) return false
  }
  if (typeof value === "number") {
    if (schema["maximum"] !== undefined && value > schema["maximum"]) return false
    if (schema["minimum"] !== undefined && value < schema["minimum"]) return false
  }
  return true
}

/** A value valid against `schema` (its `$ref`s resolved in `components`), preferring `samples` for `name`. */
const exampleOf = (schema: Json, components: Json, name?: string, depth = 0): unknown => {
  if (schema["$ref"] !== undefined) {
    const target = components[String(schema["$ref"]).replace("#/components/schemas/", "")]
    return target === undefined || depth > 8 ? {} : exampleOf(target, components, name, depth + 1)
  }
  if (schema["examples"] !== undefined) return schema["examples"][0]
  if (schema["default"] !== undefined) return schema["default"]
  const candidates = name === undefined ? undefined : samples[name]
  const candidate = candidates?.find((value) => fits(schema, value))
  if (candidate !== undefined) return candidate
  if (schema["const"] !== undefined) return schema["const"]
  if (schema["enum"] !== undefined) return schema["enum"][0]
  const alternatives: ReadonlyArray<Json> | undefined = schema["anyOf"] ?? schema["oneOf"]
  if (alternatives !== undefined) {
    // Prefer a present value over `null`: an example shows what a field holds.
    const present = alternatives.find((alternative) => alternative["type"] !== "null") ?? alternatives[0]!
    return exampleOf(present, components, name, depth + 1)
  }
  if (schema["allOf"] !== undefined) return exampleOf(schema["allOf"][0], components, name, depth + 1)
  const type = [schema["type"]].flat()[0]
  switch (type) {
    case "object": {
      const out: Json = {}
      const properties: Json = schema["properties"] ?? {}
      const required: ReadonlyArray<string> = schema["required"] ?? []
      for (const [key, property] of Object.entries(properties)) {
        const value = exampleOf(property, components, key, depth + 1)
        // An optional object with nothing to show (`details` of most errors) is left out, as the server does.
        const empty = typeof value === "object" && value !== null && !Array.isArray(value) &&
          Object.keys(value).length === 0
        if (required.includes(key) || !empty) out[key] = value
      }
      return out
    }
    case "array": {
      const min = schema["minItems"] ?? 0
      const items = schema["items"] === undefined ? [] : [exampleOf(schema["items"], components, name, depth + 1)]
      return depth > 6 && min === 0 ? [] : items
    }
    case "string":
      if (schema["format"] === "uuid") return uuid
      if (schema["format"] === "date-time" || /At$/.test(name ?? "")) return timestamp
      if (name !== undefined && /Id$/.test(name)) return uuid
      for (const [suffix, value] of bySuffix) if (suffix.test(name ?? "") && fits(schema, value)) return value
      return "text".padEnd(schema["minLength"] ?? 0, "x").slice(0, schema["maxLength"] ?? 4)
    case "integer":
    case "number":
      // 1 unless the bounds exclude it (Effect bounds every integer to the safe range).
      return fits(schema, 1) ? 1 : schema["minimum"] ?? schema["maximum"]
    case "boolean":
      return true
    case "null":
      return null
    default:
      return {}
  }
}

const withExample = (media: Json | undefined, components: Json) => {
  if (media?.["schema"] === undefined || media["example"] !== undefined || media["examples"] !== undefined) return
  media["example"] = exampleOf(media["schema"], components)
}

/** Merges `Name_1` into `Name` when both hold the same schema, and points every reference at `Name`. */
const mergeDuplicateComponents = (spec: Json): Json => {
  const schemas: Json = spec["components"]?.["schemas"] ?? {}
  const renames = new Map<string, string>()
  for (const key of Object.keys(schemas)) {
    const base = key.replace(/_\d+$/, "")
    if (base !== key && schemas[base] !== undefined && JSON.stringify(schemas[base]) === JSON.stringify(schemas[key])) {
      renames.set(`#/components/schemas/${key}`, `#/components/schemas/${base}`)
      delete schemas[key]
    }
  }
  if (renames.size === 0) return spec
  return JSON.parse(
    JSON.stringify(spec),
    (key, value) => key === "$ref" && renames.has(value) ? renames.get(value) : value
  )
}

export const withDocumentation = (input: Json): Json => {
  const spec = mergeDuplicateComponents(input)
  spec["info"] = { ...spec["info"], contact: { name: "Feedback platform maintainers" } }
  spec["components"] ??= {}
  spec["components"]["headers"] = { ...spec["components"]["headers"], ...headers }
  const schemas: Json = spec["components"]["schemas"] ??= {}
  for (const [name, schema] of Object.entries(middlewareErrors)) schemas[name] ??= schema

  const created = new Map(createdResources.map((entry) => [entry.create, entry]))
  for (const [path, item] of Object.entries<Json>(spec["paths"] ?? {})) {
    for (const method of methods) {
      const operation: Json | undefined = item[method]
      if (operation === undefined) continue
      const create = created.get(`${method.toUpperCase()} ${path}`)
      const limited = (operation["security"] ?? []).length > 0
      const responses: Json = operation["responses"] ??= {}
      if (operation["requestBody"] !== undefined) {
        responses["413"] ??= errorResponse("413", "PayloadTooLargeError")
        responses["415"] ??= errorResponse("415", "UnsupportedMediaTypeError")
      }
      responses["500"] ??= errorResponse("500", "InternalError")
      responses["503"] ??= errorResponse("503", "StoreUnavailableError")
      for (const [status, response] of Object.entries<Json>(responses)) {
        const text = statusText[status]
        // Effect describes a response by its schema's name; say when it happens instead.
        if (text !== undefined && (status.startsWith("2") || !String(response["description"]).includes(" "))) {
          response["description"] = status.startsWith("2") ? `${text}${describedBody(response)}` : text
        }
        response["headers"] = {
          ...response["headers"],
          "X-Request-Id": ref("X-Request-Id"),
          ...(limited ? Object.fromEntries(rateLimited.map((name) => [name, ref(name)])) : {}),
          ...(limited && status === "429" ? { "Retry-After": ref("Retry-After") } : {}),
          ...(status === "401" ? { "WWW-Authenticate": ref("WWW-Authenticate") } : {}),
          ...(create !== undefined && status.startsWith("2") ? { "Location": ref("Location") } : {})
        }
        if (create?.read !== undefined && status.startsWith("2")) {
          response["links"] = {
            read: {
              operationId: create.read.operationId,
              parameters: { id: create.read.id },
              description: "Reads what this request created."
            }
          }
        }
        for (const media of Object.values<Json>(response["content"] ?? {})) withExample(media, schemas)
        const shared = limited && !status.startsWith("2") ? bodyComponent(response) : undefined
        if (shared !== undefined) {
          // An error answered alike by many operations is one `components.responses` entry they refer to.
          spec["components"]["responses"] ??= {}
          spec["components"]["responses"][shared] ??= response
          responses[status] = { $ref: `#/components/responses/${shared}` }
        }
      }
      const written = requestExamples[`${method.toUpperCase()} ${path}`]
      const json: Json | undefined = operation["requestBody"]?.["content"]?.["application/json"]
      if (written !== undefined && json !== undefined) json["example"] = written
      for (const media of Object.values<Json>(operation["requestBody"]?.["content"] ?? {})) withExample(media, schemas)
      for (const parameter of operation["parameters"] ?? []) {
        if (parameter["in"] === "query" && parameter["schema"]?.["type"] === "array") {
          parameter["style"] = "form"
          parameter["explode"] = false
        }
      }
    }
  }
  return spec
}

/** The component a response's body refers to, when it is exactly one. */
const bodyComponent = (response: Json): string | undefined => {
  const schema = response["content"]?.["application/json"]?.["schema"]
  return typeof schema?.["$ref"] === "string" ? schema["$ref"].replace("#/components/schemas/", "") : undefined
}

const describedBody = (response: Json): string => {
  const name = bodyComponent(response)
  return name === undefined ? "" : ` The body is a \`${name}\`.`
}
