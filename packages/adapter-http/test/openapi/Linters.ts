/**
 * The two OpenAPI linters CI runs over the served document, as functions returning their findings: Redocly's
 * `recommended` ruleset (errors count) and Spectral's `spectral:oas` (warnings and errors count). Both run offline:
 * their rulesets ship inside the packages and the document has no external `$ref`.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

export interface Finding {
  readonly rule: string
  readonly at: string
  readonly message: string
}

/** Redocly `recommended`: the problems of severity `error`. */
export const redoclyErrors = async (document: object): Promise<ReadonlyArray<Finding>> => {
  const config = await createConfig({ extends: ["recommended"] })
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: "openapi.json",
    config
  })
  return problems
    .filter((problem) => problem.severity === "error")
    .map((problem) => ({
      rule: problem.ruleId,
      at: problem.location[0]?.pointer ?? "",
      message: problem.message
    }))
}

const spectralScript = fileURLToPath(new URL("./spectral-lint.cjs", import.meta.url))

/** Spectral `spectral:oas`: every finding of severity warning or error (0 is error, 1 warning). */
export const spectralWarnings = (document: object): Promise<ReadonlyArray<Finding>> =>
  new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [spectralScript], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error !== null) return reject(error)
      const results = JSON.parse(stdout) as ReadonlyArray<Finding & { readonly severity: number }>
      resolve(results.filter((r) => r.severity <= 1).map(({ at, message, rule }) => ({ rule, at, message })))
    })
    child.stdin!.end(JSON.stringify(document, null, 2))
  })
