/**
 * The read side of review storage: a page of reviews for a list request and one review by id, each with the
 * extras that `include` asked for (spec: Review, "Optional extra fields").
 *
 * A store implements a `ReviewReader`: the keyset page of stored reviews and one batched loader per include.
 * `ReviewRepository.fromReader` composes them, so every store attaches includes the same way: each requested
 * include costs at most one loader call for the whole page (never one per review; none when the store read it with
 * the page, `StoredReviewPage.loaded`), an include that was not requested is absent from the answer (not null), and
 * a loader with nothing to look up is not called at all.
 *
 * Absent related records: `importJob`, `customer`, `product` and `response` are null when the review has none;
 * `files` and `answers` are empty arrays; `collisions` counts the OTHER reviews of the organization that share
 * the review's browser fingerprint / IP address, 0 when the review's value is null.
 */
import { Context, Effect, Option } from "effect"
import type { Customer, Product } from "../catalog/Catalog.ts"
import type { ImportJobId, OrganizationId, ReviewId } from "../kernel/Ids.ts"
import { attachIncludes as attachIncludesWith, byKey, distinctKeys, type IncludeLoaders } from "../kernel/Includes.ts"
import type { ListRequest, Page } from "../kernel/ListQuery.ts"
import type {
  Collisions,
  ImportJobRef,
  Review,
  ReviewFile,
  ReviewInclude,
  ReviewRecord,
  ReviewReply,
  SurveyAnswer
} from "./Review.ts"

/** A review as a store holds it: the API record plus its import provenance (shown only through `importJob`). */
export interface StoredReview {
  readonly record: ReviewRecord
  readonly importJobId: ImportJobId | null
  readonly importRow: number | null
}

export type ImportJob = Omit<ImportJobRef, "row">

/** Values whose collision counts are wanted, and how many reviews of the organization hold each of them. */
export interface CollisionKeys {
  readonly browserFingerprints: ReadonlyArray<string>
  readonly ipAddresses: ReadonlyArray<string>
}
export interface CollisionCounts {
  readonly browserFingerprint: ReadonlyMap<string, number>
  readonly ipAddress: ReadonlyMap<string, number>
}

/**
 * One batched lookup per include, each scoped to the organization and given distinct, non-empty keys. A key
 * without a record is simply missing from the answer.
 */
