/** Storage of organizations. */
import { Context, type Effect, type Option } from "effect"
import type { OrganizationId } from "../kernel/Ids.ts"
import type { Organization, Plan } from "./Organization.ts"

export class OrganizationRepository extends Context.Service<OrganizationRepository, {
  readonly insert: (organization: Organization) => Effect.Effect<void>
  readonly findById: (id: OrganizationId) => Effect.Effect<Option.Option<Organization>>
  /** Replaces the organization's plan; the organization as stored afterwards, or none. */
  readonly setPlan: (id: OrganizationId, plan: Plan) => Effect.Effect<Option.Option<Organization>>
  /** Whether the store holds any organization at all (the server seeds a demo organization into an empty store). */
  readonly isEmpty: Effect.Effect<boolean>
}>()("feedback/OrganizationRepository") {}
