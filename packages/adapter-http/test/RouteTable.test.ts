/**
 * The route table matches paths by segments; it must answer exactly as matching every route's regular expression
 * did (the reference below, the former implementation), for the served routes and any path.
 */
import { AdminApi, OperatorApi } from "@feedback/client/effect"
import { HttpApi } from "effect/http-api"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { routeTableOf } from "../src/server/RouteTable.ts"

const extra = [["GET", "/docs"], ["GET", "/openapi.json"], ["GET", "/metrics"]] as const

/** The reference: one regular expression per route, fewer parameters first, statics by exact path. */
const referenceOf = () => {
  const toRegExp = (pattern: string) =>
    new RegExp("^" + pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+") + "/?$")
  const routes: Array<{ method: string; pattern: string; re: RegExp }> = extra.map(([method, path]) => ({
    method,
    pattern: path,
    re: toRegExp(path)
  }))
  for (const api of [AdminApi, OperatorApi]) {
    HttpApi.reflect(api as unknown as HttpApi.Top, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        routes.push({ method: endpoint.method, pattern: endpoint.path, re: toRegExp(endpoint.path) })
      }
    })
  }
  const params = (pattern: string) => pattern.split("/:").length
  const ordered = [...routes].sort((a, b) => params(a.pattern) - params(b.pattern))
  const statics = new Map<string, string>()
  for (const r of ordered) if (!r.pattern.includes("/:")) statics.set(`${r.method} ${r.pattern}`, r.pattern)
  const trimmed = (path: string) => path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  return {
    patterns: routes.map((r) => r.pattern),
    methodsFor: (path: string) => [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))],
    routeOf: (method: string, path: string) => {
      const exact = statics.get(`${method} ${trimmed(path)}`)
      if (exact !== undefined) return exact
      let other: string | undefined
      for (const r of ordered) {
        if (!r.re.test(path)) continue
        if (r.method === method) return r.pattern
        other ??= r.pattern
      }
      return other
    }
  }
}

describe("route table", () => {
  const table = routeTableOf([AdminApi, OperatorApi], extra)
  const reference = referenceOf()
  const segment = fc.oneof(
    fc.constantFrom("", "x", "import", "0190a0b0-0000-7000-8000-000000000000", "%zz", "a.b", "deliveries", "answers"),
    fc.string({ maxLength: 6 }).map((s) => s.replace(/[/?#]/g, ""))
  )
  // Mostly served patterns with their parameters (and sometimes a static part) replaced, plus arbitrary paths.
  const fromPattern = fc.tuple(
    fc.constantFrom(...reference.patterns),
    fc.array(segment, { minLength: 8, maxLength: 8 }),
    fc.boolean(),
    fc.nat(3)
  )
    .map(([pattern, fill, slash, cut]) => {
      const parts = pattern.split("/").map((p, i) => (p.startsWith(":") || (cut === 1 && i === 1) ? fill[i]! : p))
      const path = (cut === 2 ? parts.slice(0, -1) : cut === 3 ? [...parts, fill[7]!] : parts).join("/") || "/"
      return slash ? `${path}/` : path
    })
  const anyPath = fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join("/")}`)
  const method = fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT", "HEAD")

  it("answers routeOf and methodsFor exactly as the regular expressions did", () => {
    fc.assert(
      fc.property(method, fc.oneof(fromPattern, anyPath), (m, path) => {
        expect(table.routeOf(m, path)).toBe(reference.routeOf(m, path))
        expect([...table.methodsFor(path)].sort()).toEqual([...reference.methodsFor(path)].sort())
      }),
      { numRuns: 20_000 }
    )
  })
})
