/**
 * Use-cases of surveys (docs/DECISIONS.md §48) as the `Surveys` service: read and list them, request a review by hand
 * (`POST /surveys`), delete one (nothing more is sent; `survey.deleted`). Enrolment on order triggers happens in the
 * order's own unit of work (`SurveyEnrolment.ts`), and sending in the background (`SurveySending.ts`).
 */
import { Context, Effect, Layer, Option } from "effect"
import { type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { Conflict, type Forbidden, InvalidRequest, NotFound } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import { IdGenerator } from "../kernel/IdGenerator.ts"
import type { SurveyId } from "../kernel/Ids.ts"
import { listRequestWith, type ListParams, type Page } from "../kernel/ListQuery.ts"
import { now } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import { OrderRepository } from "../orders/OrderRepository.ts"
import { ReviewAutomationRepository } from "../setup/ReviewAutomationRepository.ts"
import type { Survey } from "./Survey.ts"
import { makeSurveyEnrolment } from "./SurveyEnrolment.ts"
import { SurveyRepository } from "./SurveyRepository.ts"
import { type SurveyCreate, surveyListEndpoint } from "./SurveyRequests.ts"

export class Surveys extends Context.Service<Surveys, {
  readonly list: (params: ListParams) => Effect.Effect<Page<Survey>, Forbidden | InvalidRequest, CurrentCaller>
  readonly get: (id: SurveyId) => Effect.Effect<Survey, Forbidden | NotFound, CurrentCaller>
  /**
   * `POST /surveys`: the order's review request through the flow (default the newest active one), starting now,
   * whatever the flow's trigger and condition. A Conflict when the order already has a survey of that flow.
   */
  readonly create: (input: SurveyCreate) => Effect.Effect<Survey, Forbidden | InvalidRequest | Conflict, CurrentCaller>
  /** `DELETE /surveys/{id}`: answers the deleted survey; nothing more is sent for it. */
  readonly delete: (id: SurveyId) => Effect.Effect<Survey, Forbidden | NotFound, CurrentCaller>
}>()("feedback/Surveys") {
  static readonly layer = Layer.effect(
    Surveys,
    Effect.gen(function*() {
      const repo = yield* SurveyRepository
      const orders = yield* OrderRepository
      const automation = yield* ReviewAutomationRepository
      const uow = yield* UnitOfWork
      const cursorKey = yield* CursorKey
      const events = makeEventRecorder(yield* EventOutbox, yield* IdGenerator)
      const enrolment = yield* makeSurveyEnrolment

      const list = Effect.fn("Surveys.list")(function*(params: ListParams) {
        const { organizationId } = yield* requirePermission("reviews:read")
        const request = yield* listRequestWith(cursorKey, params, surveyListEndpoint, organizationId)
        return yield* repo.listSurveys(organizationId, request)
      })

      const get = Effect.fn("Surveys.get")(function*(id: SurveyId) {
        const { organizationId } = yield* requirePermission("reviews:read")
        return yield* repo.findSurvey(organizationId, id).pipe(Effect.flatMap(Option.match({
          onNone: () => Effect.fail(NotFound.of("survey", id)),
          onSome: Effect.succeed
        })))
      })

      const create = Effect.fn("Surveys.create")(function*(input: SurveyCreate) {
        const { organizationId } = yield* requirePermission("reviews:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const order = yield* orders.findOrder(organizationId, input.orderId)
          if (Option.isNone(order)) {
            return yield* InvalidRequest.single(
              "body.orderId",
              `no order with id ${input.orderId} exists in this organization`
            )
          }
          const flows = yield* automation.listSurveyFlows(organizationId)
          const flow = input.flowId === undefined
            ? flows.filter((f) => f.isActive).at(-1)
            : flows.find((f) => f.id === input.flowId)
          if (flow === undefined) {
            return yield* input.flowId === undefined
              ? InvalidRequest.single("body.flowId", "no survey flow is active; name the flow to send through")
              : InvalidRequest.single(
                "body.flowId",
                `no survey flow with id ${input.flowId} exists in this organization`
              )
          }
          const created = yield* enrolment.enrollManually(organizationId, flow, order.value, yield* now)
          if (Option.isNone(created)) {
            return yield* new Conflict({
              message: "This order already has a survey of that flow; fetch it with GET /surveys instead."
            })
          }
          return created.value.survey
        }))
      })

      const deleteSurvey = Effect.fn("Surveys.delete")(function*(id: SurveyId) {
        const { organizationId } = yield* requirePermission("reviews:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const deleted = yield* repo.deleteSurvey(organizationId, id)
          if (Option.isNone(deleted)) return yield* NotFound.of("survey", id)
          yield* events.record(organizationId, "survey.deleted", deleted.value)
          return deleted.value
        }))
      })

      return Surveys.of({ list, get, create, delete: deleteSurvey })
    })
  )
}
