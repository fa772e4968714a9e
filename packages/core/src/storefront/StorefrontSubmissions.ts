/**
 * Shopper submissions through the storefront (shared §18, docs/DECISIONS.md §55): a question lands unpublished in the
 * same moderation queue as the admin API's, with `source: "widget"`; an answer to a published question lands
 * unpublished with `authorType: "customer"`. Each fires its `…created` event in the same unit of work.
 */
import { Context, Effect, Layer, Option } from "effect"
import { CatalogRepository } from "../catalog/CatalogRepository.ts"
import { customerListEndpoint } from "../catalog/CatalogLists.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { InvalidRequest, NotFound } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { ProductQuestionAnswerId, ProductQuestionId } from "../kernel/Ids.ts"
import { now } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import type { ProductQuestionAnswer, ProductQuestionRecord } from "../questions/ProductQuestion.ts"
import { ProductQuestionRepository } from "../questions/ProductQuestionRepository.ts"
import { answerCounts } from "../questions/ProductQuestions.ts"
import { makeShopperLookups } from "./ShopperLookups.ts"
import { CurrentStorefrontCaller } from "./StorefrontCaller.ts"
import {
  CUSTOMER_AUTHOR_TYPE,
  type StorefrontAnswerSubmission,
  type StorefrontQuestionSubmission,
  type StorefrontSubmitted,
  WIDGET_QUESTION_SOURCE
} from "./StorefrontRequests.ts"

export class StorefrontSubmissions extends Context.Service<StorefrontSubmissions, {
  /** `POST /storefront/questions` → 202 `{id}`. */
  readonly askQuestion: (
    input: StorefrontQuestionSubmission
  ) => Effect.Effect<StorefrontSubmitted, InvalidRequest, CurrentStorefrontCaller>
  /** `POST /storefront/questions/{id}/answers` → 202 `{id}`; only on a published question (else 404). */
  readonly answerQuestion: (
    questionId: ProductQuestionId,
    input: StorefrontAnswerSubmission
  ) => Effect.Effect<StorefrontSubmitted, NotFound, CurrentStorefrontCaller>
}>()("feedback/StorefrontSubmissions") {
  static readonly layer = Layer.effect(
    StorefrontSubmissions,
    Effect.gen(function*() {
      const questions = yield* ProductQuestionRepository
      const catalog = yield* CatalogRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const key = yield* CursorKey
      const events = makeEventRecorder(yield* EventOutbox, ids)

      const { firstWhere, productOf } = makeShopperLookups(catalog, key)

      const askQuestion = Effect.fn("StorefrontSubmissions.askQuestion")(
        function*(input: StorefrontQuestionSubmission) {
          const { organization } = yield* CurrentStorefrontCaller
          const askerEmail = input.askerEmail ?? null
          if (input.notifyByEmail === true && askerEmail === null) {
            return yield* InvalidRequest.single("body.notifyByEmail", "can be true only when askerEmail is given")
          }
          return yield* uow.transaction(Effect.gen(function*() {
            const productId = yield* productOf(organization.id, input)
            const at = yield* now
            const question: ProductQuestionRecord = {
              id: yield* nextIdFrom<ProductQuestionId>(ids),
              productId,
              siteId: null,
              customerId: null,
              body: input.body,
              askerName: input.askerName ?? null,
              askerEmail,
              notifyByEmail: askerEmail !== null && (input.notifyByEmail ?? true),
              published: false,
              moderatedAt: null,
              flagged: false,
              flags: [],
              instantAnswerId: null,
              answeredAt: null,
              notifiedAt: null,
              source: WIDGET_QUESTION_SOURCE,
              answerCount: 0,
              publishedAnswerCount: 0,
              metadata: {},
              createdAt: at,
              updatedAt: at
            }
            yield* questions.insert({ ...question, organizationId: organization.id })
            yield* events.record(organization.id, "productQuestion.created", question)
            return { id: question.id }
          }))
        }
      )

      const answerQuestion = Effect.fn("StorefrontSubmissions.answerQuestion")(
        function*(questionId: ProductQuestionId, input: StorefrontAnswerSubmission) {
          const { organization } = yield* CurrentStorefrontCaller
          const organizationId = organization.id
          return yield* uow.transaction(Effect.gen(function*() {
            const found = yield* questions.findById(organizationId, questionId, { forUpdate: true })
            // An unpublished question is as absent to a shopper as a missing one.
            if (Option.isNone(found) || !found.value.published) {
              return yield* NotFound.of("product question", questionId)
            }
            const question = found.value
            const customer = input.email === undefined
              ? undefined
              : yield* firstWhere(
                organizationId,
                customerListEndpoint,
                { email: input.email.toLowerCase() },
                "body.email",
                (r) => catalog.listCustomers(organizationId, r)
              ).pipe(Effect.orElseSucceed(() => undefined))
            const at = yield* now
            const answer: ProductQuestionAnswer = {
              id: yield* nextIdFrom<ProductQuestionAnswerId>(ids),
              productQuestionId: question.id,
              body: input.body,
              authorType: CUSTOMER_AUTHOR_TYPE,
              authorName: input.authorName,
              userId: null,
              customerId: customer?.id ?? null,
              published: false,
              moderatedAt: null,
              flagged: false,
              flags: [],
              metadata: {},
              createdAt: at,
              updatedAt: at
            }
            yield* questions.insertAnswer({ ...answer, organizationId })
            yield* questions.update({
              ...question,
              organizationId,
              ...answerCounts(question, { answers: 1, published: 0 }, at)
            })
            yield* events.record(organizationId, "productQuestionAnswer.created", answer)
            return { id: answer.id }
          }))
        }
      )

      return StorefrontSubmissions.of({ askQuestion, answerQuestion })
    })
  )
}
