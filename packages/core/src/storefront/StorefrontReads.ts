/**
 * The storefront's reads (docs/DECISIONS.md §55): a product's published reviews and questions, and the ratings of up to
 * 100 products, for the publishable key's organization only. They run over the admin read side of every store (the
 * same keyset pages, filters and sealed cursors), with the published filter fixed here, and answer the storefront
 * shapes, which have no personal field at all.
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import type { Product } from "../catalog/Catalog.ts"
import { CatalogRepository } from "../catalog/CatalogRepository.ts"
import { productListEndpoint, siteListEndpoint } from "../catalog/CatalogLists.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { InvalidRequest, NotFound } from "../kernel/Errors.ts"
import { isUuid, type OrganizationId, type ProductId } from "../kernel/Ids.ts"
import { parseListRequest } from "../kernel/ListQuery.ts"
import { ProductQuestionRepository } from "../questions/ProductQuestionRepository.ts"
import { ReviewRepository } from "../reviews/ReviewRepository.ts"
import {
  type ProductRatingList,
  type StorefrontQuestionPage,
  storefrontLimits,
  type StorefrontReviewPage,
  type StorefrontReviewSort
} from "./Storefront.ts"
import { CurrentStorefrontCaller } from "./StorefrontCaller.ts"
import {
  isAllowedOrigin,
  parseProductRefs,
  storefrontTag,
  publishedQuestionsFilter,
  publishedReviewsFilter,
  storefrontQuestionListEndpoint,
  storefrontReviewListEndpoint,
  toProductRating,
  toStorefrontQuestion,
  toStorefrontReview
} from "./StorefrontRules.ts"

export interface StorefrontReviewParams {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
  readonly sort?: StorefrontReviewSort | undefined
  /** Only reviews of this many stars (1..5). */
  readonly rating?: number | undefined
}

