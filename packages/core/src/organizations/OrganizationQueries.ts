/** The admin API's view of the caller's own organization (`GET /organization`). */
import { Effect } from "effect"
import { requirePermission, type CurrentCaller } from "../kernel/Caller.ts"
import type { Forbidden, NotFound } from "../kernel/Errors.ts"
import type { Organization } from "./Organization.ts"
import type { OrganizationRepository } from "./OrganizationRepository.ts"
import { findOrganization } from "./Provisioning.ts"

export const getCurrentOrganization: Effect.Effect<
  Organization,
  Forbidden | NotFound,
  CurrentCaller | OrganizationRepository
> = Effect.flatMap(requirePermission("settings:read"), (caller) => findOrganization(caller.organizationId))
