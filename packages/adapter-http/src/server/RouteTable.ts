/**
 * The served routes as (method, path pattern) pairs, read from the API contracts. Used to tell a wrong method
 * (405 with `Allow`) from an unknown path (404).
 */
import { HttpApi } from "effect/http-api"

export interface RouteTable {
  readonly methodsFor: (path: string) => ReadonlyArray<string>
}

const toRegExp = (pattern: string) =>
  new RegExp("^" + pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+") + "/?$")

export const routeTableOf = (apis: ReadonlyArray<unknown>, extra: ReadonlyArray<readonly [string, string]> = []): RouteTable => {
  const routes: Array<{ method: string; re: RegExp }> = extra.map(([method, path]) => ({ method, re: toRegExp(path) }))
  for (const api of apis) {
    HttpApi.reflect(api as HttpApi.Top, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        routes.push({ method: endpoint.method, re: toRegExp(endpoint.path) })
      }
    })
  }
  return {
    methodsFor: (path) => [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))]
  }
}
