/**
 * Extensions the OpenAPI document carries for every operation, computed from the same data the server enforces:
 * `x-rate-limit-cost` from the core's cost table.
 */
import { RateLimits } from "@feedback/core"

const methods = ["get", "put", "post", "patch", "delete"] as const

export const withRateLimitCosts = (spec: Record<string, any>): Record<string, any> => {
  const paths: Record<string, Record<string, any>> = spec["paths"] ?? {}
  for (const [path, item] of Object.entries(paths)) {
    for (const method of methods) {
      const operation = item[method]
      if (operation === undefined || (operation.security ?? []).length === 0) continue
      operation["x-rate-limit-cost"] = RateLimits.costOf(method, path)
    }
  }
  return spec
}
