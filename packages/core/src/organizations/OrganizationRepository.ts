/** Storage of organizations. */
import { Context, Data, type Effect, type Option } from "effect"
import type { OrganizationId } from "../kernel/Ids.ts"
import type { Organization, Plan } from "./Organization.ts"

/** Another organization already has this `externalId` (they are unique, docs/DECISIONS.md §65). */
export class ExternalIdTaken extends Data.TaggedError("ExternalIdTaken")<{ readonly externalId: string }> {}

export class OrganizationRepository extends Context.Service<OrganizationRepository, {
  /** Stores the organization; refuses an `externalId` another organization has. */
  readonly insert: (organization: Organization) => Effect.Effect<void, ExternalIdTaken>
  readonly findById: (id: OrganizationId) => Effect.Effect<Option.Option<Organization>>
  /** The one organization with this `externalId` (compared exactly), or none. */
  readonly findByExternalId: (externalId: string) => Effect.Effect<Option.Option<Organization>>
  /** Replaces the organization's plan; the organization as stored afterwards, or none. */
  readonly setPlan: (id: OrganizationId, plan: Plan) => Effect.Effect<Option.Option<Organization>>
  /**
   * Sets (or, with null, removes) the organization's `externalId`; the organization as stored afterwards, or none.
   * Refuses one another organization has.
   */
  readonly setExternalId: (
    id: OrganizationId,
    externalId: string | null
  ) => Effect.Effect<Option.Option<Organization>, ExternalIdTaken>
  /** Whether the store holds any organization at all (the server seeds a demo organization into an empty store). */
  readonly isEmpty: Effect.Effect<boolean>
}>()("feedback/OrganizationRepository") {}
