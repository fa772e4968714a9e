/**
 * Reading reviews (spec: GET /reviews, GET /reviews/{id}; docs/DECISIONS.md §4) as the `Reviews` service: both require
 * `reviews:read`, check the permission before anything else, and see only the caller's organization (another
 * organization's review id is a 404 like a missing one).
 */
import { Context, Effect, Layer, Option } from "effect"
import { type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { type Forbidden, type InvalidRequest, NotFound } from "../kernel/Errors.ts"
import type { ReviewId } from "../kernel/Ids.ts"
import { type IncludeParam, listRequestWith, type ListParams, type Page, parseInclude } from "../kernel/ListQuery.ts"
import type { Review } from "./Review.ts"
import { ReviewRepository } from "./ReviewRepository.ts"
import { reviewListEndpoint } from "./ReviewLists.ts"

export class Reviews extends Context.Service<Reviews, {
  /** One page of the organization's reviews, with the includes the parameters ask for. */
  readonly list: (params: ListParams) => Effect.Effect<Page<Review>, Forbidden | InvalidRequest, CurrentCaller>
  readonly get: (
    id: ReviewId,
    params?: { readonly include?: IncludeParam }
  ) => Effect.Effect<Review, Forbidden | InvalidRequest | NotFound, CurrentCaller>
}>()("feedback/Reviews") {
  static readonly layer = Layer.effect(
    Reviews,
    Effect.gen(function*() {
      const repo = yield* ReviewRepository
      const cursorKey = yield* CursorKey

      const list = Effect.fn("Reviews.list")(function*(params: ListParams) {
        const { organizationId } = yield* requirePermission("reviews:read")
        const request = yield* listRequestWith(cursorKey, params, reviewListEndpoint, organizationId)
        return yield* repo.list(organizationId, request)
      })

      const get = Effect.fn("Reviews.get")(function*(id: ReviewId, params: { readonly include?: IncludeParam } = {}) {
        const { organizationId } = yield* requirePermission("reviews:read")
        const include = yield* Effect.fromResult(parseInclude(params.include, reviewListEndpoint.includes))
        const found = yield* repo.get(organizationId, id, include)
        return yield* Option.match(found, {
          onNone: () => Effect.fail(NotFound.of("review", id)),
          onSome: Effect.succeed
        })
      })

      return Reviews.of({ list, get })
    })
  )
}
