/**
 * Lookups the storefront's submissions share: the first record a list filter finds, and the product a shopper names
 * by exactly one of `productId` and `productSlug` (a 400 naming the field otherwise; docs/DECISIONS.md §55).
 */
import { Effect, Option } from "effect"
import type { CatalogRepository } from "../catalog/CatalogRepository.ts"
import { productListEndpoint } from "../catalog/CatalogLists.ts"
import type { CursorKey } from "../kernel/CursorKey.ts"
import { InvalidRequest } from "../kernel/Errors.ts"
import type { OrganizationId, ProductId } from "../kernel/Ids.ts"
import { type ListEndpoint, type ListRequest, type Page, parseListRequest } from "../kernel/ListQuery.ts"

export interface ProductRef {
  readonly productId?: ProductId | undefined
  readonly productSlug?: string | undefined
}

export const makeShopperLookups = (catalog: CatalogRepository["Service"], key: CursorKey["Service"]) => {
  /** The first record a list finds with `filter`; a filter the list refuses is a 400 naming `path`. */
  const firstWhere = <A>(
    organizationId: OrganizationId,
    endpoint: ListEndpoint,
    filter: object,
    path: string,
    list: (request: ListRequest) => Effect.Effect<Page<A>>
  ): Effect.Effect<A | undefined, InvalidRequest> =>
    Effect.flatMap(
      Effect.fromResult(
        parseListRequest({ filter: JSON.stringify(filter), limit: 1 }, endpoint, { key, organizationId })
      ).pipe(
        Effect.mapError((e) => InvalidRequest.single(path, e.issues[0]?.message ?? e.message))
      ),
      (request) => Effect.map(list(request), (page) => page.data[0])
    )

  /** The product named by exactly one of id and slug, in the caller's organization. */
  const productOf = (organizationId: OrganizationId, input: ProductRef): Effect.Effect<ProductId, InvalidRequest> =>
    Effect.gen(function*() {
      if ((input.productId === undefined) === (input.productSlug === undefined)) {
        return yield* InvalidRequest.single("body.productId", "give exactly one of productId and productSlug")
      }
      if (input.productId !== undefined) {
        const found = yield* catalog.findProduct(organizationId, input.productId)
        if (Option.isNone(found)) {
          return yield* InvalidRequest.single("body.productId", "no product with this id exists")
        }
        return found.value.id
      }
      const bySlug = yield* firstWhere(
        organizationId,
        productListEndpoint,
        { slug: input.productSlug },
        "body.productSlug",
        (r) => catalog.listProducts(organizationId, r)
      )
      if (bySlug === undefined) {
        return yield* InvalidRequest.single("body.productSlug", "no product with this slug exists")
      }
      return bySlug.id as ProductId
    })

  return { firstWhere, productOf }
}
