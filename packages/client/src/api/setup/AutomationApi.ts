/**
 * The review automation as editable records (docs/DECISIONS.md §13): the email templates and survey flows that the
 * guided reviews setup creates, listed newest first, read, edited (only sent fields change) and deleted.
 */
import { Kernel, Setup } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { doc, docGroup } from "../Describe.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { pageQuery } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

const template = { id: Kernel.EmailTemplateId }
const flow = { id: Kernel.SurveyFlowId }
export class AutomationApi extends HttpApiGroup.make("automation")
  .add(
    HttpApiEndpoint.get("listEmailTemplates", "/email-templates", {
      query: pageQuery,
      success: Setup.EmailTemplateList,
      error: InvalidRequestResponse
    })
      .annotateMerge(
        doc("List email templates", "The organization's email templates, newest first, with a cursor to the next page.")
      )
      .pipe(requires("settings:read")),
    HttpApiEndpoint.get("getEmailTemplate", "/email-templates/:id", {
      params: template,
      success: Setup.EmailTemplate,
      error: NotFoundResponse
    })
      .annotateMerge(doc("Get an email template", "One email template by id."))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.patch("updateEmailTemplate", "/email-templates/:id", {
      params: template,
      payload: Setup.EmailTemplatePatch,
      success: Setup.EmailTemplate,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Edit an email template",
        "Changes `name`, `subject` or `body`; only sent fields change. `subject` and `body` are Liquid templates (see the " +
          "template variables in docs/EMAILS.md): one that does not parse, includes another template or nests blocks " +
          "more than 20 deep is a 400 naming `body.subject` or `body.body`. Fires `emailTemplate.updated`, unless nothing changed."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.delete("deleteEmailTemplate", "/email-templates/:id", {
      params: template,
      success: Setup.EmailTemplate,
      error: [NotFoundResponse, ConflictResponse]
    })
      .annotateMerge(doc(
        "Delete an email template",
        "Deletes the template and returns it as it was; fires `emailTemplate.deleted`. A template that a survey flow's step " +
          "sends is a 409 naming the flows: change or delete those flows first."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.get("listSurveyFlows", "/survey-flows", {
      query: pageQuery,
      success: Setup.SurveyFlowList,
      error: InvalidRequestResponse
    })
      .annotateMerge(
        doc(
          "List survey flows",
          "The organization's survey flows with their steps, newest first, with a cursor to the next page."
        )
      )
      .pipe(requires("settings:read")),
    HttpApiEndpoint.get("getSurveyFlow", "/survey-flows/:id", {
      params: flow,
      success: Setup.SurveyFlow,
      error: NotFoundResponse
    })
      .annotateMerge(doc("Get a survey flow", "One survey flow with its steps in position order."))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.patch("updateSurveyFlow", "/survey-flows/:id", {
      params: flow,
      payload: Setup.SurveyFlowPatch,
      success: Setup.SurveyFlow,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Edit a survey flow",
        "Changes `name`, `isActive`, `triggerEvent`, `condition`, `metadata` or `steps`; only sent fields change, and " +
          "`steps` and `metadata` are replaced wholesale. A `wait` step needs `waitSeconds` (0 to 31,536,000), an `email` " +
          "step the `emailTemplateId` of a template of this organization; positions are distinct. Switching every flow " +
          "off turns `hasActiveSurveyFlow` off. Fires `surveyFlow.updated`, unless nothing changed."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.delete("deleteSurveyFlow", "/survey-flows/:id", {
      params: flow,
      success: Setup.SurveyFlow,
      error: NotFoundResponse
    })
      .annotateMerge(
        doc(
          "Delete a survey flow",
          "Deletes the flow with its steps and returns it as it was; fires `surveyFlow.deleted`."
        )
      )
      .pipe(requires("settings:write")),
    HttpApiEndpoint.get("getReviewSettings", "/review-settings", { success: Setup.ReviewSettings })
      .annotateMerge(doc(
        "Get the review settings",
        "Whether new reviews are published without moderation (`autoPublish`), from which rating (`autoPublishMinRating`, " +
          "1 to 5) and whether only verified buyers' (`autoPublishVerifiedOnly`). An organization that never changed them " +
          "reads the defaults: off, 4, false."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.patch("updateReviewSettings", "/review-settings", {
      payload: Setup.ReviewSettingsPatch,
      success: Setup.ReviewSettings,
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Change the review settings",
        "Changes `autoPublish`, `autoPublishMinRating` (1 to 5) or `autoPublishVerifiedOnly`; only sent fields change. " +
          "Answers the settings after the change. The guided setup writes the first two."
      ))
      .pipe(requires("settings:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Review automation",
    "The email templates and survey flows that send review requests, ordinary records editable after the guided " +
      "setup creates them, and the review settings (auto-publish)."
  ))
{}
