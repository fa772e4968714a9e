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
   * Each customer's token: the stored one, or its `candidate`, stored now when the customer has none; in one write
   * however many customers (a wave of survey emails). Concurrent callers for the same customer all get the one token
   * that was kept. A customer that does not exist (in the organization) gets none and is left out of the answer.
   */
  readonly ensureTokens: (
    organizationId: OrganizationId,
    candidates: ReadonlyArray<{ readonly customerId: CustomerId; readonly candidate: string }>,
    at: Timestamp
  ) => Effect.Effect<ReadonlyMap<CustomerId, string>>
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
