/**
 * Use-cases of product questions and their answers (spec: Product questions; docs/DECISIONS.md §4, §6), as the
 * `ProductQuestions` service.
 *
 * - Every write is one unit of work with its domain events (`productQuestion.created|updated|deleted`,
 *   `productQuestionAnswer.created`, data in the API's shape) and, for the first published answer, the email
 *   notice to the asker (outbox, sent after commit by `EmailNoticeWorker.ts`).
 * - References in a body (`productId`, `customerId`, `siteId`) that do not exist in the caller's organization are a
 *   400 naming the field: the request is malformed, whereas a 404 would say the URL names nothing.
 * - Events: a question is `created` once, whatever its `published` value; every PATCH that sends a field fires
 *   `productQuestion.updated`, so a question that arrived unpublished fires it when published (spec: Events). New
 *   answers fire `productQuestionAnswer.created` only; the question's counters and `answeredAt`/`notifiedAt` change
 *   with them without a question event.
 * - Deletion removes the answers, the email notices and every stored copy of the asker's address: the
 *   `productQuestion.deleted` event carries the question with `askerEmail: null`, and the events recorded earlier
 *   about it are blanked the same way, and so are responses recorded for Idempotency-Key retries (docs/DECISIONS.md
 *   §18). The response returns the question as it was, address included.
 *
 * The bodies are validated by the Schemas of `ProductQuestion.ts` (the HTTP adapter decodes them; an embedding host
 * calling the service directly should decode with the same Schemas). The rules that need the store, and the
 * rules across fields, are checked here.
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { eraseFromRecordedResponses, IdempotencyRepository } from "../idempotency/IdempotencyRepository.ts"
import type { Customer, Product } from "../catalog/Catalog.ts"
import { type Caller, type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { attachIncludes, byKey, type IncludeLoaders } from "../kernel/Includes.ts"
import { EmailOutboxRepository, type EmailNoticeId } from "./EmailOutbox.ts"
import { type Forbidden, InvalidRequest, NotFound, type RequestIssue } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import type {
  CustomerId,
  OrganizationId,
  ProductId,
  ProductQuestionAnswerId,
  ProductQuestionId
} from "../kernel/Ids.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import { type IncludeParam, type ListParams, type Page, parseInclude, parseListRequest } from "../kernel/ListQuery.ts"
import { OrganizationRepository } from "../organizations/OrganizationRepository.ts"
import {
  ADMIN_API_QUESTION_SOURCE,
  MERCHANT_AUTHOR_TYPE,
  type ProductQuestion,
  type ProductQuestionAnswer,
  type ProductQuestionInclude,
  productQuestionIncludeNames,
  type ProductQuestionRecord
} from "./ProductQuestion.ts"
import type {
  CreateProductQuestion,
  CreateProductQuestionAnswer,
  UpdateProductQuestion,
  UpdateProductQuestionAnswer
} from "./ProductQuestionRequests.ts"
import { renderAnswerNotice, shouldNotifyAsker } from "./ProductQuestionNotice.ts"
import { type AnsweredFilter, ProductQuestionRepository } from "./ProductQuestionRepository.ts"
import { now, type Timestamp } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import { productQuestionListEndpoint } from "./ProductQuestionLists.ts"

export interface ProductQuestionListParams extends ListParams {
  readonly answered?: string | boolean | undefined
}

export class ProductQuestions extends Context.Service<ProductQuestions, {
  /** `GET /product-questions`. */
  readonly list: (
    params: ProductQuestionListParams
  ) => Effect.Effect<Page<ProductQuestion>, Forbidden | InvalidRequest, CurrentCaller>
  /** `GET /product-questions/{id}`. */
  readonly get: (
    id: ProductQuestionId,
    include?: IncludeParam
  ) => Effect.Effect<ProductQuestion, Forbidden | InvalidRequest | NotFound, CurrentCaller>
  /** `GET /product-questions/{id}/answers`: every answer, published or not, oldest first. */
  readonly listAnswers: (
    id: ProductQuestionId
  ) => Effect.Effect<{ readonly data: ReadonlyArray<ProductQuestionAnswer> }, Forbidden | NotFound, CurrentCaller>
  /** `POST /product-questions`. */
  readonly create: (
    input: CreateProductQuestion
  ) => Effect.Effect<ProductQuestionRecord, Forbidden | InvalidRequest, CurrentCaller>
  /**
   * `PATCH /product-questions/{id}`: moderate (`published`, either value takes it out of the queue and stamps
   * `moderatedAt`), rename or anonymize the asker, replace metadata. A body with no field changes nothing.
   */
  readonly update: (
    id: ProductQuestionId,
    input: UpdateProductQuestion,
    include?: IncludeParam
  ) => Effect.Effect<ProductQuestion, Forbidden | InvalidRequest | NotFound, CurrentCaller>
  /** `DELETE /product-questions/{id}`: the question, its answers, its notices and every copy of the address. */
  readonly delete: (id: ProductQuestionId) => Effect.Effect<ProductQuestionRecord, Forbidden | NotFound, CurrentCaller>
  /**
   * `POST /product-questions/{id}/answers`: a merchant answer, published unless `published: false`. The first
   * published answer sets `answeredAt`, and records the email to the asker when they left an address and did not
   * opt out; later answers send nothing.
   */
  readonly createAnswer: (
    id: ProductQuestionId,
    input: CreateProductQuestionAnswer
  ) => Effect.Effect<ProductQuestionAnswer, Forbidden | NotFound, CurrentCaller>
  /**
   * `PATCH /product-questions/{id}/answers/{answerId}`: only sent fields change. Publishing or hiding stamps the
   * answer's `moderatedAt` and keeps the question's counts and `answeredAt` current; an edit that publishes the
   * question's first published answer emails the asker like a created one (once per question, ever).
   */
  readonly updateAnswer: (
    id: ProductQuestionId,
    answerId: ProductQuestionAnswerId,
    input: UpdateProductQuestionAnswer
  ) => Effect.Effect<ProductQuestionAnswer, Forbidden | NotFound, CurrentCaller>
  /** `DELETE /product-questions/{id}/answers/{answerId}`: returns the deleted answer; counts and `answeredAt` follow. */
  readonly deleteAnswer: (
    id: ProductQuestionId,
    answerId: ProductQuestionAnswerId
  ) => Effect.Effect<ProductQuestionAnswer, Forbidden | NotFound, CurrentCaller>
}>()("feedback/ProductQuestions") {
  static readonly layer = Layer.effect(
    ProductQuestions,
    Effect.gen(function*() {
      const repo = yield* ProductQuestionRepository
      const emails = yield* EmailOutboxRepository
      const recorded = yield* IdempotencyRepository
      const organizations = yield* OrganizationRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const cursorKey = yield* CursorKey
      const events = makeEventRecorder(yield* EventOutbox, ids)

      /** The question, or NotFound. */
      const findQuestion = (organizationId: OrganizationId, id: ProductQuestionId, forUpdate = false) =>
        repo.findById(organizationId, id, { forUpdate }).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))
        )

      /** Each question include as data: its batched load and the value it gives one question (kernel/Includes.ts). */
      const questionIncludes = (
        organizationId: OrganizationId
      ): IncludeLoaders<ProductQuestionRecord, ProductQuestionInclude> => ({
        product: byKey(
          (q) => q.productId,
          (ids) =>
            Effect.map(
              repo.productsByIds(organizationId, ids as ReadonlyArray<ProductId>),
              (ps) => new Map(ps.map((p): [string, Product] => [p.id, p]))
            )
        ),
        customer: byKey(
          (q) => q.customerId,
          (ids) =>
            Effect.map(
              repo.customersByIds(organizationId, ids as ReadonlyArray<CustomerId>),
              (cs) => new Map(cs.map((c): [string, Customer] => [c.id, c]))
            )
        ),
        answers: byKey<ProductQuestionRecord, ReadonlyArray<ProductQuestionAnswer>>(
          (q) => q.id,
          (ids) =>
            Effect.map(repo.answersOf(organizationId, ids as ReadonlyArray<ProductQuestionId>), (answers) => {
              const byQuestion = new Map<string, Array<ProductQuestionAnswer>>()
              for (const a of answers) {
                const list = byQuestion.get(a.productQuestionId)
                if (list === undefined) byQuestion.set(a.productQuestionId, [a])
                else list.push(a)
              }
              return byQuestion
            }),
          []
        )
      })

      /** Adds the requested extras: one store read per include, however many questions. */
      const withIncludes = (
        organizationId: OrganizationId,
        questions: ReadonlyArray<ProductQuestionRecord>,
        include: ReadonlyArray<ProductQuestionInclude>
      ) =>
        attachIncludes<ProductQuestionRecord, ProductQuestionInclude, ProductQuestion>(
          questions,
          include,
          questionIncludes(organizationId),
          (q) => q
        )

      const withExtras = (
        organizationId: OrganizationId,
        question: ProductQuestionRecord,
        include: ReadonlyArray<ProductQuestionInclude>
      ) => Effect.map(withIncludes(organizationId, [question], include), ([q]) => q!)

      // -------------------------------------------------------------------------------------------------------------
      // Reads

      const list = Effect.fn("ProductQuestions.list")(function*(params: ProductQuestionListParams) {
        const caller = yield* requirePermission("reviews:read")
        const answered = parseAnswered(params.answered)
        // A cursor is bound to `answered` too: it is part of the endpoint name the cursor carries.
        const endpoint = {
          ...productQuestionListEndpoint,
          name: Result.isSuccess(answered) && answered.success !== undefined
            ? `${productQuestionListEndpoint.name}?answered=${answered.success}`
            : productQuestionListEndpoint.name
        }
        const request = parseListRequest(params, endpoint, { key: cursorKey, organizationId: caller.organizationId })
        if (Result.isFailure(answered) || Result.isFailure(request)) {
          return yield* InvalidRequest.of([
            ...(Result.isFailure(request) ? request.failure.issues : []),
            ...(Result.isFailure(answered) ? answered.failure.issues : [])
          ])
        }
        const page = yield* repo.list(caller.organizationId, request.success, answered.success)
        const data = yield* withIncludes(caller.organizationId, page.data, request.success.include)
        return { data, nextCursor: page.nextCursor }
      })

      const get = Effect.fn("ProductQuestions.get")(function*(id: ProductQuestionId, include?: IncludeParam) {
        const caller = yield* requirePermission("reviews:read")
        const includes = yield* includeOf(include)
        const question = yield* findQuestion(caller.organizationId, id)
        return yield* withExtras(caller.organizationId, question, includes)
      })

      const listAnswers = Effect.fn("ProductQuestions.listAnswers")(function*(id: ProductQuestionId) {
        const caller = yield* requirePermission("reviews:read")
        yield* findQuestion(caller.organizationId, id)
        const data = yield* repo.answersOf(caller.organizationId, [id])
        return { data }
      })

      // -------------------------------------------------------------------------------------------------------------
      // Writes

      const create = Effect.fn("ProductQuestions.create")(function*(input: CreateProductQuestion) {
        const caller = yield* requirePermission("reviews:write")
        const organizationId = caller.organizationId
        const askerEmail = input.askerEmail ?? null
        if (input.notifyByEmail === true && askerEmail === null) {
          return yield* InvalidRequest.single("body.notifyByEmail", "can be true only when askerEmail is given")
        }
        return yield* uow.transaction(Effect.gen(function*() {
          const issues: Array<RequestIssue> = []
          if ((yield* repo.productsByIds(organizationId, [input.productId])).length === 0) {
            issues.push({ path: "body.productId", message: "no product with this id exists in this organization" })
          }
          const customerId = input.customerId ?? null
          if (customerId !== null && (yield* repo.customersByIds(organizationId, [customerId])).length === 0) {
            issues.push({ path: "body.customerId", message: "no customer with this id exists in this organization" })
          }
          const siteId = input.siteId ?? null
          if (siteId !== null && !(yield* repo.siteExists(organizationId, siteId))) {
            issues.push({ path: "body.siteId", message: "no site with this id exists in this organization" })
          }
          if (issues.length > 0) return yield* InvalidRequest.of(issues)
          const at = yield* now
          const question: ProductQuestionRecord = {
            id: yield* nextIdFrom<ProductQuestionId>(ids),
            productId: input.productId,
            siteId,
            customerId,
            body: input.body,
            askerName: input.askerName ?? null,
            askerEmail,
            notifyByEmail: askerEmail !== null && (input.notifyByEmail ?? true),
            published: input.published ?? false,
            // Sending `published` at all is a moderation decision; without it the question waits in the queue.
            moderatedAt: input.published === undefined ? null : at,
            flagged: false,
            flags: [],
            instantAnswerId: null,
            answeredAt: null,
            notifiedAt: null,
            source: ADMIN_API_QUESTION_SOURCE,
            answerCount: 0,
            publishedAnswerCount: 0,
            metadata: input.metadata ?? {},
            createdAt: at,
            updatedAt: at
          }
          yield* repo.insert({ ...question, organizationId })
          yield* events.record(organizationId, "productQuestion.created", question)
          return question
        }))
      })

      const update = Effect.fn("ProductQuestions.update")(function*(
        id: ProductQuestionId,
        input: UpdateProductQuestion,
        include?: IncludeParam
      ) {
        const caller = yield* requirePermission("reviews:write")
        const organizationId = caller.organizationId
        const includes = yield* includeOf(include)
        const updated = yield* uow.transaction(Effect.gen(function*() {
          const current = yield* findQuestion(organizationId, id, true)
          if (!sentAnything(input)) return current
          const at = yield* now
          const next: ProductQuestionRecord = {
            ...current,
            published: input.published ?? current.published,
            moderatedAt: input.published === undefined ? current.moderatedAt : at,
            askerName: input.askerName === undefined ? current.askerName : input.askerName,
            metadata: input.metadata ?? current.metadata,
            updatedAt: at
          }
          yield* repo.update({ ...next, organizationId })
          yield* events.record(organizationId, "productQuestion.updated", next)
          return next
        }))
        return yield* withExtras(organizationId, updated, includes)
      })

      const deleteQuestion = Effect.fn("ProductQuestions.delete")(function*(id: ProductQuestionId) {
        const caller = yield* requirePermission("reviews:write")
        const organizationId = caller.organizationId
        return yield* uow.transaction(Effect.gen(function*() {
          const deleted = yield* repo.delete(organizationId, id).pipe(
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))
          )
          yield* emails.deleteForQuestion(organizationId, id)
          yield* eraseFromRecordedResponses(recorded, organizationId, {
            resource: "productQuestion",
            recordId: id,
            fields: ["askerEmail"]
          })
          yield* events.record(organizationId, "productQuestion.deleted", { ...deleted, askerEmail: null })
          return deleted
        }))
      })

      /**
       * Emails the asker when `answer` is the question's first published answer (`question` as it was before) and the
       * asker left an address. The outbox keeps one notice per question, so the asker hears once however answers change.
       */
      const notifyAskerOf = (
        organizationId: OrganizationId,
        question: ProductQuestionRecord,
        answer: ProductQuestionAnswer,
        at: Timestamp,
        knownOrganizationName?: string
      ) =>
        Effect.gen(function*() {
          if (!shouldNotifyAsker(question, answer)) return
          const organizationName = knownOrganizationName ??
            Option.match(yield* organizations.findById(organizationId), { onNone: () => "", onSome: (o) => o.name })
          const [product] = yield* repo.productsByIds(organizationId, [question.productId])
          const message = renderAnswerNotice({
            organizationName,
            productTitle: product?.title ?? null,
            productUrl: product?.url ?? null,
            question,
            answer
          })
          yield* emails.enqueue({
            id: yield* nextIdFrom<EmailNoticeId>(ids),
            organizationId,
            productQuestionId: question.id,
            productQuestionAnswerId: answer.id,
            recipient: question.askerEmail!,
            subject: message.subject,
            text: message.text,
            status: "pending",
            attempts: 0,
            nextAttemptAt: at,
            claimedBy: null,
            claimedAt: null,
            error: null,
            createdAt: at,
            finishedAt: null
          })
        })

      const createAnswer = Effect.fn("ProductQuestions.createAnswer")(function*(
        id: ProductQuestionId,
        input: CreateProductQuestionAnswer
      ) {
        const caller = yield* requirePermission("reviews:write")
        const organizationId = caller.organizationId
        return yield* uow.transaction(Effect.gen(function*() {
          // Locked: two concurrent first answers must not both count as first (and both email the asker).
          const question = yield* findQuestion(organizationId, id, true)
          const organization = yield* organizations.findById(organizationId).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.fail(NotFound.of("organization", organizationId)),
              onSome: Effect.succeed
            }))
          )
          const at = yield* now
          const published = input.published ?? true
          const answer: ProductQuestionAnswer = {
            id: yield* nextIdFrom<ProductQuestionAnswerId>(ids),
            productQuestionId: id,
            body: input.body,
            authorType: MERCHANT_AUTHOR_TYPE,
            authorName: input.authorName ?? defaultAuthorName(caller, organization.name),
            userId: caller._tag === "DashboardCaller" ? caller.userId : null,
            customerId: null,
            published,
            moderatedAt: null,
            flagged: false,
            flags: [],
            metadata: input.metadata ?? {},
            createdAt: at,
            updatedAt: at
          }
          yield* repo.insertAnswer({ ...answer, organizationId })
          yield* repo.update({
            ...question,
            organizationId,
            ...answerCounts(question, { answers: 1, published: published ? 1 : 0 }, at)
          })
          yield* notifyAskerOf(organizationId, question, answer, at, organization.name)
          yield* events.record(organizationId, "productQuestionAnswer.created", answer)
          return answer
        }))
      })

      const findAnswer = (organizationId: OrganizationId, id: ProductQuestionId, answerId: ProductQuestionAnswerId) =>
        repo.findAnswer(organizationId, id, answerId).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(NotFound.of("product question answer", answerId)),
            onSome: Effect.succeed
          }))
        )

      const updateAnswer = Effect.fn("ProductQuestions.updateAnswer")(function*(
        id: ProductQuestionId,
        answerId: ProductQuestionAnswerId,
        input: UpdateProductQuestionAnswer
      ) {
        const caller = yield* requirePermission("reviews:write")
        const organizationId = caller.organizationId
        return yield* uow.transaction(Effect.gen(function*() {
          // The question is locked first, as by createAnswer: counts and the first-answer notice are decided once.
          const question = yield* findQuestion(organizationId, id, true)
          const current = yield* findAnswer(organizationId, id, answerId)
          const next = { ...current, ...input }
          const changed = next.body !== current.body || next.published !== current.published ||
            next.authorName !== current.authorName ||
            (input.metadata !== undefined && JSON.stringify(input.metadata) !== JSON.stringify(current.metadata))
          if (!changed) return current
          const at = yield* now
          const answer: ProductQuestionAnswer = {
            ...next,
            moderatedAt: next.published === current.published ? current.moderatedAt : at,
            updatedAt: at
          }
          yield* repo.updateAnswer({ ...answer, organizationId })
          if (answer.published !== current.published) {
            yield* repo.update({
              ...question,
              organizationId,
              ...answerCounts(question, { answers: 0, published: answer.published ? 1 : -1 }, at)
            })
          }
          if (!current.published) yield* notifyAskerOf(organizationId, question, answer, at)
          yield* events.record(organizationId, "productQuestionAnswer.updated", answer)
          return answer
        }))
      })

      const deleteAnswer = Effect.fn("ProductQuestions.deleteAnswer")(
        function*(id: ProductQuestionId, answerId: ProductQuestionAnswerId) {
          const caller = yield* requirePermission("reviews:write")
          const organizationId = caller.organizationId
          return yield* uow.transaction(Effect.gen(function*() {
            const question = yield* findQuestion(organizationId, id, true)
            const answer = yield* findAnswer(organizationId, id, answerId)
            const at = yield* now
            yield* repo.deleteAnswer(organizationId, answerId)
            yield* repo.update({
              ...question,
              organizationId,
              ...answerCounts(question, { answers: -1, published: answer.published ? -1 : 0 }, at)
            })
            yield* events.record(organizationId, "productQuestionAnswer.deleted", answer)
            return answer
          }))
        }
      )

      return ProductQuestions.of({
        list,
        get,
        listAnswers,
        create,
        update,
        delete: deleteQuestion,
        createAnswer,
        updateAnswer,
        deleteAnswer
      })
    })
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Pure rules

