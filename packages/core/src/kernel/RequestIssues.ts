/**
 * The first issues of a Schema decoding failure, without flattening all of them.
 *
 * Effect's Standard Schema formatter turns the whole issue tree into one array; for a hostile body (a hundred
 * thousand unknown keys, ten thousand bad rows) that is an array as large as the input, of which an answer shows 20
 * (`MAX_REQUEST_ISSUES`, `docs/SECURITY.md`). This walks the tree in the formatter's order, formats only the
 * issues it keeps, and counts the rest without building them. Messages are exactly the formatter's.
 */
import { type Schema, type SchemaIssue, SchemaIssue as Issues } from "effect"
import { InvalidRequest, MAX_REQUEST_ISSUES, type RequestIssue } from "./Errors.ts"

export interface FormattedIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const formatter = Issues.makeFormatterStandardSchemaV1()

const segment = (s: PropertyKey | { readonly key: PropertyKey }): PropertyKey =>
  typeof s === "object" && s !== null && "key" in s ? s.key : s

/** How many issues the formatter would list for `issue` (the same traversal, nothing allocated). */
const countOf = (issue: SchemaIssue.Issue): number => {
  switch (issue._tag) {
    case "Filter":
    case "Encoding":
    case "Pointer":
      return countOf(issue.issue)
    case "Composite":
    case "AnyOf": {
      if (issue._tag === "AnyOf" && issue.issues.length === 0) return 1
      let n = 0
      for (const inner of issue.issues) n += countOf(inner)
      return n
    }
    default:
      return 1
  }
}

/**
 * The first `max` issues of `issue` as the Standard Schema formatter renders them, and how many there are in all.
 * Descends through pointers and groups itself; a filter (whose message applies to everything under it) or a leaf
 * is handed to the formatter, which sees only that small subtree.
 */
export const firstIssues = (
  issue: SchemaIssue.Issue,
  max: number = MAX_REQUEST_ISSUES
): { readonly issues: ReadonlyArray<FormattedIssue>; readonly total: number } => {
  const issues: Array<FormattedIssue> = []
  let total = 0
  const visit = (node: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): void => {
    switch (node._tag) {
      case "Pointer":
        return visit(node.issue, [...path, ...node.path])
      case "Encoding":
        return visit(node.issue, path)
      case "Composite":
      case "AnyOf":
        if (node._tag === "Composite" || node.issues.length > 0) {
          for (const inner of node.issues) visit(inner, path)
          return
        }
    }
    if (issues.length >= max) {
      total += countOf(node)
      return
    }
    for (const formatted of formatter(node).issues) {
      total++
      if (issues.length < max) {
        issues.push({ path: [...path, ...(formatted.path ?? []).map(segment)], message: formatted.message })
      }
    }
  }
  visit(issue, [])
  return { issues, total }
}

/** A path as the API names it: `root.field[3].other` (`root` is `body`, `query`, `path`, or a use-case's own). */
const renderPath = (root: string, path: ReadonlyArray<PropertyKey>): string => {
  let out = root
  for (const key of path) {
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

const lowerFirst = (s: string) => s.length === 0 ? s : s[0]!.toLowerCase() + s.slice(1)

/** The formatter's message, as the rest of a sentence that starts with the path. */
const messageOf = (message: string): string =>
  message === "Unexpected key" ? "unknown field; check its spelling against the API reference" : lowerFirst(message)

/** The first issues of a decoding failure as `{path, message}` under `root`, and how many there are in all. */
export const requestIssuesOf = (
  root: string,
  error: Schema.SchemaError
): { readonly issues: ReadonlyArray<RequestIssue>; readonly total: number } => {
  const found = firstIssues(error.issue)
  return {
    issues: found.issues.map((i) => ({ path: renderPath(root, i.path), message: messageOf(i.message) })),
    total: found.total
  }
}

/**
 * A decoding failure as the one INVALID_REQUEST answer every part of the system gives (`InvalidRequest.of`):
 * request schemas in the HTTP adapter and input a use-case decodes itself (setup answers) alike.
 */
export const invalidRequestOfSchema = (root: string, error: Schema.SchemaError): InvalidRequest => {
  const { issues, total } = requestIssuesOf(root, error)
  return InvalidRequest.of(issues, total)
}
