/**
 * The small records that only the operator API (or an embedding host) creates: publishable keys for storefront
 * widgets, connected stores, loyalty programs and wishlists. The admin API reads them as setup signals.
 */
import { Schema } from "effect"
import { CustomerId, IntegrationId, LoyaltyProgramId, OrganizationId, PublishableKeyId, SiteId, WishlistId } from "../kernel/Ids.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const PUBLISHABLE_KEY_PREFIX = "pk_"

export const PublishableKey = Schema.Struct({
  id: PublishableKeyId,
  key: Schema.String,
  createdAt: Timestamp
})
export type PublishableKey = typeof PublishableKey.Type

/** The one storefront platform a store can be connected from (spec: hasIntegration). */
export const IntegrationPlatform = Schema.Literals(["shopify"])
export type IntegrationPlatform = typeof IntegrationPlatform.Type

export const Integration = Schema.Struct({
  id: IntegrationId,
  platform: IntegrationPlatform,
  createdAt: Timestamp
})
export type Integration = typeof Integration.Type

export const LoyaltyProgramStatus = Schema.Literals(["draft", "live"])
export type LoyaltyProgramStatus = typeof LoyaltyProgramStatus.Type

export const LoyaltyProgram = Schema.Struct({
  id: LoyaltyProgramId,
  siteId: Schema.NullOr(SiteId),
  status: LoyaltyProgramStatus,
  createdAt: Timestamp
})
export type LoyaltyProgram = typeof LoyaltyProgram.Type

export const Wishlist = Schema.Struct({
  id: WishlistId,
  customerId: Schema.NullOr(CustomerId),
  createdAt: Timestamp
})
export type Wishlist = typeof Wishlist.Type

/** Stored form: every record carries its organization. */
export type Owned<A> = A & { readonly organizationId: OrganizationId }
