/**
 * Surveys (docs/DECISIONS.md §48): the review requests survey flows send, one per order and flow, with their steps
 * (when each is due, how it ended). Flows enroll orders on their trigger; `POST /surveys` asks for a review by hand.
 */
import { Kernel, Surveys } from "@feedback/core"
import { HttpApiGroup } from "effect/http-api"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { recordEndpoints } from "../RecordEndpoints.ts"
import { SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

const surveys = recordEndpoints({
  path: "/surveys",
  id: Kernel.SurveyId,
  schema: Surveys.Survey,
  read: "reviews:read",
  write: "reviews:write"
})

export class SurveysApi extends HttpApiGroup.make("surveys")
  .add(
    surveys.list(
      Surveys.surveyListEndpoint,
      doc(
        "List surveys",
        "The review requests your survey flows made, a page at a time; `filter` on `status`, `flowId`, `createdAt`, `updatedAt`, `order.id` and `customer.email`, `search` the customer's email."
      )
    ),
    surveys.create(
      Surveys.SurveyCreate,
      [ConflictResponse, InvalidRequestResponse],
      doc(
        "Request a review",
        "Sends the order's review request through a flow (default: the newest active one), starting now, whatever the flow's trigger and condition. An order has at most one survey per flow (409 otherwise). A customer who opted out of email gets a `skipped` survey."
      )
    ),
    surveys.get(doc("Get a survey", "One survey with its products and steps.")),
    surveys.delete(
      [NotFoundResponse, InvalidRequestResponse],
      doc(
        "Delete a survey",
        "Deletes the survey: nothing more is sent for it. Answers it as it was; fires `survey.deleted`."
      )
    )
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Surveys",
    "Review requests: one per order and survey flow, with each step's due time and outcome."
  ))
{}
