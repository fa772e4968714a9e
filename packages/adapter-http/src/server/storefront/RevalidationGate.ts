/**
 * The revalidation side of the refusal gate (docs/DECISIONS.md §71): a cacheable storefront read whose
 * `If-None-Match` names its current tag is answered 304 before the HTTP stack, after the same admission as the full
 * path: the kept publishable key, one spend of its key-and-address bucket, and the content version (read in the
 * spend's statement where the store can, §70). The tag is computed from the request decoded by the router's own
 * matcher and the endpoint's own schemas and parse options, so it is the handler's tag; a request either cannot
 * decode is left to the full path, untouched. Any other outcome (a refusal, another tag) goes the full path with the
 * gate's decision and version handed over (`HandedAdmissions.ts`): a request is charged once, whoever answers it.
 */
import { Catalog, type Organizations, RateLimits, Storefront } from "@feedback/core"
import { Context, Effect, Exit, Schema } from "effect"
import { FindMyWay, HttpRouter } from "effect/http"
import { HttpApi } from "effect/http-api"
import { AdminApi, StorefrontAuth } from "@feedback/client/effect"
import { rateLimitHeaders } from "../SecretKeyAuthLive.ts"
import { type CacheableRead, type DecodedRead, isCacheableRead, tagParameters } from "./CacheableReads.ts"
import type { HandedAdmission } from "./HandedAdmissions.ts"
import { ifNoneMatchHas, STOREFRONT_CACHE_CONTROL } from "./HttpCaching.ts"
import { corsHeaders } from "./StorefrontCors.ts"

/** A cacheable read the gate can settle: known without I/O, its tag's parameters decoded. */
export interface Revalidation {
  readonly organizationId: string
  readonly bucket: RateLimits.KeyedBucket
  readonly read: CacheableRead
  readonly tagParams: ReadonlyArray<string | number | undefined>
  readonly ifNoneMatch: string
}

/** How a revalidation ended: answered 304 with these headers, or passed on to the full path (with what it spent). */
export type Settled =
  | {
    readonly _tag: "NotModified"
    readonly headers: Record<string, string>
    readonly decision: RateLimits.SpendDecision
  }
  | { readonly _tag: "Pass"; readonly admission: HandedAdmission | undefined }

interface ReadRoute {
  readonly read: CacheableRead
  readonly params: ((input: unknown) => Exit.Exit<unknown, unknown>) | undefined
  readonly query: ((input: unknown) => Exit.Exit<unknown, unknown>) | undefined
}

const POLICY = Storefront.storefrontPolicyName("read")

/**
 * The router matcher of the cacheable reads, as the API's router is built (its `RouterConfig`), each with its
 * endpoint's decoders under the contract's parse options, as `HttpApiBuilder` decodes them.
 */
const readRoutes = (config: Partial<FindMyWay.RouterConfig>): FindMyWay.Router<ReadRoute> => {
  const router = FindMyWay.make<ReadRoute>(config)
  HttpApi.reflect(AdminApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations, middleware }) => {
      const name = endpoint.identifier
      if (endpoint.method !== "GET" || !middleware.has(StorefrontAuth as never) || !isCacheableRead(name)) return
      const fallback = Context.getOrUndefined(mergedAnnotations, HttpApi.ParseOptions)
      const queryOptions = Context.getOrUndefined(mergedAnnotations, HttpApi.QueryParseOptions) ?? fallback
      const paramsOptions = Context.getOrUndefined(mergedAnnotations, HttpApi.ParamsParseOptions) ?? fallback
      router.on("GET", endpoint.path as FindMyWay.PathInput, {
        read: name,
        params: endpoint.params === undefined
          ? undefined
          : Schema.decodeUnknownExit(endpoint.params as Schema.Codec<unknown, unknown>, paramsOptions),
        query: endpoint.query === undefined ? undefined : Schema.decodeUnknownExit(
          Schema.toCodecArrayFromSingle(endpoint.query as Schema.Codec<unknown, unknown>),
          queryOptions
        )
      })
    }
  })
  return router
}

export const makeRevalidationGate = Effect.gen(function*() {
  const rateLimits = yield* RateLimits.RateLimitRepository
  const catalog = yield* Catalog.CatalogRepository
  const router = readRoutes(yield* HttpRouter.RouterConfig)
  const withVersion = rateLimits.decidesInProcess === true ? undefined : rateLimits.spendWithStorefrontVersion

  /** The revalidation of `url` (a plain path, checked by the caller) for `key` from `clientAddress`, if it is one. */
  const revalidationOf = (
    url: string,
    ifNoneMatch: string,
    key: Organizations.AuthenticatedPublishableKey,
    clientAddress: string
  ): Revalidation | undefined => {
    const found = router.find("GET", url)
    if (found === undefined) return undefined
    const { params: decodeParams, query: decodeQuery, read } = found.handler
    const params = decodeParams === undefined ? Exit.succeed(undefined) : decodeParams(found.params)
    const query = decodeQuery === undefined ? Exit.succeed({}) : decodeQuery(found.searchParams)
    if (Exit.isFailure(params) || Exit.isFailure(query)) return undefined
    return {
      organizationId: key.organization.id,
      bucket: Storefront.storefrontBucket("read", key.keyId, clientAddress, key.organization.plan),
      read,
      tagParams: tagParameters[read]({ params: params.value, query: query.value } as DecodedRead),
      ifNoneMatch
    }
  }

  /** Spends once, reads the version, compares: the 304's headers (but its request id), or what to hand on. */
  const settle = (revalidation: Revalidation): Effect.Effect<Settled> => {
    const { bucket, organizationId } = revalidation
    const spent = withVersion !== undefined
      ? withVersion(organizationId, [bucket], 1)
      : Effect.map(rateLimits.spend(organizationId, [bucket], 1), (decision) => ({
        decision,
        storefrontVersion: undefined
      }))
    return Effect.flatMap(spent, ({ decision, storefrontVersion }): Effect.Effect<Settled> => {
      const pass = (version: string | undefined): Settled => ({
        _tag: "Pass",
        admission: { bucketKey: bucket.key, decision, storefrontVersion: version }
      })
      if (decision._tag === "Refused") return Effect.succeed(pass(storefrontVersion))
      const version = storefrontVersion === undefined
        ? catalog.storefrontVersion(organizationId as never)
        : Effect.succeed(storefrontVersion)
      // A version that could not be read leaves the full path to read it, the spend handed on all the same.
      return Effect.matchCause(version, {
        onFailure: () => pass(undefined),
        onSuccess: (current): Settled => {
          const etag = Storefront.storefrontTag(organizationId, current, revalidation.read, revalidation.tagParams)
          if (!ifNoneMatchHas(revalidation.ifNoneMatch, etag, true)) return pass(current)
          return {
            _tag: "NotModified",
            decision,
            headers: {
              etag,
              "cache-control": STOREFRONT_CACHE_CONTROL,
              ...rateLimitHeaders(decision, POLICY),
              ...corsHeaders(undefined)
            }
          }
        }
      })
    })
  }

  return { revalidationOf, settle }
})
