/**
 * The operator API (docs/DECISIONS.md §2): provisioning that the admin API cannot do. Served under `/operator` only when
 * OPERATOR_TOKEN is set, authenticated with that token, never rate limited, and kept out of the admin API's OpenAPI
 * document (it is a separate HttpApi with its own document at `/operator/openapi.json`).
 */
import { Kernel, Organizations } from "@feedback/core"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { OperatorAuth, RequestValidation } from "../Security.ts"

const orgParams = { id: Kernel.OrganizationId }

/** Names are stored text (`docs/SECURITY.md`): 1..200 characters, no NUL or lone surrogate. */
const Name = Kernel.BoundedText(200, 1)

const CreateOrganization = Schema.Struct({
  name: Name,
  apiRequestsPerMinute: Schema.optionalKey(Organizations.ApiRequestsPerMinute),
  /** The host's own id of the tenant, unique among organizations (docs/DECISIONS.md §65). */
  externalId: Schema.optionalKey(Organizations.ExternalOrganizationId)
})
const LookUpOrganizations = Schema.Struct({ externalId: Organizations.ExternalOrganizationId })
const IssueSecretKey = Schema.Struct({
  permissions: Kernel.BoundedArray(Kernel.Permission, 100),
  name: Schema.optionalKey(Name)
})
const CreateIntegration = Schema.Struct({ platform: Organizations.IntegrationPlatform })
const CreateLoyaltyProgram = Schema.Struct({
  siteId: Schema.optionalKey(Schema.NullOr(Kernel.SiteId)),
  status: Organizations.LoyaltyProgramStatus
})
const CreateWishlist = Schema.Struct({ customerId: Schema.optionalKey(Schema.NullOr(Kernel.CustomerId)) })
/** The plan change and the `externalId`: only sent fields change; `null` removes a loyalty allowance or the id. */
const UpdateOrganization = Organizations.OrganizationPatch

const errors = [InvalidRequestResponse, NotFoundResponse] as const
const writeErrors = [InvalidRequestResponse, NotFoundResponse, ConflictResponse] as const

export class OperatorGroup extends HttpApiGroup.make("operator")
  .add(
    HttpApiEndpoint.post("createOrganization", "/organizations", {
      payload: CreateOrganization,
      success: Organizations.Organization.pipe(HttpApiSchema.status(201)),
      error: writeErrors
    }),
    // A lookup, not a listing: the organization with that `externalId`, as a list of at most one.
    HttpApiEndpoint.get("findOrganizations", "/organizations", {
      query: LookUpOrganizations,
      success: Schema.Struct({ data: Schema.Array(Organizations.Organization) }),
      error: errors
    }),
    HttpApiEndpoint.patch("updateOrganization", "/organizations/:id", {
      params: orgParams,
      payload: UpdateOrganization,
      success: Organizations.Organization,
      error: writeErrors
    }),
    HttpApiEndpoint.get("listKeys", "/organizations/:id/keys", {
      params: orgParams,
      success: Schema.Struct({ data: Schema.Array(Organizations.SecretKeyView) }),
      error: errors
    }),
    HttpApiEndpoint.post("issueKey", "/organizations/:id/keys", {
      params: orgParams,
      payload: IssueSecretKey,
      success: Organizations.IssuedSecretKey.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.delete("revokeKey", "/organizations/:id/keys/:keyId", {
      params: { id: Kernel.OrganizationId, keyId: Kernel.SecretKeyId },
      success: Organizations.SecretKeyView,
      error: errors
    }),
    HttpApiEndpoint.post("createPublishableKey", "/organizations/:id/publishable-keys", {
      params: orgParams,
      success: Organizations.IssuedPublishableKey.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.post("createIntegration", "/organizations/:id/integrations", {
      params: orgParams,
      payload: CreateIntegration,
      success: Organizations.Integration.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.post("createLoyaltyProgram", "/organizations/:id/loyalty-programs", {
      params: orgParams,
      payload: CreateLoyaltyProgram,
      success: Organizations.LoyaltyProgram.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.post("createWishlist", "/organizations/:id/wishlists", {
      params: orgParams,
      payload: CreateWishlist,
      success: Organizations.Wishlist.pipe(HttpApiSchema.status(201)),
      error: errors
    })
  )
  .middleware(OperatorAuth)
  .prefix("/operator")
{}

export class OperatorApi extends HttpApi.make("operator-api")
  .add(OperatorGroup)
  .middleware(RequestValidation)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({ title: "Feedback platform operator API", version: "0.1.0" }))
{}
