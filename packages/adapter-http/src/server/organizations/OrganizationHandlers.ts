/** Handlers of the foundation's groups: system and organization. */
import { getCurrentOrganization, OrganizationRepository } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../../api/Api.ts"

export const SystemHandlers = HttpApiBuilder.group(AdminApi, "system", (handlers) =>
  handlers.handle("health", () => Effect.succeed({ status: "ok" as const })))

export const OrganizationHandlers = HttpApiBuilder.group(AdminApi, "organization", Effect.fn(function*(handlers) {
  const organizations = yield* OrganizationRepository
  return handlers.handle("get", () =>
    getCurrentOrganization.pipe(Effect.provideService(OrganizationRepository, organizations)))
}))
