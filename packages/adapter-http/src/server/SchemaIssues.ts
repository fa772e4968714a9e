/** Turns a Schema decoding failure into the `[{path, message}]` issues of an INVALID_REQUEST answer. */
import { InvalidRequest, type RequestIssue } from "@feedback/core"
import { type Schema, SchemaIssue } from "effect"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const renderPath = (root: string, path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string => {
  let out = root
  for (const segment of path) {
    const key = typeof segment === "object" && segment !== null && "key" in segment ? segment.key : segment
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

const lowerFirst = (s: string) => s.length === 0 ? s : s[0]!.toLowerCase() + s.slice(1)

/** `root` names the part of the request: `body`, `query` or `path`. */
export const issuesOf = (root: string, error: Schema.SchemaError): ReadonlyArray<RequestIssue> => {
  const result = formatter(error.issue)
  return result.issues.map((i) => ({
    path: renderPath(root, i.path ?? []),
    message: i.message === "Unexpected key" ? "unknown field; check its spelling against the API reference" : lowerFirst(i.message)
  }))
}

export const invalidRequestOf = (root: string, error: Schema.SchemaError): InvalidRequest => {
  const issues = issuesOf(root, error)
  const first = issues[0]
  const message = first === undefined
    ? `The request ${root} is invalid.`
    : `Invalid ${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""})` : ""}.`
  return new InvalidRequest({ message, issues })
}
