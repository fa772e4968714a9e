/**
 * Use-cases of the review write side (spec: Reviews; docs/DECISIONS.md §5) as the `ReviewWrites` service: moderate and
 * redact one review, delete it, moderate every review matching a filter, import reviews, and manage the merchant's
 * reply.
 *
 * Each is one unit of work: the change, the product stats it affects and the events announcing it commit together
 * or not at all, so a webhook never announces a rolled-back change nor misses a committed one.
 *
 * Events: `review.updated` (PATCH, bulk-update), `review.deleted`, `review.created` (import), each with the review
 * without extras. Replies fire no event: the catalog has no reply events, and the review itself is untouched by a
 * reply change (spec: "The review is untouched"), so announcing `review.updated` would be false.
 */
import { Context, Effect, Fiber, Layer, Option, Schema } from "effect"
import { newCustomer } from "../catalog/Catalog.ts"
import { actorId, type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import {
  Conflict,
  type Forbidden,
  type ImportFailed,
  InvalidRequest,
  type InvalidRedaction,
  NotFound
} from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder, redactData } from "../kernel/EventOutbox.ts"
import { eraseFromRecordedResponses, IdempotencyRepository } from "../idempotency/IdempotencyRepository.ts"
import { withdrawHeldExports } from "../jobs/ExportErasure.ts"
import { JobRepository } from "../jobs/JobRepository.ts"
import { parseTimestampValue } from "../kernel/Filter.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { CustomerId, FileId, ImportJobId, OrganizationId, ReviewId, ReviewReplyId } from "../kernel/Ids.ts"
import { parseListMatch } from "../kernel/ListQuery.ts"
import { OrganizationRepository } from "../organizations/OrganizationRepository.ts"
import { newReview, ReviewRecord, type ReviewReply } from "./Review.ts"
import type {
  BulkUpdateBody,
  BulkUpdateResult,
  ImportRequest,
  ReviewImportRow,
  ReviewImportResult,
  ReplyCreate,
  ReplyPatch,
  ReviewDeletionRequest,
  ReviewPatch
} from "./ReviewRequests.ts"
import { type ImportedReview, type ImportJobRecord, ReviewWriteRepository } from "./ReviewWriteRepository.ts"
import {
  fileFromUrl,
  importReferencesOf,
  planReplyPatch,
  planReviewPatch,
  productStatsDeltas,
  selectImportRows
} from "./ReviewRules.ts"
import { now, type Timestamp } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import { reviewListEndpoint } from "./ReviewLists.ts"

/** Rows an import writes per store call; a larger import is written in several, building one while writing another. */
export const IMPORT_SLICE = 2_500

/**
 * The first slice is smaller: nothing is being written while it is built, so a small one starts the store a few
 * times sooner, and the next full slice is built while the store writes it.
 */
export const IMPORT_FIRST_SLICE = 500

/** `importJob.type` / `importJob.action` of a review import (values not shown by the spec). */
export const REVIEW_IMPORT_JOB = { type: "reviews", action: "create" } as const

/** The review as events carry it: the API's shape without extras (any store-only fields dropped). */
const reviewEventData = (review: ReviewRecord): unknown => Schema.encodeSync(ReviewRecord)(review)

/** What a `customer_request` deletion removes from stored events and delivery logs: the customer's own words. */
const REVIEW_CONTENT_FIELDS = ["title", "body", "originalTitle", "originalBody"] as const

