/**
 * The HTTP surface as data, read from the HttpApi definitions at runtime (`HttpApi.reflect`): each endpoint's
 * method, path template, the schemas of its path parameters, query and JSON body, the permission it declares and
 * how it authenticates. The fuzzer covers exactly this list, so an endpoint added to `AdminApi` or `OperatorApi`
 * is fuzzed without touching the harness.
 */
import { Arbitrary, Context, Effect, Option, Schema } from "effect"
import { HttpApi } from "effect/http-api"
import {
  AdminApi,
  OperatorApi,
  OperatorAuth,
  PermissionByInput,
  RequiredPermission,
  SecretKeyAuth,
  StorefrontAuth
} from "@feedback/client/effect"

export type Auth = "secretKey" | "publishableKey" | "operator" | "none"

export interface EndpointShape {
  /** `group.endpoint`, for reports. */
  readonly name: string
  readonly method: string
  /** The template with its prefix, e.g. `/operator/organizations/:id/keys/:keyId`. */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly params: Schema.Top | undefined
  readonly query: Schema.Top | undefined
  /** The schema of the `application/json` body, when the endpoint takes one. */
  readonly payload: Schema.Top | undefined
  readonly permission: string | undefined
  readonly auth: Auth
}

const authOf = (middleware: ReadonlySet<unknown>): Auth =>
  middleware.has(SecretKeyAuth)
    ? "secretKey"
    : middleware.has(StorefrontAuth)
    ? "publishableKey"
    : middleware.has(OperatorAuth)
    ? "operator"
    : "none"

export const endpointsOf = (api: HttpApi.Top): ReadonlyArray<EndpointShape> => {
  const out: Array<EndpointShape> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      out.push({
        name: `${group.identifier}.${endpoint.identifier}`,
        method: endpoint.method,
        path: endpoint.path,
        pathParams: [...endpoint.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!),
        params: endpoint.params,
        query: endpoint.query,
        payload: endpoint.payload.get("application/json")?.schemas[0],
        // An endpoint whose permission depends on its input (import jobs) declares which in words.
        permission: Option.getOrUndefined(Option.orElse(
          Context.getOption(mergedAnnotations, RequiredPermission),
          () => Context.getOption(mergedAnnotations, PermissionByInput)
        )),
        auth: authOf(middleware)
      })
    }
  })
  return out
}

/** Every endpoint the server routes when an operator token is configured. */
export const allEndpoints = (): ReadonlyArray<EndpointShape> => [
  ...endpointsOf(AdminApi as unknown as HttpApi.Top),
  ...endpointsOf(OperatorApi as unknown as HttpApi.Top)
]

/**
 * Wire-side samples of a schema (what a client sends, before decoding), from Effect's Schema-derived arbitraries.
 * Two sizes so both small and well-filled records occur; the seed makes the samples reproducible.
 */
export const samplesOf = (schema: Schema.Top, seed: number, count = 24): ReadonlyArray<unknown> => {
  const arbitrary = Arbitrary.schema(Schema.toEncoded(schema))
  return [5, 25].flatMap((size, i) =>
    Effect.runSync(Arbitrary.sampleEffect(arbitrary, { count: count / 2, size, seed: seed + i }))
  )
}

/** The literal segment a path parameter follows: the collection its id belongs to (`/keys/:keyId` → `keys`). */
export const collectionOf = (path: string, param: string): string => {
  const segments = path.split("/")
  const at = segments.indexOf(`:${param}`)
  if (at <= 0) return param
  // A token names its record by another value than its id: a pool of its own (`surveys` holds the ids).
  return param === "token" ? `${segments[at - 1]} tokens` : segments[at - 1]!
}

/** The collection a response to `path` describes: the last literal segment (`/products/:id` → `products`). */
export const responseCollectionOf = (path: string): string =>
  path.split("/").filter((s) => s !== "" && !s.startsWith(":")).at(-1) ?? ""
