/** Handlers of the product questions group: one call into the `ProductQuestions` service per endpoint. */
import { Questions } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"

export const ProductQuestionHandlers = HttpApiBuilder.group(
  AdminApi,
  "productQuestions",
  Effect.fn(function*(handlers) {
    const questions = yield* Questions.ProductQuestions
    return handlers
      .handle("list", ({ query }) => questions.list(query))
      .handle("create", ({ payload }) => questions.create(payload))
      .handle("get", ({ params, query }) => questions.get(params.id, query.include))
      .handle("update", ({ params, payload, query }) => questions.update(params.id, payload, query.include))
      .handle("delete", ({ params }) => questions.delete(params.id))
      .handle("listAnswers", ({ params }) => questions.listAnswers(params.id))
      .handle("createAnswer", ({ params, payload }) => questions.createAnswer(params.id, payload))
      .handle("updateAnswer", ({ params, payload }) => questions.updateAnswer(params.id, params.answerId, payload))
      .handle("deleteAnswer", ({ params }) => questions.deleteAnswer(params.id, params.answerId))
  })
).pipe(capturingOnly(Questions.ProductQuestions))
