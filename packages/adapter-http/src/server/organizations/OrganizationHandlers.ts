/** Handlers of the foundation's groups: system and organization. */
import { Organizations, StoreHealth } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"

export const SystemHandlers = HttpApiBuilder.group(AdminApi, "system", Effect.fn(function*(handlers) {
  const store = yield* StoreHealth
  return handlers
    .handle("health", () => Effect.succeed({ status: "ok" as const }))
    .handle("ready", () => Effect.as(store.check, { status: "ok" as const }))
})).pipe(capturingOnly(StoreHealth))

export const OrganizationHandlers = HttpApiBuilder.group(AdminApi, "organization", Effect.fn(function*(handlers) {
  const organizations = yield* Organizations
  return handlers.handle("get", () => organizations.current())
})).pipe(capturingOnly(Organizations))
