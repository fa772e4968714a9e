/**
 * Checks an HTTP answer against the OpenAPI document that promised it: the status is one the operation lists, the
 * body validates against the JSON Schema (2020-12, Ajv) documented for that status, and every header the document
 * marks required is present. Generic over the document, so a new operation needs only a call, no new checks.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"

type Json = Record<string, any>

export interface DocumentedOperation {
  /** `METHOD /path/{param}`, as the document spells the path. */
  readonly key: string
  readonly operation: Json
}

const methods = ["get", "put", "post", "patch", "delete"] as const

/** Every operation of the document's `paths`. */
export const operationsOf = (document: Json): ReadonlyArray<DocumentedOperation> =>
  Object.entries<Json>(document["paths"] ?? {}).flatMap(([path, item]) =>
    methods.filter((method) => item[method] !== undefined).map((method) => ({
      key: `${method.toUpperCase()} ${path}`,
      operation: item[method]
    }))
  )

const base = "https://feedback.invalid/openapi.json"

/** Makes the document's local `$ref`s absolute, so Ajv resolves them against the document registered under `base`. */
const absolute = (value: unknown): any =>
  JSON.parse(
    JSON.stringify(value),
    (key, v) => key === "$ref" && typeof v === "string" && v.startsWith("#") ? base + v : v
  )

export const makeConformance = (document: Json) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  ;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
  ajv.addSchema({ $id: base, components: absolute(document["components"] ?? {}) })
  // Many bodies share a schema (a `$ref` to one component): compile each distinct schema once.
  const compiled = new Map<string, ReturnType<Ajv2020["compile"]>>()
  const validatorOf = (schema: Json) => {
    const text = JSON.stringify(schema)
    let validate = compiled.get(text)
    if (validate === undefined) {
      validate = ajv.compile(absolute(schema))
      compiled.set(text, validate)
    }
    return validate
  }
  const byKey = new Map(operationsOf(document).map((op) => [op.key, op.operation]))
  const resolve = (value: Json): Json =>
    typeof value["$ref"] === "string"
      ? resolve(String(value["$ref"]).slice(2).split("/").reduce<Json>((at, part) => at[part], document))
      : value

  /** The problems of one answer to the operation `key`; none when the document describes it truthfully. */
  const problemsOf = (
    key: string,
    answer: { readonly status: number; readonly headers: Headers; readonly body: unknown }
  ): ReadonlyArray<string> => {
    const operation = byKey.get(key)
    if (operation === undefined) return [`${key} is not in the document`]
    const responses: Json = operation["responses"] ?? {}
    const listed = responses[String(answer.status)] ?? responses[`${String(answer.status)[0]}XX`] ??
      responses["default"]
    if (listed === undefined) {
      return [
        `${key} answered ${answer.status}, which the document does not list (${Object.keys(responses).join(", ")})`
      ]
    }
    const response = resolve(listed)
    const problems: Array<string> = []
    for (const [name, header] of Object.entries<Json>(response["headers"] ?? {})) {
      if (resolve(header)["required"] === true) {
        if (!answer.headers.has(name)) problems.push(`${key} ${answer.status}: required header ${name} is missing`)
      }
    }
    const schema = response["content"]?.["application/json"]?.["schema"]
    if (schema === undefined) {
      // A file (an export's download): the answer's media type must be one the response lists, its body text.
      const mediaType = (answer.headers.get("content-type") ?? "").split(";")[0]!.trim()
      const file = mediaType !== "" && response["content"]?.[mediaType] !== undefined
      if (file && typeof answer.body !== "string") {
        problems.push(`${key} ${answer.status}: a ${mediaType} body that is not text`)
      }
      if (!file && answer.body !== undefined) {
        problems.push(`${key} ${answer.status}: a body the document does not describe`)
      }
      return problems
    }
    const validate = validatorOf(schema)
    if (!validate(answer.body)) {
      problems.push(`${key} ${answer.status}: body does not match the schema: ${ajv.errorsText(validate.errors)}`)
    }
    return problems
  }

  /** Every example in the document's bodies, checked against its own schema. */
  const exampleProblems = (): ReadonlyArray<string> => {
    const problems: Array<string> = []
    const check = (where: string, media: Json | undefined) => {
      if (media?.["schema"] === undefined || media["example"] === undefined) return
      const validate = validatorOf(media["schema"])
      if (!validate(media["example"])) problems.push(`${where}: example ${ajv.errorsText(validate.errors)}`)
    }
    for (const { key, operation } of operationsOf(document)) {
      check(`${key} request`, operation["requestBody"]?.["content"]?.["application/json"])
      for (const [status, response] of Object.entries<Json>(operation["responses"] ?? {})) {
        check(`${key} ${status}`, resolve(response)["content"]?.["application/json"])
      }
    }
    return problems
  }

  return { problemsOf, exampleProblems }
}