export class ReviewWrites extends Context.Service<ReviewWrites, {
  /** `PATCH /reviews/{id}`: moderate (published), redact (title/body), replace metadata. */
  readonly update: (
    id: ReviewId,
    patch: ReviewPatch
  ) => Effect.Effect<ReviewRecord, Forbidden | NotFound | InvalidRedaction | InvalidRequest, CurrentCaller>
  /** `DELETE /reviews/{id}`: removes it with its files, answers and reply; keeps a deletion record without content. */
  readonly delete: (
    id: ReviewId,
    request: ReviewDeletionRequest
  ) => Effect.Effect<ReviewRecord, Forbidden | NotFound, CurrentCaller>
  /**
   * `PATCH /reviews/bulk-update`: sets `published` on every review matching `filter` AND `search` (the read side's
   * semantics), stamps each moderated, recalculates each affected product's stats once, and fires `review.updated`
   * for each review whose `published` changed. Answers the number of reviews matched.
   */
  readonly bulkUpdate: (
    query: { readonly filter?: string | undefined; readonly search?: string | undefined },
    body: BulkUpdateBody
  ) => Effect.Effect<BulkUpdateResult, Forbidden | InvalidRequest, CurrentCaller>
  /**
   * `POST /reviews/import`: one unit of work. Rows whose product, site or externalId do not resolve are skipped and
   * listed, or with `strict` the first of them fails the whole import (`ImportFailed`, nothing written). Customers
   * are created for unseen emails (lower-cased); each imported review fires `review.created`; each affected
   * product's stats are recalculated once; the import job and each review's row index are recorded.
   */
  readonly import: (
    request: ImportRequest
  ) => Effect.Effect<ReviewImportResult, Forbidden | ImportFailed, CurrentCaller>
  /**
   * One batch of an import job (docs/DECISIONS.md §20): the same rules as `import`, recorded under the job's own
   * record with each review's row number in the file (`rowNumbers[index]`). Joins the caller's unit of work, so the
   * job's progress can commit with the batch.
   */
  readonly importBatch: (
    rows: ReadonlyArray<ReviewImportRow>,
    options: { readonly strict: boolean; readonly job: ImportJobRecord; readonly rowNumbers: ReadonlyArray<number> }
  ) => Effect.Effect<ReviewImportResult, Forbidden | ImportFailed, CurrentCaller>
  /** `POST /reviews/{id}/response`: a draft unless `published` is sent; a second reply is a Conflict. */
  readonly createReply: (
    reviewId: ReviewId,
    input: ReplyCreate
  ) => Effect.Effect<ReviewReply, Forbidden | NotFound | Conflict, CurrentCaller>
  /** `PATCH /reviews/{id}/response`: only sent fields change; metadata is replaced wholesale. */
  readonly updateReply: (
    reviewId: ReviewId,
    patch: ReplyPatch
  ) => Effect.Effect<ReviewReply, Forbidden | NotFound, CurrentCaller>
  /** `DELETE /reviews/{id}/response`: removes the reply, leaves the review untouched, answers the deleted reply. */
  readonly deleteReply: (reviewId: ReviewId) => Effect.Effect<ReviewReply, Forbidden | NotFound, CurrentCaller>
}>()("feedback/ReviewWrites") {
  static readonly layer = Layer.effect(
    ReviewWrites,
    Effect.gen(function*() {
      const repo = yield* ReviewWriteRepository
      const organizations = yield* OrganizationRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const outbox = yield* EventOutbox
      const recorded = yield* IdempotencyRepository
      const jobs = yield* JobRepository
      const events = makeEventRecorder(outbox, ids)

      const organizationName = (organizationId: OrganizationId) =>
        organizations.findById(organizationId).pipe(
          Effect.flatMap(foundOr(organizationId, "organization")),
          Effect.map((o) => o.name),
          // The caller's organization exists (it was authenticated); a missing one is a defect, not a 404.
          Effect.orDie
        )

      const lockedReview = (organizationId: OrganizationId, id: ReviewId) =>
        repo.lockReview(organizationId, id).pipe(Effect.flatMap(foundOr(id, "review")))

      const update = Effect.fn("ReviewWrites.update")(function*(id: ReviewId, patch: ReviewPatch) {
        const { organizationId } = yield* requirePermission("reviews:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* lockedReview(organizationId, id)
          const outcome = yield* Effect.fromResult(planReviewPatch(current, patch, yield* now))
          if (!outcome.write) return current
          yield* repo.updateReview(organizationId, outcome.review)
          if (outcome.publishedChanged) yield* repo.recalculateProductStats(organizationId, [outcome.review.productId])
          if (outcome.announce) yield* events.record(organizationId, "review.updated", reviewEventData(outcome.review))
          return outcome.review
        }))
      })

      const deleteReview = Effect.fn("ReviewWrites.delete")(function*(id: ReviewId, request: ReviewDeletionRequest) {
        const caller = yield* requirePermission("reviews:write")
        const { organizationId } = caller
        return yield* uow.transaction(Effect.gen(function*() {
          const review = yield* lockedReview(organizationId, id)
          const note = request.note === undefined || request.note.trim() === "" ? null : request.note
          yield* repo.deleteReview(organizationId, {
            reviewId: review.id,
            reason: request.reason,
            note,
            actorKeyId: actorId(caller),
            deletedAt: yield* now
          })
          yield* repo.recalculateProductStats(organizationId, [review.productId])
          // A customer's request takes their words out of every stored copy: the events about the review, the
          // delivery logs built from them, the deletion's own event (docs/DECISIONS.md §17) and export files still held
          // for download (§54).
          const privacy = request.reason === "customer_request"
          if (privacy) {
            const redaction = { resource: "review", recordId: review.id, fields: REVIEW_CONTENT_FIELDS }
            yield* outbox.redact(organizationId, redaction)
            yield* eraseFromRecordedResponses(recorded, organizationId, redaction)
            yield* withdrawHeldExports(jobs, organizationId, yield* now)
          }
          const data = reviewEventData(review)
          yield* events.record(
            organizationId,
            "review.deleted",
            privacy ? redactData(data, REVIEW_CONTENT_FIELDS) : data
          )
          return review
        }))
      })

      const bulkUpdate = Effect.fn("ReviewWrites.bulkUpdate")(function*(
        query: { readonly filter?: string | undefined; readonly search?: string | undefined },
        body: BulkUpdateBody
      ) {
        const { organizationId } = yield* requirePermission("reviews:write")
        const match = yield* Effect.fromResult(parseListMatch(query, reviewListEndpoint))
        return yield* uow.transaction(Effect.gen(function*() {
          const outcome = yield* repo.bulkSetPublished(
            organizationId,
            match,
            body.published,
            yield* now
          )
          yield* repo.recalculateProductStats(organizationId, outcome.changedProductIds)
          return { count: outcome.count }
        }))
      })

      /** Customers for the rows' emails: existing ones, and new ones created for unseen emails. */
      const ensureImportCustomers = (
        organizationId: OrganizationId,
        emails: ReadonlyArray<string | undefined>,
        existing: ReadonlyMap<string, CustomerId>,
        at: Timestamp
      ) =>
        Effect.gen(function*() {
          const found = new Map(existing)
          const unseen = new Set<string>()
          for (const email of emails) {
            if (email !== undefined && !found.has(email.toLowerCase())) unseen.add(email.toLowerCase())
          }
          if (unseen.size === 0) return found
          const customers = []
          for (const email of unseen) customers.push(newCustomer(yield* nextIdFrom<CustomerId>(ids), at, { email }))
          const created = yield* repo.ensureCustomers(organizationId, customers)
          for (const [email, id] of created) found.set(email, id)
          // Announced like every other customer creation (docs/DECISIONS.md §13), once each, in this unit of work; an
          // address a concurrent writer created first is that writer's customer and its event.
          yield* events.recordAll(
            organizationId,
            customers.filter((c) => created.get(c.email) === c.id).map((customer) => ({
              event: "customer.updated",
              data: customer
            }))
          )
          return found
        })

      const importReviews = Effect.fn("ReviewWrites.import")(function*(request: ImportRequest) {
        const { organizationId } = yield* requirePermission("reviews:write")
        const job = { id: yield* nextIdFrom<ImportJobId>(ids), ...REVIEW_IMPORT_JOB, createdAt: yield* now }
        return yield* importInto(organizationId, request.data, request.strict ?? false, job, (index) => index)
      })

      const importBatch = Effect.fn("ReviewWrites.importBatch")(function*(
        rows: ReadonlyArray<ReviewImportRow>,
        options: { readonly strict: boolean; readonly job: ImportJobRecord; readonly rowNumbers: ReadonlyArray<number> }
      ) {
        const { organizationId } = yield* requirePermission("reviews:write")
        return yield* importInto(
          organizationId,
          rows,
          options.strict,
          options.job,
          (index) => options.rowNumbers[index] ?? index
        )
      })

      const importInto = (
        organizationId: OrganizationId,
        rows: ReadonlyArray<ReviewImportRow>,
        strict: boolean,
        job: ImportJobRecord,
        rowOf: (index: number) => number
      ) =>
        uow.transaction(Effect.gen(function*() {
          const at = yield* now
          const refs = yield* repo.resolveImportReferences(organizationId, importReferencesOf(rows))
          const selection = yield* Effect.fromResult(selectImportRows(rows, refs, strict))
          if (selection.accepted.length === 0) return { imported: [], skipped: selection.skipped }

          const customerIds = yield* ensureImportCustomers(
            organizationId,
            selection.accepted.map((a) => a.row.customer),
            refs.customersByEmail,
            at
          )
          const needsOrganizationName = selection.accepted.some((a) =>
            a.row.response !== undefined && a.row.responderName === undefined
          )
          const defaultResponder = needsOrganizationName ? yield* organizationName(organizationId) : ""

          const build = (slice: typeof selection.accepted) =>
            Effect.gen(function*() {
              const built: Array<ImportedReview> = []
              for (const { index, row, productId, siteId } of slice) {
                const id = yield* nextIdFrom<ReviewId>(ids)
                const pending = row.pending === true
                const review = newReview(id, at, {
                  siteId,
                  productId,
                  productVariantId: row.productVariant === undefined
                    ? null
                    : row.productVariant.toLowerCase() as ReviewRecord["productVariantId"],
                  customerId: row.customer === undefined ? null : customerIds.get(row.customer.toLowerCase()) ?? null,
                  title: row.title ?? null,
                  body: row.body ?? null,
                  rating: row.rating,
                  published: pending ? false : row.published ?? true,
                  verifiedBuyer: row.verifiedBuyer ?? false,
                  moderatedAt: pending ? null : at,
                  metadata: { ...row.metadata },
                  externalId: row.externalId ?? null,
                  createdAt: instantOr(row.createdAt, at)
                })
                const files = []
                for (const url of row.imageUrls ?? []) {
                  files.push({ id: yield* nextIdFrom<FileId>(ids), ...fileFromUrl(url), sizeBytes: 0, url })
                }
                const reply: ReviewReply | null = row.response === undefined ? null : {
                  id: yield* nextIdFrom<ReviewReplyId>(ids),
                  reviewId: id,
                  body: row.response,
                  responderName: row.responderName ?? defaultResponder,
                  // The reply was public where the review came from.
                  published: true,
                  metadata: {},
                  createdAt: instantOr(row.responseCreatedAt, at),
                  updatedAt: at
                }
                const answers = (row.answers ?? []).map((a) => ({
                  questionId: a.questionId.toLowerCase() as typeof a.questionId,
                  label: a.label,
                  type: a.type,
                  step: a.step,
                  steps: a.steps,
                  lowLabel: a.lowLabel ?? null,
                  highLabel: a.highLabel ?? null,
                  middleLabel: a.middleLabel ?? null,
                  optionLabels: [...(a.optionLabels ?? [])]
                }))
                built.push({ review, importRow: rowOf(index), files, answers, reply })
              }
              return built
            })

          // Written in slices, one after another (so events keep row order): while the store writes one slice, the
          // next is built here, and a server's second core does the writing in parallel with the building.
          const reviews: Array<ImportedReview> = []
          let writing: Fiber.Fiber<void> | undefined
          for (
            let start = 0, size = IMPORT_FIRST_SLICE;
            start < selection.accepted.length;
            start += size, size = IMPORT_SLICE
          ) {
            const slice = yield* build(selection.accepted.slice(start, start + size))
            for (const built of slice) reviews.push(built)
            // Called before waiting for the previous slice: a store may prepare the slice's statement when called
            // (the PostgreSQL store encodes its rows), so that work too overlaps the database's.
            const write = repo.insertImport(organizationId, job, slice, at)
            if (writing !== undefined) yield* Fiber.join(writing)
            writing = yield* Effect.forkChild(write)
          }
          if (writing !== undefined) yield* Fiber.join(writing)

          yield* repo.addProductStats(organizationId, productStatsDeltas(reviews.map((r) => r.review)))
          return {
            imported: selection.accepted.map((a, i) => ({
              index: a.index,
              id: reviews[i]!.review.id,
              imageUrls: reviews[i]!.files.map((f) => f.url)
            })),
            skipped: selection.skipped
          }
        }))

      // -------------------------------------------------------------------------------------------------------------
      // Replies

      const createReply = Effect.fn("ReviewWrites.createReply")(function*(reviewId: ReviewId, input: ReplyCreate) {
        const { organizationId } = yield* requirePermission("reviews:write")
        return yield* uow.transaction(Effect.gen(function*() {
          // Locking the review serializes concurrent creates, so the second one sees the first reply.
          yield* lockedReview(organizationId, reviewId)
          const conflict = new Conflict({
            message: "This review already has a reply; edit it with PATCH /reviews/{id}/response instead."
          })
          if (Option.isSome(yield* repo.findReply(organizationId, reviewId))) return yield* conflict
          const at = yield* now
          const reply: ReviewReply = {
            id: yield* nextIdFrom<ReviewReplyId>(ids),
            reviewId,
            body: input.body,
            responderName: input.responderName ?? (yield* organizationName(organizationId)),
            published: input.published ?? false,
            metadata: { ...input.metadata },
            createdAt: at,
            updatedAt: at
          }
          if (!(yield* repo.insertReply(organizationId, reply))) return yield* conflict
          return reply
        }))
      })

      const replyOf = (organizationId: OrganizationId, reviewId: ReviewId) =>
        lockedReview(organizationId, reviewId).pipe(
          Effect.andThen(repo.findReply(organizationId, reviewId)),
          Effect.flatMap(Option.match({
            onNone: () =>
              Effect.fail(new NotFound({ message: `Review ${reviewId} has no reply.`, resource: "review reply" })),
            onSome: Effect.succeed
          }))
        )

      const updateReply = Effect.fn("ReviewWrites.updateReply")(function*(reviewId: ReviewId, patch: ReplyPatch) {
        const { organizationId } = yield* requirePermission("reviews:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* replyOf(organizationId, reviewId)
          const next = planReplyPatch(current, patch, yield* now)
          if (next === undefined) return current
          yield* repo.updateReply(organizationId, next)
          return next
        }))
      })

      const deleteReply = Effect.fn("ReviewWrites.deleteReply")(function*(reviewId: ReviewId) {
        const { organizationId } = yield* requirePermission("reviews:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const reply = yield* replyOf(organizationId, reviewId)
          yield* repo.deleteReply(organizationId, reviewId)
          return reply
        }))
      })

      return ReviewWrites.of({
        update,
        delete: deleteReview,
        bulkUpdate,
        import: importReviews,
        importBatch,
        createReply,
        updateReply,
        deleteReply
      })
    })
  )
}

const foundOr = <A>(id: string, resource: string) => (found: Option.Option<A>): Effect.Effect<A, NotFound> =>
  Option.match(found, { onNone: () => Effect.fail(NotFound.of(resource, id)), onSome: Effect.succeed })

const instantOr = (input: string | undefined, fallback: Timestamp): Timestamp =>
  input === undefined ? fallback : parseTimestampValue(input) ?? fallback
