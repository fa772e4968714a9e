/**
 * Storage of unsubscribe tokens (one per customer, kept for as long as the customer) and of the opt-out they record.
 * A token is found by itself alone (the `/u/{token}` link names no organization), so its store keeps it unique
 * across organizations; every other read and write is keyed by the organization.
 */
import { Context, type Effect, type Option } from "effect"
import type { Customer } from "./Catalog.ts"
import type { CustomerId, OrganizationId } from "../kernel/Ids.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

export interface UnsubscribeTokenOwner {
  readonly organizationId: OrganizationId
  readonly customerId: CustomerId
}

export type OptOutOutcome =
  | { readonly _tag: "OptedOut"; readonly customer: Customer }
  /** The customer had opted out already: nothing was written. */
  | { readonly _tag: "AlreadyOptedOut"; readonly customer: Customer }
  | { readonly _tag: "NotFound" }

export class UnsubscribeRepository extends Context.Service<UnsubscribeRepository, {
  /**
   * The customer's token: the stored one, or `candidate`, stored now when the customer has none. Concurrent callers
   * for the same customer all get the one token that was kept. The customer must exist.
   */
  readonly ensureToken: (
    organizationId: OrganizationId,
    customerId: CustomerId,
    candidate: string,
    at: Timestamp
  ) => Effect.Effect<string>
  readonly findToken: (token: string) => Effect.Effect<Option.Option<UnsubscribeTokenOwner>>
  /**
   * Sets `emailOptOut`, `emailOptOutAt = at`, `emailOptOutSource = source` and `updatedAt = at` on a customer who has
   * not opted out; a customer who has is left as they are (their first opt-out is kept).
   */
  readonly optOut: (
    organizationId: OrganizationId,
    customerId: CustomerId,
    source: string,
    at: Timestamp
  ) => Effect.Effect<OptOutOutcome>
}>()("feedback/UnsubscribeRepository") {}
