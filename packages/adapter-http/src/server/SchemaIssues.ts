/**
 * Turns a Schema decoding failure into the `[{path, message}]` issues of an INVALID_REQUEST answer: at most
 * `MAX_REQUEST_ISSUES`, formatted without flattening the whole issue tree, and the message says how many more
 * there were (`docs/SECURITY.md`).
 */
import { firstIssues, InvalidRequest, type RequestIssue } from "@feedback/core"
import type { Schema } from "effect"

const renderPath = (root: string, path: ReadonlyArray<PropertyKey>): string => {
  let out = root
  for (const key of path) {
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

const lowerFirst = (s: string) => s.length === 0 ? s : s[0]!.toLowerCase() + s.slice(1)

const messageOf = (message: string): string =>
  message === "Unexpected key" ? "unknown field; check its spelling against the API reference" : lowerFirst(message)

/** `root` names the part of the request: `body`, `query` or `path`. The first issues, and how many there are. */
export const issuesOf = (
  root: string,
  error: Schema.SchemaError
): { readonly issues: ReadonlyArray<RequestIssue>; readonly total: number } => {
  const found = firstIssues(error.issue)
  return {
    issues: found.issues.map((i) => ({ path: renderPath(root, i.path), message: messageOf(i.message) })),
    total: found.total
  }
}

export const invalidRequestOf = (root: string, error: Schema.SchemaError): InvalidRequest => {
  const { issues, total } = issuesOf(root, error)
  const first = issues[0]
  if (first === undefined) return new InvalidRequest({ message: `The request ${root} is invalid.`, issues })
  const more = total - 1
  const listed = total > issues.length ? `; details list the first ${issues.length}` : ""
  const message = `Invalid ${first.path}: ${first.message}${
    more > 0 ? ` (and ${more} more issue${more > 1 ? "s" : ""}${listed})` : ""
  }.`
  return new InvalidRequest({ message, issues })
}