export interface ReviewIncludeLoaders {
  readonly importJobs: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, ImportJob>>
  readonly customers: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, Customer>>
  readonly products: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, Product>>
  /** By review id. */
  readonly responses: (
    organizationId: OrganizationId,
    reviewIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, ReviewReply>>
  /** By review id, each in the review's order. */
  readonly files: (
    organizationId: OrganizationId,
    reviewIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<ReviewFile>>>
  /** By review id, each in the review's order. */
  readonly answers: (
    organizationId: OrganizationId,
    reviewIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<SurveyAnswer>>>
  /** How many reviews of the organization (the asking ones included) hold each value. */
  readonly collisions: (organizationId: OrganizationId, keys: CollisionKeys) => Effect.Effect<CollisionCounts>
}

/** What each include's batched load gives, by include name (what `ReviewIncludeLoaders` answer). */
export interface ReviewIncludeLoads {
  readonly importJob: ReadonlyMap<string, ImportJob>
  readonly customer: ReadonlyMap<string, Customer>
  readonly product: ReadonlyMap<string, Product>
  readonly response: ReadonlyMap<string, ReviewReply>
  readonly files: ReadonlyMap<string, ReadonlyArray<ReviewFile>>
  readonly answers: ReadonlyMap<string, ReadonlyArray<SurveyAnswer>>
  readonly collisions: CollisionCounts
}

/**
 * A page as a store reads it. `loaded`: includes the store read with the page itself (e.g. in the page's own
 * statement, docs/DECISIONS.md §33), each exactly what its loader would have answered for the page's keys; their
 * loaders are then not called. A store may read none, some or all of the requested includes this way.
 */
export interface StoredReviewPage extends Page<StoredReview> {
  readonly loaded?: Partial<ReviewIncludeLoads>
}

/** What a store implements; `ReviewRepository.fromReader` turns it into the repository. */
export interface ReviewReader {
  readonly page: (
    organizationId: OrganizationId,
    request: ListRequest<ReviewInclude>
  ) => Effect.Effect<StoredReviewPage>
  readonly find: (organizationId: OrganizationId, id: ReviewId) => Effect.Effect<Option.Option<StoredReview>>
  readonly loaders: ReviewIncludeLoaders
}

const noCollisions: CollisionCounts = { browserFingerprint: new Map(), ipAddress: new Map() }

/** How many OTHER reviews share `value` (the counts include the asking review itself). */
const others = (counts: ReadonlyMap<string, number>, value: string | null) =>
  value === null ? 0 : Math.max(0, (counts.get(value) ?? 1) - 1)

/** Each review include as data: its batched load and the value it gives one review (kernel/Includes.ts). */
const reviewIncludes = (
  organizationId: OrganizationId,
  loaders: ReviewIncludeLoaders
): IncludeLoaders<StoredReview, ReviewInclude> => ({
  importJob: {
    load: byKey((r: StoredReview) => r.importJobId, (ids) => loaders.importJobs(organizationId, ids)).load,
    value: (r, jobs: ReadonlyMap<string, ImportJob>) => {
      const job = r.importJobId === null ? undefined : jobs.get(r.importJobId)
      return job === undefined ? null : { ...job, row: r.importRow ?? 0 }
    }
  },
  customer: byKey((r) => r.record.customerId, (ids) => loaders.customers(organizationId, ids)),
  product: byKey((r) => r.record.productId, (ids) => loaders.products(organizationId, ids)),
  response: byKey((r) => r.record.id, (ids) => loaders.responses(organizationId, ids)),
  files: byKey<StoredReview, ReadonlyArray<ReviewFile>>(
    (r) => r.record.id,
    (ids) => loaders.files(organizationId, ids),
    []
  ),
  answers: byKey<StoredReview, ReadonlyArray<SurveyAnswer>>(
    (r) => r.record.id,
    (ids) => loaders.answers(organizationId, ids),
    []
  ),
  collisions: {
    load: (reviews) => {
      const browserFingerprints = distinctKeys(reviews.map((r) => r.record.browserFingerprint))
      const ipAddresses = distinctKeys(reviews.map((r) => r.record.ipAddress))
      return browserFingerprints.length > 0 || ipAddresses.length > 0
        ? loaders.collisions(organizationId, { browserFingerprints, ipAddresses })
        : Effect.succeed(noCollisions)
    },
    value: (r, counts: CollisionCounts): Collisions => ({
      browserFingerprint: others(counts.browserFingerprint, r.record.browserFingerprint),
      ipAddress: others(counts.ipAddress, r.record.ipAddress)
    })
  }
})

/** Adds the requested extras to each review, with one loader call per include for the whole batch. */
export const attachIncludes = (
  organizationId: OrganizationId,
  reviews: ReadonlyArray<StoredReview>,
  include: ReadonlyArray<ReviewInclude>,
  loaders: ReviewIncludeLoaders,
  loaded?: Partial<ReviewIncludeLoads>
): Effect.Effect<ReadonlyArray<Review>> =>
  attachIncludesWith<StoredReview, ReviewInclude, Review>(
    reviews,
    include,
    reviewIncludes(organizationId, loaders),
    (r) => r.record,
    loaded
  )

export class ReviewRepository extends Context.Service<ReviewRepository, {
  /** One page of the organization's reviews for a parsed list request, with its includes. */
  readonly list: (organizationId: OrganizationId, request: ListRequest<ReviewInclude>) => Effect.Effect<Page<Review>>
  /** One review of the organization, with the requested includes; none for another organization's review. */
  readonly get: (
    organizationId: OrganizationId,
    id: ReviewId,
    include: ReadonlyArray<ReviewInclude>
  ) => Effect.Effect<Option.Option<Review>>
  /** How many reviews of the organization hold each of these fingerprints and IP addresses (the collision counts). */
  readonly valueCounts: (organizationId: OrganizationId, keys: CollisionKeys) => Effect.Effect<CollisionCounts>
}>()("feedback/ReviewRepository") {
  static readonly fromReader = (reader: ReviewReader): ReviewRepository["Service"] =>
    ReviewRepository.of({
      list: (organizationId, request) =>
        Effect.flatMap(reader.page(organizationId, request), (page) =>
          Effect.map(
            attachIncludes(organizationId, page.data, request.include, reader.loaders, page.loaded),
            (data): Page<Review> => ({ data, nextCursor: page.nextCursor })
          )),
      get: (organizationId, id, include) =>
        Effect.flatMap(reader.find(organizationId, id), (found) =>
          Option.match(found, {
            onNone: () => Effect.succeed(Option.none()),
            onSome: (stored) =>
              Effect.map(
                attachIncludes(organizationId, [stored], include, reader.loaders),
                (rs) => Option.fromUndefinedOr(rs[0])
              )
          })),
      valueCounts: (organizationId, keys) =>
        keys.browserFingerprints.length === 0 && keys.ipAddresses.length === 0
          ? Effect.succeed(noCollisions)
          : reader.loaders.collisions(organizationId, keys)
    })
}
