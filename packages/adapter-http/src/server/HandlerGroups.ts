/**
 * A handler group built over only the services it names. `HttpApiBuilder.group` keeps the whole context its layer is
 * built in and merges all of it into every request's context (a copy of every service of the application, ~100 map
 * writes, on every request: the largest single cost of a cheap request beyond the framework's floor,
 * docs/DECISIONS.md §42). A group's handlers capture their capability's service when the group is built, so that
 * service and the API's middleware are all the group needs; the type says so: a group whose build or handlers need
 * any service not named here does not compile. References (which need no provision) are read from the request's own
 * context, as before: nothing on the request path reads one that only a handler group's context held.
 */
import { Context, Effect, Layer, Scope } from "effect"
import { OperatorAuth, RequestValidation, SecretKeyAuth, StorefrontAuth } from "@feedback/client/effect"

/** The middleware `HttpApiBuilder` looks up in a group's context when it builds the group's routes. */
const middleware = [SecretKeyAuth, StorefrontAuth, OperatorAuth, RequestValidation] as const
type Middleware = Context.Service.Identifier<typeof middleware[number]>

export const capturingOnly =
  <const Keys extends ReadonlyArray<Context.Key<any, any>>>(...services: Keys) =>
  <A, E, R extends Context.Service.Identifier<Keys[number]> | Middleware>(
    group: Layer.Layer<A, E, R>
  ): Layer.Layer<A, E, R> =>
    Layer.effectContext(Effect.gen(function*() {
      const scope = yield* Scope.Scope
      return yield* Layer.buildWithScope(group, scope).pipe(
        Effect.updateContext((context: Context.Context<R>) => {
          const kept = new Map<string, unknown>()
          for (const key of [...services, ...middleware]) {
            const value = context.mapUnsafe.get(key.key)
            if (value !== undefined) kept.set(key.key, value)
          }
          return Context.makeUnsafe(kept) as Context.Context<R>
        })
      )
    }))
