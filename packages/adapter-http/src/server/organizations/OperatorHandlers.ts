/** Handlers of the operator API: one call into the core's `Organizations` service per endpoint. */
import { Organizations } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OperatorApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"

export const OperatorHandlers = HttpApiBuilder.group(
  OperatorApi,
  "operator",
  Effect.fn(function*(handlers) {
    const organizations = yield* Organizations.Organizations
    return handlers
      .handle("createOrganization", ({ payload }) => organizations.createOrganization(payload))
      .handle("findOrganizations", ({ query }) =>
        organizations.findByExternalId(query.externalId).pipe(
          Effect.map((organization) => ({ data: [organization] })),
          Effect.catchTag("NotFound", () => Effect.succeed({ data: [] }))
        ))
      .handle("updateOrganization", ({ params, payload }) => organizations.updateOrganization(params.id, payload))
      .handle("listKeys", ({ params }) => Effect.map(organizations.listSecretKeys(params.id), (data) => ({ data })))
      .handle("issueKey", ({ params, payload }) => organizations.issueSecretKey(params.id, payload))
      .handle("revokeKey", ({ params }) => organizations.revokeSecretKey(params.id, params.keyId))
      .handle("createPublishableKey", ({ params }) => organizations.createPublishableKey(params.id))
      .handle(
        "createIntegration",
        ({ params, payload }) => organizations.createIntegration(params.id, payload.platform)
      )
      .handle("createLoyaltyProgram", ({ params, payload }) => organizations.createLoyaltyProgram(params.id, payload))
      .handle("createWishlist", ({ params, payload }) => organizations.createWishlist(params.id, payload))
  })
).pipe(capturingOnly(Organizations.Organizations))
