/**
 * Storage of organization setup: the nine signals read from the organization's records, and the per-area decisions
 * (`setup_areas`). The rules themselves are pure (`SetupRules.ts`); the use-cases are in `Setup.ts`.
 */
import { Context, type Effect } from "effect"
import type { OrganizationId } from "../kernel/Ids.ts"
import type { Area, AreaDecisions, SetupDecisions, SetupSignals } from "./SetupRules.ts"

/** Decisions to store for some of the areas. */
export type AreaDecisionUpdates = { readonly [A in Area]?: AreaDecisions }

export class SetupRepository extends Context.Service<SetupRepository, {
  /**
   * The signals, read fresh from the organization's records in one round trip: sites, publishable keys, shopify
   * integrations, products, active survey flows, reviews, loyalty programs, loyalty programs attached to one of
   * the organization's sites, wishlists.
   */
  readonly signals: (organizationId: OrganizationId) => Effect.Effect<SetupSignals>
  /** The stored decisions; an area never stored is `emptyAreaDecisions`. */
  readonly decisions: (organizationId: OrganizationId) => Effect.Effect<SetupDecisions>
  /**
   * Stores decisions of the given areas by filling only the fields that are still null: a stored timestamp is never
   * overwritten or cleared, so concurrent writers keep the first value. Answers every area as stored afterwards
   * (which may hold an earlier timestamp than the one sent).
   */
  readonly saveDecisions: (
    organizationId: OrganizationId,
    updates: AreaDecisionUpdates
  ) => Effect.Effect<SetupDecisions>
}>()("feedback/SetupRepository") {}
