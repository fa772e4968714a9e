/** Storage of the operator-created storefront records (publishable keys, integrations, loyalty programs, wishlists). */
import { Context, type Effect, type Option } from "effect"
import type { IntegrationId, LoyaltyProgramId, OrganizationId, PublishableKeyId, WishlistId } from "../kernel/Ids.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import type {
  Integration,
  LoyaltyProgram,
  Owned,
  PublishableKey,
  PublishableKeyRecord,
  Wishlist
} from "./StorefrontRecords.ts"

export class StorefrontRecordRepository extends Context.Service<StorefrontRecordRepository, {
  readonly insertPublishableKey: (key: Owned<PublishableKeyRecord>) => Effect.Effect<void>
  /** The newest publishable key not revoked (the setup state reports it). */
  readonly newestPublishableKey: (organizationId: OrganizationId) => Effect.Effect<Option.Option<PublishableKey>>
  /** Every key of the organization, revoked ones included, newest first. */
  readonly listPublishableKeys: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<PublishableKey>>
  /** Marks the key revoked (keeping the first revocation time); none when no such key in the organization. */
  readonly revokePublishableKey: (
    organizationId: OrganizationId,
    id: PublishableKeyId,
    at: Timestamp
  ) => Effect.Effect<Option.Option<PublishableKey>>
  /** The one key with this text, revoked or not, in whichever organization (authentication; keys are unique). */
  readonly findPublishableKey: (key: string) => Effect.Effect<Option.Option<Owned<PublishableKeyRecord>>>
  readonly deletePublishableKey: (organizationId: OrganizationId, id: PublishableKeyId) => Effect.Effect<boolean>
  readonly insertIntegration: (integration: Owned<Integration>) => Effect.Effect<void>
  readonly deleteIntegration: (organizationId: OrganizationId, id: IntegrationId) => Effect.Effect<boolean>
  readonly insertLoyaltyProgram: (program: Owned<LoyaltyProgram>) => Effect.Effect<void>
  readonly deleteLoyaltyProgram: (organizationId: OrganizationId, id: LoyaltyProgramId) => Effect.Effect<boolean>
  readonly insertWishlist: (wishlist: Owned<Wishlist>) => Effect.Effect<void>
  readonly deleteWishlist: (organizationId: OrganizationId, id: WishlistId) => Effect.Effect<boolean>
}>()("feedback/StorefrontRecordRepository") {}
