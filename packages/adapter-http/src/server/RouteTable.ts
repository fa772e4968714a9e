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

/**
 * A pattern as segments: a string must equal the request's segment, `null` (a `:param`) takes any non-empty one. The
 * route a request took is looked up on every request (metrics labels), so matching is a comparison of the few
 * patterns with as many segments as the path, not a regular expression per route.
 */
type Segments = ReadonlyArray<string | null>

interface Route {
  readonly method: string
  readonly pattern: string
  readonly segments: Segments
}

const segmentsOf = (pattern: string): Segments => pattern.split("/").map((s) => (s.startsWith(":") ? null : s))

/** A trailing slash is the same route (`/reviews/` is `/reviews`). */
const trimmed = (path: string) => path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path

const matches = (route: Route, parts: ReadonlyArray<string>) => {
  for (let i = 0; i < parts.length; i++) {
    const want = route.segments[i]
    if (want === null ? parts[i] === "" : want !== parts[i]) return false
  }
  return true
}

export const routeTableOf = (
  apis: ReadonlyArray<unknown>,
  extra: ReadonlyArray<readonly [string, string]> = []
): RouteTable => {
  const routes: Array<Route> = extra.map(([method, path]) => ({ method, pattern: path, segments: segmentsOf(path) }))
  for (const api of apis) {
    HttpApi.reflect(api as HttpApi.Top, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        routes.push({ method: endpoint.method, pattern: endpoint.path, segments: segmentsOf(endpoint.path) })
      }
    })
  }
  // Fewer parameters first: `/reviews/import` before `/reviews/:id`; grouped by their number of segments.
  const params = (route: Route) => route.segments.filter((s) => s === null).length
  const bySize = new Map<number, Array<Route>>()
  for (const r of [...routes].sort((a, b) => params(a) - params(b))) {
    const group = bySize.get(r.segments.length)
    if (group === undefined) bySize.set(r.segments.length, [r])
    else group.push(r)
  }
  const statics = new Map<string, string>()
  for (const r of routes) {
    if (params(r) === 0 && !statics.has(`${r.method} ${r.pattern}`)) {
      statics.set(`${r.method} ${r.pattern}`, r.pattern)
    }
  }
  const candidates = (path: string) => {
    const parts = trimmed(path).split("/")
    return { parts, routes: bySize.get(parts.length) ?? [] }
  }
  return {
    methodsFor: (path) => {
      const { parts, routes: group } = candidates(path)
      return [...new Set(group.filter((r) => matches(r, parts)).map((r) => r.method))]
    },
    routeOf: (method, path) => {
      const exact = statics.get(`${method} ${trimmed(path)}`)
      if (exact !== undefined) return exact
      const { parts, routes: group } = candidates(path)
      let otherMethod: string | undefined
      for (const r of group) {
        if (!matches(r, parts)) continue
        if (r.method === method) return r.pattern
        otherMethod ??= r.pattern
      }
      return otherMethod
    }
  }
}
