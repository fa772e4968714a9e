/** Handlers of the surveys group: one call into the `Surveys` service per endpoint. */
import { Surveys } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"

export const SurveysHandlers = HttpApiBuilder.group(
  AdminApi,
  "surveys",
  Effect.fn(function*(handlers) {
    const surveys = yield* Surveys.Surveys
    return handlers
      .handle("list", ({ query }) => surveys.list(query))
      .handle("create", ({ payload }) => surveys.create(payload))
      .handle("get", ({ params }) => surveys.get(params.id))
      .handle("delete", ({ params }) => surveys.delete(params.id))
  })
).pipe(capturingOnly(Surveys.Surveys))
