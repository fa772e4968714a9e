/** Handlers of the product questions group: thin calls into the core's use-cases. */
import {
  createProductQuestion,
  createProductQuestionAnswer,
  CursorKey,
  deleteProductQuestion,
  EmailOutboxRepository,
  EventOutbox,
  getProductQuestion,
  IdGenerator,
  listProductQuestionAnswers,
  listProductQuestions,
  OrganizationRepository,
  ProductQuestionRepository,
  UnitOfWork,
  updateProductQuestion
} from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../api/Api.ts"

type Services =
  | ProductQuestionRepository
  | EmailOutboxRepository
  | OrganizationRepository
  | EventOutbox
  | IdGenerator
  | UnitOfWork
  | CursorKey

export const ProductQuestionHandlers = HttpApiBuilder.group(AdminApi, "productQuestions", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Services>()
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, services) as Effect.Effect<A, E, Exclude<R, Services>>
  return handlers
    .handle("list", ({ query }) => run(listProductQuestions(query)))
    .handle("create", ({ payload }) => run(createProductQuestion(payload)))
    .handle("get", ({ params, query }) => run(getProductQuestion(params.id, query.include)))
    .handle("update", ({ params, payload, query }) => run(updateProductQuestion(params.id, payload, query.include)))
    .handle("delete", ({ params }) => run(deleteProductQuestion(params.id)))
    .handle("listAnswers", ({ params }) => run(listProductQuestionAnswers(params.id)))
    .handle("createAnswer", ({ params, payload }) => run(createProductQuestionAnswer(params.id, payload)))
}))
