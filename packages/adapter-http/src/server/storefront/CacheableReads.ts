/**
 * The cacheable storefront reads and the parameters each one's tag names, in a fixed order (docs/DECISIONS.md §70):
 * one table for the handlers that tag their answers and for the revalidation gate that answers a matching tag
 * before the HTTP stack (§71), so the two can never tag the same request differently.
 */
import type { Storefront } from "@feedback/core"

/** What a cacheable read's request decoded to, as its endpoint's schemas give it to the handler. */
export interface DecodedRead {
  readonly params?: { readonly productIdOrSlug?: string | undefined } | undefined
  readonly query: {
    readonly products?: string | undefined
    readonly limit?: number | undefined
    readonly cursor?: string | undefined
    readonly sort?: Storefront.StorefrontReviewSort | undefined
    readonly rating?: number | undefined
  }
}

export type CacheableRead = "productReviews" | "ratings" | "productQuestions"

/** Per endpoint name, its tag's parameters. */
export const tagParameters: Readonly<
  Record<CacheableRead, (read: DecodedRead) => ReadonlyArray<string | number | undefined>>
> = {
  productReviews: ({ params, query }) => [
    params?.productIdOrSlug,
    query.limit,
    query.cursor,
    query.sort,
    query.rating
  ],
  ratings: ({ query }) => [query.products],
  productQuestions: ({ params, query }) => [params?.productIdOrSlug, query.limit, query.cursor]
}

export const isCacheableRead = (name: string): name is CacheableRead => Object.hasOwn(tagParameters, name)
