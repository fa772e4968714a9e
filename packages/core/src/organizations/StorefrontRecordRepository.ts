/** Storage of the operator-created storefront records (publishable keys, integrations, loyalty programs, wishlists). */
import { Context, type Effect, type Option } from "effect"
import type { IntegrationId, LoyaltyProgramId, OrganizationId, PublishableKeyId, WishlistId } from "../kernel/Ids.ts"
import type { Integration, LoyaltyProgram, Owned, PublishableKey, Wishlist } from "./StorefrontRecords.ts"

export class StorefrontRecordRepository extends Context.Service<StorefrontRecordRepository, {
  readonly insertPublishableKey: (key: Owned<PublishableKey>) => Effect.Effect<void>
  /** The newest publishable key (the setup state reports it). */
  readonly newestPublishableKey: (organizationId: OrganizationId) => Effect.Effect<Option.Option<PublishableKey>>
  readonly deletePublishableKey: (organizationId: OrganizationId, id: PublishableKeyId) => Effect.Effect<boolean>
  readonly insertIntegration: (integration: Owned<Integration>) => Effect.Effect<void>
  readonly deleteIntegration: (organizationId: OrganizationId, id: IntegrationId) => Effect.Effect<boolean>
  readonly insertLoyaltyProgram: (program: Owned<LoyaltyProgram>) => Effect.Effect<void>
  readonly deleteLoyaltyProgram: (organizationId: OrganizationId, id: LoyaltyProgramId) => Effect.Effect<boolean>
  readonly insertWishlist: (wishlist: Owned<Wishlist>) => Effect.Effect<void>
  readonly deleteWishlist: (organizationId: OrganizationId, id: WishlistId) => Effect.Effect<boolean>
}>()("feedback/StorefrontRecordRepository") {}
