/**
 * The read side of review storage: a page of reviews for a list request and one review by id, each with the
 * extras that `include` asked for (spec: Review, "Optional extra fields").
 *
 * A store implements a `ReviewReader`: the keyset page of stored reviews and one batched loader per include.
 * `ReviewRepository.fromReader` composes them, so every store attaches includes the same way: each requested
 * include costs exactly one loader call for the whole page (never one per review), an include that was not
 * requested is absent from the answer (not null), and a loader with nothing to look up is not called at all.
 *
 * Absent related records: `importJob`, `customer`, `product` and `response` are null when the review has none;
 * `files` and `answers` are empty arrays; `collisions` counts the OTHER reviews of the organization that share
 * the review's browser fingerprint / IP address, 0 when the review's value is null.
 */
import { Context, Effect, Option } from "effect"
import type { Customer, Product } from "../catalog/Catalog.ts"
import type { ImportJobId, OrganizationId, ReviewId } from "../kernel/Ids.ts"
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
  readonly importJobs: (organizationId: OrganizationId, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, ImportJob>>
  readonly customers: (organizationId: OrganizationId, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Customer>>
  readonly products: (organizationId: OrganizationId, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Product>>
  /** By review id. */
  readonly responses: (organizationId: OrganizationId, reviewIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, ReviewReply>>
  /** By review id, each in the review's order. */
  readonly files: (organizationId: OrganizationId, reviewIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<ReviewFile>>>
  /** By review id, each in the review's order. */
  readonly answers: (organizationId: OrganizationId, reviewIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<SurveyAnswer>>>
  /** How many reviews of the organization (the asking ones included) hold each value. */
  readonly collisions: (organizationId: OrganizationId, keys: CollisionKeys) => Effect.Effect<CollisionCounts>
}

/** What a store implements; `ReviewRepository.fromReader` turns it into the repository. */
export interface ReviewReader {
  readonly page: (organizationId: OrganizationId, request: ListRequest<ReviewInclude>) => Effect.Effect<Page<StoredReview>>
  readonly find: (organizationId: OrganizationId, id: ReviewId) => Effect.Effect<Option.Option<StoredReview>>
  readonly loaders: ReviewIncludeLoaders
}

const distinct = (values: Iterable<string | null>): ReadonlyArray<string> => {
  const set = new Set<string>()
  for (const v of values) if (v !== null) set.add(v)
  return [...set]
}

const emptyMap: ReadonlyMap<string, never> = new Map<string, never>()

/** Loads a map only when there is something to look up. */
const load = <A>(
  wanted: boolean,
  keys: ReadonlyArray<string>,
  loader: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, A>>
): Effect.Effect<ReadonlyMap<string, A>> => wanted && keys.length > 0 ? loader(keys) : Effect.succeed(emptyMap)

/** Adds the requested extras to each review, with one loader call per include for the whole batch. */
export const attachIncludes = (
  organizationId: OrganizationId,
  reviews: ReadonlyArray<StoredReview>,
  include: ReadonlyArray<ReviewInclude>,
  loaders: ReviewIncludeLoaders
): Effect.Effect<ReadonlyArray<Review>> => {
  if (include.length === 0 || reviews.length === 0) return Effect.succeed(reviews.map((r) => r.record))
  const wants = new Set(include)
  const records = reviews.map((r) => r.record)
  const reviewIds = records.map((r) => r.id)
  const fingerprints = distinct(records.map((r) => r.browserFingerprint))
  const ips = distinct(records.map((r) => r.ipAddress))
  const collisionsWanted = wants.has("collisions") && (fingerprints.length > 0 || ips.length > 0)
  return Effect.all({
    importJobs: load(wants.has("importJob"), distinct(reviews.map((r) => r.importJobId)), (ids) => loaders.importJobs(organizationId, ids)),
    customers: load(wants.has("customer"), distinct(records.map((r) => r.customerId)), (ids) => loaders.customers(organizationId, ids)),
    products: load(wants.has("product"), distinct(records.map((r) => r.productId)), (ids) => loaders.products(organizationId, ids)),
    responses: load(wants.has("response"), reviewIds, (ids) => loaders.responses(organizationId, ids)),
    files: load(wants.has("files"), reviewIds, (ids) => loaders.files(organizationId, ids)),
    answers: load(wants.has("answers"), reviewIds, (ids) => loaders.answers(organizationId, ids)),
    collisions: collisionsWanted
      ? loaders.collisions(organizationId, { browserFingerprints: fingerprints, ipAddresses: ips })
      : Effect.succeed<CollisionCounts>({ browserFingerprint: emptyMap, ipAddress: emptyMap })
  }, { concurrency: "unbounded" }).pipe(
    Effect.map((loaded) =>
      reviews.map(({ record, importJobId, importRow }): Review => {
        const others = (counts: ReadonlyMap<string, number>, value: string | null) =>
          value === null ? 0 : Math.max(0, (counts.get(value) ?? 1) - 1)
        const extras: { -readonly [K in keyof Review]?: Review[K] } = {}
        for (const name of include) {
          switch (name) {
            case "importJob": {
              const job = importJobId === null ? undefined : loaded.importJobs.get(importJobId)
              extras.importJob = job === undefined ? null : { ...job, row: importRow ?? 0 }
              break
            }
            case "customer":
              extras.customer = record.customerId === null ? null : loaded.customers.get(record.customerId) ?? null
              break
            case "product":
              extras.product = loaded.products.get(record.productId) ?? null
              break
            case "response":
              extras.response = loaded.responses.get(record.id) ?? null
              break
            case "files":
              extras.files = loaded.files.get(record.id) ?? []
              break
            case "answers":
              extras.answers = loaded.answers.get(record.id) ?? []
              break
            case "collisions": {
              const collisions: Collisions = {
                browserFingerprint: others(loaded.collisions.browserFingerprint, record.browserFingerprint),
                ipAddress: others(loaded.collisions.ipAddress, record.ipAddress)
              }
              extras.collisions = collisions
              break
            }
          }
        }
        return { ...record, ...extras } as Review
      })
    )
  )
}

export class ReviewRepository extends Context.Service<ReviewRepository, {
  /** One page of the organization's reviews for a parsed list request, with its includes. */
  readonly list: (organizationId: OrganizationId, request: ListRequest<ReviewInclude>) => Effect.Effect<Page<Review>>
  /** One review of the organization, with the requested includes; none for another organization's review. */
  readonly get: (
    organizationId: OrganizationId,
    id: ReviewId,
    include: ReadonlyArray<ReviewInclude>
  ) => Effect.Effect<Option.Option<Review>>
}>()("feedback/ReviewRepository") {
  static readonly fromReader = (reader: ReviewReader): ReviewRepository["Service"] =>
    ReviewRepository.of({
      list: (organizationId, request) =>
        Effect.flatMap(reader.page(organizationId, request), (page) =>
          Effect.map(
            attachIncludes(organizationId, page.data, request.include, reader.loaders),
            (data): Page<Review> => ({ data, nextCursor: page.nextCursor })
          )),
      get: (organizationId, id, include) =>
        Effect.flatMap(reader.find(organizationId, id), (found) =>
          Option.match(found, {
            onNone: () => Effect.succeed(Option.none()),
            onSome: (stored) =>
              Effect.map(attachIncludes(organizationId, [stored], include, reader.loaders), (rs) => Option.fromUndefinedOr(rs[0]))
          }))
    })
}
