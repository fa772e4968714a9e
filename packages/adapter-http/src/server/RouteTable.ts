/**
 * The served routes as (method, path pattern) pairs, read from the API contracts. Used to tell a wrong method
 * (405 with `Allow`) from an unknown path (404), and to name a request's route in metrics and span names
 * (`/reviews/:id`, never the concrete path, so the label set stays bounded).
 */
import { HttpApi } from "effect/http-api"

export interface RouteTable {
  readonly methodsFor: (path: string) => ReadonlyArray<string>
  /**
   * The pattern that serves `method path`, or, for a known path with another method, the path's pattern; undefined
   * for an unknown path. Static patterns win over parameterized ones, as in the router.
   */
  readonly routeOf: (method: string, path: string) => string | undefined
}

const toRegExp = (pattern: string) =>
  new RegExp("^" + pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+") + "/?$")

interface Route {
  readonly method: string
  readonly pattern: string
  readonly re: RegExp
}

export const routeTableOf = (apis: ReadonlyArray<unknown>, extra: ReadonlyArray<readonly [string, string]> = []): RouteTable => {
  const routes: Array<Route> = extra.map(([method, path]) => ({ method, pattern: path, re: toRegExp(path) }))
  for (const api of apis) {
    HttpApi.reflect(api as HttpApi.Top, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        routes.push({ method: endpoint.method, pattern: endpoint.path, re: toRegExp(endpoint.path) })
      }
    })
  }
  // Fewer parameters first: `/reviews/import` before `/reviews/:id`.
  const params = (pattern: string) => pattern.split("/:").length
  const ordered = [...routes].sort((a, b) => params(a.pattern) - params(b.pattern))
  const statics = new Map<string, string>()
  for (const r of ordered) if (!r.pattern.includes("/:")) statics.set(`${r.method} ${r.pattern}`, r.pattern)
  const trimmed = (path: string) => path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  return {
    methodsFor: (path) => [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))],
    routeOf: (method, path) => {
      const exact = statics.get(`${method} ${trimmed(path)}`)
      if (exact !== undefined) return exact
      let otherMethod: string | undefined
      for (const r of ordered) {
        if (!r.re.test(path)) continue
        if (r.method === method) return r.pattern
        otherMethod ??= r.pattern
      }
      return otherMethod
    }
  }
}
