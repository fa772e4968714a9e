/** Handlers of the review automation group (templates, flows, review settings): one call into the `ReviewAutomation` service per endpoint. */
import { AdminApi } from "@feedback/client/effect"
import { Setup } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { capturingOnly } from "../HandlerGroups.ts"

export const AutomationHandlers = HttpApiBuilder.group(
  AdminApi,
  "automation",
  Effect.fn(function*(handlers) {
    const automation = yield* Setup.ReviewAutomation
    return handlers
      .handle("listEmailTemplates", ({ query }) => automation.listEmailTemplates(query))
      .handle("getEmailTemplate", ({ params }) => automation.getEmailTemplate(params.id))
      .handle("updateEmailTemplate", ({ params, payload }) => automation.updateEmailTemplate(params.id, payload))
      .handle("deleteEmailTemplate", ({ params }) => automation.deleteEmailTemplate(params.id))
      .handle("listSurveyFlows", ({ query }) => automation.listSurveyFlows(query))
      .handle("getSurveyFlow", ({ params }) => automation.getSurveyFlow(params.id))
      .handle("updateSurveyFlow", ({ params, payload }) => automation.updateSurveyFlow(params.id, payload))
      .handle("deleteSurveyFlow", ({ params }) => automation.deleteSurveyFlow(params.id))
      .handle("getReviewSettings", () => automation.getReviewSettings())
      .handle("updateReviewSettings", ({ payload }) => automation.updateReviewSettings(payload))
  })
).pipe(capturingOnly(Setup.ReviewAutomation))
