/**
 * Organization setup (spec "Organization setup"): the setup state, the merchant's decision about an area, and the
 * guided reviews setup. Bodies are strict like every body of the API: an unknown field, also inside `data`, is a
 * 400 that names it (`body.data.delaydays`).
 */
import { Setup } from "@feedback/core"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { doc, docGroup } from "../Describe.ts"
import { ConflictResponse, InvalidRequestResponse } from "../ErrorResponses.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

/** Body of POST /organization/setup/reviews: the answers, each optional with its default (docs/DECISIONS.md §8). */
export const ReviewsSetupBody = Schema.Struct({ data: Setup.ReviewsSetupAnswers }).annotate({
  identifier: "ReviewsSetupBody"
})

export class SetupApi extends HttpApiGroup.make("setup")
  .add(
    HttpApiEndpoint.get("get", "/organization/setup", { success: Setup.SetupState })
      .annotateMerge(doc(
        "Get the setup state",
        "Which areas of your account are set up, dismissed or still open, each with when that was decided: use it to " +
          "show a setup checklist. An area whose records say it is running is recorded as completed the first time it is seen."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.patch("update", "/organization/setup", { payload: Setup.SetupPatch, success: Setup.SetupState })
      .annotateMerge(doc(
        "Record a setup decision",
        "Records an outcome on one area and answers the state after it. Every outcome is " +
          "irreversible and keeps its first time; other areas are unchanged."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.post("setupReviews", "/organization/setup/reviews", {
      payload: ReviewsSetupBody,
      success: Setup.ReviewsSetupResult.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Set up review requests",
        "Creates the review-request email (and a reminder when asked for), an active survey flow that " +
          "sends them on the chosen order event, and writes `autoPublish` and `autoPublishMinRating` into the review " +
          "settings (`GET /review-settings`), in one transaction. Once: while the flow it created is active, calling " +
          "it again is a 409 naming that flow (edit it, or deactivate or delete it to start over)."
      ))
      .pipe(requires("settings:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Organization setup",
    "Which areas still need setting up, the merchant's decisions about them, and guided reviews setup."
  ))
{}
