/** Handlers of the operator API: thin calls into the core's provisioning use-cases. */
import {
  IdGenerator,
  OrganizationRepository,
  Provisioning,
  SecretKeyRepository,
  StorefrontRecordRepository,
  UnitOfWork
} from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OperatorApi } from "../../api/organizations/OperatorApi.ts"

export const OperatorHandlers = HttpApiBuilder.group(OperatorApi, "operator", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<
    OrganizationRepository | SecretKeyRepository | StorefrontRecordRepository | UnitOfWork | IdGenerator
  >()
  const run = <A, E>(effect: Effect.Effect<A, E, OrganizationRepository | SecretKeyRepository | StorefrontRecordRepository | UnitOfWork | IdGenerator>) =>
    Effect.provide(effect, services)
  return handlers
    .handle("createOrganization", ({ payload }) => run(Provisioning.createOrganization(payload)))
    .handle("updateOrganization", ({ params, payload }) =>
      run(Provisioning.setApiRequestsPerMinute(params.id, payload.apiRequestsPerMinute)))
    .handle("listKeys", ({ params }) => run(Effect.map(Provisioning.listSecretKeys(params.id), (data) => ({ data }))))
    .handle("issueKey", ({ params, payload }) => run(Provisioning.issueSecretKey(params.id, payload)))
    .handle("revokeKey", ({ params }) => run(Provisioning.revokeSecretKey(params.id, params.keyId)))
    .handle("createPublishableKey", ({ params }) => run(Provisioning.createPublishableKey(params.id)))
    .handle("createIntegration", ({ params, payload }) => run(Provisioning.createIntegration(params.id, payload.platform)))
    .handle("createLoyaltyProgram", ({ params, payload }) => run(Provisioning.createLoyaltyProgram(params.id, payload)))
    .handle("createWishlist", ({ params, payload }) => run(Provisioning.createWishlist(params.id, payload)))
}))
