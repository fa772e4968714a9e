/**
 * The small records that only the operator API (or an embedding host) creates: publishable keys for storefront
 * widgets, connected stores, loyalty programs and wishlists. The admin API reads them as setup signals.
 */
import { Schema } from "effect"
import { randomBytes } from "node:crypto"
import {
  CustomerId,
  IntegrationId,
  LoyaltyProgramId,
  OrganizationId,
  PublishableKeyId,
  SiteId,
  WishlistId
} from "../kernel/Ids.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const PUBLISHABLE_KEY_PREFIX = "pk_"
export const SIGNING_SECRET_PREFIX = "pks_"

/**
 * A publishable key as the admin API lists it (docs/DECISIONS.md §55): the key is public (it is written into storefront
 * pages), so it is stored and shown as is; a revoked key keeps its row, with `revokedAt`, and never works again.
 */
export const PublishableKey = Schema.Struct({
  id: PublishableKeyId,
  key: Schema.String,
  createdAt: Timestamp,
  revokedAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "PublishableKey" })
export type PublishableKey = typeof PublishableKey.Type

/** The answer to a key's creation: the only place its `signingSecret` (for signed customer calls) is shown. */
export const IssuedPublishableKey = Schema.Struct({
  id: PublishableKeyId,
  key: Schema.String,
  signingSecret: Schema.String,
  createdAt: Timestamp
}).annotate({ identifier: "IssuedPublishableKey" })
export type IssuedPublishableKey = typeof IssuedPublishableKey.Type

/**
 * A stored key. The signing secret is kept as is, as webhook secrets are: verifying an HMAC needs the secret itself,
 * so a hash cannot serve. Keys made before signing secrets existed have none (their signed calls are refused).
 */
export interface PublishableKeyRecord extends PublishableKey {
  readonly signingSecret: string | null
}

export const toPublishableKeyView = (r: PublishableKeyRecord): PublishableKey => ({
  id: r.id,
  key: r.key,
  createdAt: r.createdAt,
  revokedAt: r.revokedAt
})

/** `pk_` + 32 URL-safe characters (192 random bits); `pks_` + 43 (256 bits) for the signing secret. */
export const generatePublishableKey = (): string => PUBLISHABLE_KEY_PREFIX + randomBytes(24).toString("base64url")
export const generateSigningSecret = (): string => SIGNING_SECRET_PREFIX + randomBytes(32).toString("base64url")

const wellFormedPublishableKey = /^pk_[A-Za-z0-9_-]{16,128}$/
/** A presented key worth looking up; anything else is refused without a read. */
export const isWellFormedPublishableKey = (key: string): boolean => wellFormedPublishableKey.test(key)

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
