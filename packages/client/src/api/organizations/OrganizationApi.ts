/** `GET /organization`: the caller's organization, including the plan the rate limit is measured against. */
import { Organization } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFoundResponse } from "../ErrorResponses.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

export class OrganizationApi extends HttpApiGroup.make("organization")
  .add(
    HttpApiEndpoint.get("get", "/organization", { success: Organization, error: NotFoundResponse }).pipe(
      requires("settings:read")
    )
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({ title: "Organization", description: "The caller's organization and plan." }))
{}