/**
 * A question's counts after its answers change by `delta`. It is answered (`answeredAt` set) while at least one
 * published answer remains, since the moment it last became so; hiding or deleting the last one clears it.
 */
export const answerCounts = (
  question: Pick<ProductQuestionRecord, "answerCount" | "publishedAnswerCount" | "answeredAt">,
  delta: { readonly answers: number; readonly published: number },
  at: Timestamp
): Pick<ProductQuestionRecord, "answerCount" | "publishedAnswerCount" | "answeredAt" | "updatedAt"> => {
  const publishedAnswerCount = question.publishedAnswerCount + delta.published
  return {
    answerCount: question.answerCount + delta.answers,
    publishedAnswerCount,
    answeredAt: publishedAnswerCount === 0 ? null : question.answeredAt ?? at,
    updatedAt: at
  }
}

/** `answered`: `true`, `false` (as a query string or a boolean), or absent/empty for both. */
export const parseAnswered = (raw: string | boolean | undefined): Result.Result<AnsweredFilter, InvalidRequest> =>
  typeof raw === "boolean"
    ? Result.succeed(raw)
    : raw === undefined || raw === ""
    ? Result.succeed(undefined)
    : raw === "true"
    ? Result.succeed(true)
    : raw === "false"
    ? Result.succeed(false)
    : Result.fail(InvalidRequest.single("answered", "must be true or false, or be omitted to list both"))

const includeOf = (raw: IncludeParam) =>
  Effect.fromResult(parseInclude<ProductQuestionInclude>(raw, productQuestionIncludeNames))

const notFound = (id: string) => NotFound.of("product question", id)

const sentAnything = (input: UpdateProductQuestion): boolean =>
  input.published !== undefined || "askerName" in input || input.metadata !== undefined

/** Who an answer is shown as written by when the body names nobody: the dashboard user, else the organization. */
const defaultAuthorName = (caller: Caller, organizationName: string): string =>
  caller._tag === "DashboardCaller" ? caller.name : organizationName
