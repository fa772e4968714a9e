/**
 * Reading reviews (spec: GET /reviews, GET /reviews/{id}; DECISIONS §4): both require `reviews:read`, check the
 * permission before anything else, and see only the caller's organization (another organization's review id is
 * a 404 like a missing one).
 */
import { Effect, Option } from "effect"
import { requirePermission } from "./Caller.ts"
import { NotFound } from "./Errors.ts"
import type { ReviewId } from "./Ids.ts"
import { type IncludeParam, listRequestFor, type ListParams, parseInclude, reviewListEndpoint } from "./ListQuery.ts"
import { ReviewRepository } from "./ReviewRepository.ts"

export const listReviews = (params: ListParams) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("reviews:read")
    const request = yield* listRequestFor(params, reviewListEndpoint, organizationId)
    return yield* (yield* ReviewRepository).list(organizationId, request)
  })

export const getReview = (id: ReviewId, params: { readonly include?: IncludeParam } = {}) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("reviews:read")
    const include = yield* Effect.fromResult(parseInclude(params.include, reviewListEndpoint.includes))
    const found = yield* (yield* ReviewRepository).get(organizationId, id, include)
    return yield* Option.match(found, {
      onNone: () => Effect.fail(NotFound.of("review", id)),
      onSome: Effect.succeed
    })
  })
