/**
 * Handlers of the foundation's groups: system and organization. `GET /organization`, the cheapest authenticated
 * request, answers the text its schema encoded for the same organization value before (`encodedOnceJsonResponse`).
 */
import { Kernel, Organizations } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"
import { encodedOnceJsonResponse } from "../TrustedEncoder.ts"

const organizationResponse = encodedOnceJsonResponse(Organizations.Organization)

export const SystemHandlers = HttpApiBuilder.group(
  AdminApi,
  "system",
  Effect.fn(function*(handlers) {
    const store = yield* Kernel.StoreHealth
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () => Effect.as(store.check, { status: "ok" as const }))
  })
).pipe(capturingOnly(Kernel.StoreHealth))

export const OrganizationHandlers = HttpApiBuilder.group(
  AdminApi,
  "organization",
  Effect.fn(function*(handlers) {
    const organizations = yield* Organizations.Organizations
    return handlers.handle("get", () => Effect.map(organizations.current(), organizationResponse))
  })
).pipe(capturingOnly(Organizations.Organizations))

export const PublishableKeysHandlers = HttpApiBuilder.group(
  AdminApi,
  "publishableKeys",
  Effect.fn(function*(handlers) {
    const organizations = yield* Organizations.Organizations
    return handlers
      .handle("list", () => Effect.map(organizations.listOwnPublishableKeys(), (data) => ({ data })))
      .handle("create", () => organizations.createOwnPublishableKey())
      .handle("revoke", ({ params }) => organizations.revokeOwnPublishableKey(params.id))
  })
).pipe(capturingOnly(Organizations.Organizations))
