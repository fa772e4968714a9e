/** Handlers of the foundation's groups: system and organization. */
import { Organizations } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"

export const SystemHandlers = HttpApiBuilder.group(AdminApi, "system", (handlers) =>
  handlers.handle("health", () => Effect.succeed({ status: "ok" as const })))

export const OrganizationHandlers = HttpApiBuilder.group(AdminApi, "organization", Effect.fn(function*(handlers) {
  const organizations = yield* Organizations
  return handlers.handle("get", () => organizations.current())
}))
