/** `GET /organization`: the caller's organization, including the plan the rate limit is measured against. */
import { Organizations } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { NotFoundResponse } from "../ErrorResponses.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

export class OrganizationApi extends HttpApiGroup.make("organization")
  .add(
    HttpApiEndpoint.get("get", "/organization", { success: Organizations.Organization, error: NotFoundResponse })
      .annotateMerge(doc(
        "Get your organization",
        "The organization the key belongs to, with its plan: `plan.apiRequestsPerMinute` is the rate limit every key of the organization shares."
      ))
      .pipe(requires("settings:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Organization", "The caller's organization and plan."))
{}