export interface StorefrontQuestionParams {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** A read's answer and the content version its first statement read: the answer's tag is of that version. */
export interface Tagged<A> {
  readonly value: A
  readonly storefrontVersion: string
}

type Route = "productReviews" | "ratings" | "productQuestions"

/** Most sites an organization's CORS check reads (one page of the admin list). */
const MAX_SITES_FOR_CORS = 250

export class StorefrontReads extends Context.Service<StorefrontReads, {
  /** `GET /storefront/products/{productIdOrSlug}/reviews`: published reviews, a page at a time. */
  readonly productReviews: (
    productIdOrSlug: string,
    params: StorefrontReviewParams
  ) => Effect.Effect<StorefrontReviewPage, InvalidRequest | NotFound, CurrentStorefrontCaller>
  /** `GET /storefront/ratings?products=…`: the published ratings of the products found, in the order asked. */
  readonly ratings: (products: string) => Effect.Effect<ProductRatingList, InvalidRequest, CurrentStorefrontCaller>
  /** `GET /storefront/products/{productIdOrSlug}/questions`: published questions with their published answers. */
  readonly productQuestions: (
    productIdOrSlug: string,
    params: StorefrontQuestionParams
  ) => Effect.Effect<StorefrontQuestionPage, InvalidRequest | NotFound, CurrentStorefrontCaller>
  /**
   * The tag of a read's answer (`route` and its request's parameters) for the caller's organization, from its content
   * version alone (docs/DECISIONS.md §70): taken before the read, so an answer never carries a newer tag than its body.
   */
  readonly contentTag: (
    route: "productReviews" | "ratings" | "productQuestions",
    params: ReadonlyArray<string | number | undefined>
  ) => Effect.Effect<string, never, CurrentStorefrontCaller>
  /** Whether a browser page of `origin` may read the organization's storefront answers (CORS). */
  readonly allowsOrigin: (organizationId: OrganizationId, origin: string) => Effect.Effect<boolean>
  /**
   * The reads with their tag taken from their own first statement (docs/DECISIONS.md §78), when the store reads the
   * content version with it (`CatalogRepository.withStorefrontVersion`) and the caller has none: nothing needs to be
   * read before them, so their spend can run alongside. Undefined for a store that cannot.
   */
  readonly tagged?: {
    readonly productReviews: (
      productIdOrSlug: string,
      params: StorefrontReviewParams
    ) => Effect.Effect<Tagged<StorefrontReviewPage>, InvalidRequest | NotFound, CurrentStorefrontCaller>
    readonly ratings: (
      products: string
    ) => Effect.Effect<Tagged<ProductRatingList>, InvalidRequest, CurrentStorefrontCaller>
    readonly productQuestions: (
      productIdOrSlug: string,
      params: StorefrontQuestionParams
    ) => Effect.Effect<Tagged<StorefrontQuestionPage>, InvalidRequest | NotFound, CurrentStorefrontCaller>
  }
}>()("feedback/StorefrontReads") {
  static readonly layer = Layer.effect(
    StorefrontReads,
    Effect.gen(function*() {
      const catalog = yield* CatalogRepository
      const reviews = yield* ReviewRepository
      const questions = yield* ProductQuestionRepository
      const key = yield* CursorKey

      const checkLimit = (limit: number | undefined) =>
        limit === undefined || (Number.isInteger(limit) && limit >= 1 && limit <= storefrontLimits.maxLimit)
          ? Effect.succeed(limit ?? storefrontLimits.defaultLimit)
          : Effect.fail(
            InvalidRequest.single("query.limit", `must be a whole number from 1 to ${storefrontLimits.maxLimit}`)
          )

      const versioned = catalog.withStorefrontVersion
      /**
       * Where a read's first statement puts the content version it read with (`versioned` reads only): the first one
       * only, whose snapshot is the oldest of the read's, so the tag is never newer than the body.
       */
      interface VersionCell {
        version: string | undefined
      }
      const keepFirst = <A>(cell: VersionCell | undefined, read: Effect.Effect<Tagged<A>>) =>
        Effect.map(read, ({ storefrontVersion, value }) => {
          if (cell !== undefined) cell.version ??= storefrontVersion
          return value
        })

      const productsWhere = (organizationId: OrganizationId, filter: object, limit: number, cell?: VersionCell) =>
        Effect.flatMap(
          Effect.fromResult(
            parseListRequest({ filter: JSON.stringify(filter), limit }, productListEndpoint, { key, organizationId })
          ),
          (request) =>
            cell === undefined || versioned === undefined
              ? catalog.listProducts(organizationId, request)
              : keepFirst(cell, versioned.listProducts(organizationId, request))
        )

      /** An id names the product first; a slug otherwise. Another organization's product is not found. */
      const findProduct = Effect.fnUntraced(function*(organizationId: OrganizationId, ref: string, cell?: VersionCell) {
        if (isUuid(ref)) {
          const id = ref.toLowerCase() as ProductId
          const byId = cell === undefined || versioned === undefined
            ? yield* catalog.findProduct(organizationId, id)
            : yield* keepFirst(cell, versioned.findProduct(organizationId, id))
          if (Option.isSome(byId)) return byId.value
        }
        const bySlug = yield* productsWhere(organizationId, { slug: ref }, 1, cell)
        const found = bySlug.data[0]
        return found === undefined ? yield* NotFound.of("product", ref) : found
      })

      const productReviewsIn = Effect.fnUntraced(
        function*(productIdOrSlug: string, params: StorefrontReviewParams, cell?: VersionCell) {
          const { organization } = yield* CurrentStorefrontCaller
          const limit = yield* checkLimit(params.limit)
          if (
            params.rating !== undefined &&
            !(Number.isInteger(params.rating) && params.rating >= 1 && params.rating <= 5)
          ) {
            return yield* InvalidRequest.single("query.rating", "must be a whole number from 1 to 5")
          }
          const product = yield* findProduct(organization.id, productIdOrSlug, cell)
          const request = yield* Effect.fromResult(parseListRequest(
            {
              limit,
              cursor: params.cursor,
              sort: params.sort,
              filter: publishedReviewsFilter(product.id, params.rating),
              include: storefrontReviewListEndpoint.includes
            },
            storefrontReviewListEndpoint,
            { key, organizationId: organization.id }
          ))
          const page = yield* reviews.list(organization.id, request)
          return { data: page.data.map(toStorefrontReview), nextCursor: page.nextCursor }
        }
      )

      const ratingsIn = Effect.fnUntraced(function*(products: string, cell?: VersionCell) {
        const { organization } = yield* CurrentStorefrontCaller
        const refs = yield* Effect.fromResult(parseProductRefs(products))
        const ids = refs.filter(isUuid).map((s) => s.toLowerCase())
        const filter = ids.length === 0
          ? { slug: { $in: refs } }
          : { $or: [{ id: { $in: ids } }, { slug: { $in: refs } }] }
        const found = yield* productsWhere(organization.id, filter, 250, cell)
        const byId = new Map<string, Product>()
        const bySlug = new Map<string, Product>()
        for (const p of found.data) {
          byId.set(p.id, p)
          bySlug.set(p.slug, p)
        }
        const seen = new Set<string>()
        const data = []
        for (const ref of refs) {
          const product = (isUuid(ref) ? byId.get(ref.toLowerCase()) : undefined) ?? bySlug.get(ref)
          if (product === undefined || seen.has(product.id)) continue
          seen.add(product.id)
          data.push(toProductRating(product))
        }
        return { data }
      })

      const productQuestionsIn = Effect.fnUntraced(
        function*(productIdOrSlug: string, params: StorefrontQuestionParams, cell?: VersionCell) {
          const { organization } = yield* CurrentStorefrontCaller
          const limit = yield* checkLimit(params.limit)
          const product = yield* findProduct(organization.id, productIdOrSlug, cell)
          const request = yield* Effect.fromResult(parseListRequest(
            {
              limit,
              cursor: params.cursor,
              filter: publishedQuestionsFilter(product.id)
            },
            storefrontQuestionListEndpoint,
            { key, organizationId: organization.id }
          ))
          const page = yield* questions.list(organization.id, request, undefined)
          const answers = page.data.length === 0
            ? []
            : yield* questions.answersOf(organization.id, page.data.map((q) => q.id))
          return { data: page.data.map((q) => toStorefrontQuestion(q, answers)), nextCursor: page.nextCursor }
        }
      )

      const allowsOrigin = (organizationId: OrganizationId, origin: string) =>
        Effect.gen(function*() {
          const request = Result.getOrThrow(
            parseListRequest({ limit: MAX_SITES_FOR_CORS }, siteListEndpoint, { key, organizationId })
          )
          const sites = yield* catalog.listSites(organizationId, request)
          return isAllowedOrigin(origin, sites.data.map((s) => s.domain))
        })

      const contentTag = (
        route: "productReviews" | "ratings" | "productQuestions",
        params: ReadonlyArray<string | number | undefined>
      ) =>
        Effect.flatMap(CurrentStorefrontCaller, ({ organization, storefrontVersion }) =>
          storefrontVersion !== undefined
            ? Effect.succeed(storefrontTag(organization.id, storefrontVersion, route, params))
            : Effect.map(
              catalog.storefrontVersion(organization.id),
              (version) => storefrontTag(organization.id, version, route, params)
            ))

      const productReviews = Effect.fn("StorefrontReads.productReviews")(
        (productIdOrSlug: string, params: StorefrontReviewParams) => productReviewsIn(productIdOrSlug, params)
      )
      const ratings = Effect.fn("StorefrontReads.ratings")((products: string) => ratingsIn(products))
      const productQuestions = Effect.fn("StorefrontReads.productQuestions")(
        (productIdOrSlug: string, params: StorefrontQuestionParams) => productQuestionsIn(productIdOrSlug, params)
      )

      /** `read` with the version its first statement read; a read that read none (a validation failure) fails first. */
      const taggedBy = <A, E, R>(route: Route, read: (cell: VersionCell) => Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          const cell: VersionCell = { version: undefined }
          return Effect.flatMap(read(cell), (value) =>
            cell.version === undefined
              ? Effect.die(new Error(`the storefront read ${route} read no content version`))
              : Effect.succeed({ value, storefrontVersion: cell.version }))
        })
      const tagged = versioned === undefined ? undefined : {
        productReviews: Effect.fn("StorefrontReads.productReviews")(
          (productIdOrSlug: string, params: StorefrontReviewParams) =>
            taggedBy("productReviews", (cell) => productReviewsIn(productIdOrSlug, params, cell))
        ),
        ratings: Effect.fn("StorefrontReads.ratings")((products: string) =>
          taggedBy("ratings", (cell) => ratingsIn(products, cell))
        ),
        productQuestions: Effect.fn("StorefrontReads.productQuestions")(
          (productIdOrSlug: string, params: StorefrontQuestionParams) =>
            taggedBy("productQuestions", (cell) => productQuestionsIn(productIdOrSlug, params, cell))
        )
      }

      return StorefrontReads.of({
        productReviews,
        ratings,
        productQuestions,
        contentTag,
        allowsOrigin,
        ...(tagged === undefined ? {} : { tagged })
      })
    })
  )
}
