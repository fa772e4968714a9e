/**
 * Surveys (docs/DECISIONS.md §48): the review requests survey flows send, one per order and flow, with their steps
 * (when each is due, how it ended). Flows enroll orders on their trigger; `POST /surveys` asks for a review by hand.
 */
import { Kernel, Surveys } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { listQuery, pageOf } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc } from "../Describe.ts"

const params = { id: Kernel.SurveyId }

export class SurveysApi extends HttpApiGroup.make("surveys")
  .add(
    HttpApiEndpoint.get("list", "/surveys", {
      query: listQuery(Surveys.surveyListEndpoint),
      success: pageOf(Surveys.Survey),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List surveys",
        "The review requests your survey flows made, a page at a time; `filter` on `status`, `flowId`, `createdAt`, `updatedAt`, `order.id` and `customer.email`, `search` the customer's email."
      ))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.post("create", "/surveys", {
      payload: Surveys.SurveyCreate,
      success: Surveys.Survey.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Request a review",
        "Sends the order's review request through a flow (default: the newest active one), starting now, whatever the flow's trigger and condition. An order has at most one survey per flow (409 otherwise). A customer who opted out of email gets a `skipped` survey."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.get("get", "/surveys/:id", {
      params,
      success: Surveys.Survey,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc("Get a survey", "One survey with its products and steps."))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.delete("delete", "/surveys/:id", {
      params,
      success: Surveys.Survey,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(
        doc(
          "Delete a survey",
          "Deletes the survey: nothing more is sent for it. Answers it as it was; fires `survey.deleted`."
        )
      )
      .pipe(requires("reviews:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Surveys",
    description: "Review requests: one per order and survey flow, with each step's due time and outcome."
  }))
{}
