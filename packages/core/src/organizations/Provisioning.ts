/**
 * What an operator (or an embedding host) provisions and the admin API cannot: organizations, their secret keys,
 * publishable keys, connected stores, loyalty programs, wishlists and the plan allowance. Trusted callers only; the
 * HTTP adapter exposes these under `/operator` behind OPERATOR_TOKEN.
 */
import { Effect, Option } from "effect"
import { NotFound } from "../kernel/Errors.ts"
import type {
  CustomerId,
  IntegrationId,
  LoyaltyProgramId,
  OrganizationId,
  PublishableKeyId,
  SecretKeyId,
  SiteId,
  WishlistId
} from "../kernel/Ids.ts"
import { IdGenerator, nextId } from "../kernel/IdGenerator.ts"
import { DEFAULT_API_REQUESTS_PER_MINUTE, type Organization } from "./Organization.ts"
import { OrganizationRepository } from "./OrganizationRepository.ts"
import type { Permission } from "../kernel/Permission.ts"
import {
  generateSecretKey,
  hashSecretKey,
  isWellFormedSecretKey,
  type IssuedSecretKey,
  type SecretKeyRecord,
  type SecretKeyView,
  toView
} from "./SecretKey.ts"
import { type SecretKeyHashTaken, SecretKeyRepository } from "./SecretKeyRepository.ts"
import { StorefrontRecordRepository } from "./StorefrontRecordRepository.ts"
import {
  type Integration,
  type IntegrationPlatform,
  type LoyaltyProgram,
  type LoyaltyProgramStatus,
  PUBLISHABLE_KEY_PREFIX,
  type PublishableKey,
  type Wishlist
} from "./StorefrontRecords.ts"
import { now } from "../kernel/Timestamp.ts"
import { transactional, type UnitOfWork } from "../kernel/UnitOfWork.ts"
import { randomBytes } from "node:crypto"

export const createOrganization = (input: {
  readonly name: string
  readonly apiRequestsPerMinute?: number | undefined
}): Effect.Effect<Organization, never, OrganizationRepository | IdGenerator> =>
  Effect.gen(function*() {
    const organization: Organization = {
      id: yield* nextId<OrganizationId>(),
      name: input.name,
      plan: { apiRequestsPerMinute: input.apiRequestsPerMinute ?? DEFAULT_API_REQUESTS_PER_MINUTE },
      createdAt: yield* now
    }
    yield* (yield* OrganizationRepository).insert(organization)
    return organization
  })

/** The organization, or NotFound. */
export const findOrganization = (
  id: OrganizationId
): Effect.Effect<Organization, NotFound, OrganizationRepository> =>
  OrganizationRepository.use((repo) => repo.findById(id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(NotFound.of("organization", id)),
      onSome: Effect.succeed
    }))
  )

export const setApiRequestsPerMinute = (
  id: OrganizationId,
  apiRequestsPerMinute: number
): Effect.Effect<Organization, NotFound, OrganizationRepository> =>
  OrganizationRepository.use((repo) => repo.setApiRequestsPerMinute(id, apiRequestsPerMinute)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(NotFound.of("organization", id)),
      onSome: Effect.succeed
    }))
  )

type IssueRequirements = OrganizationRepository | SecretKeyRepository | IdGenerator | UnitOfWork

const issue = (
  organizationId: OrganizationId,
  input: { readonly permissions: ReadonlyArray<Permission>; readonly name?: string | undefined },
  secretKey: string
): Effect.Effect<IssuedSecretKey, NotFound | SecretKeyHashTaken, IssueRequirements> =>
  transactional(Effect.gen(function*() {
    yield* findOrganization(organizationId)
    const record: SecretKeyRecord = {
      id: yield* nextId<SecretKeyId>(),
      organizationId,
      name: input.name ?? "Secret key",
      permissions: [...new Set(input.permissions)],
      keyHash: hashSecretKey(secretKey),
      createdAt: yield* now,
      revokedAt: null
    }
    yield* (yield* SecretKeyRepository).insert(record)
    return { ...toView(record), secretKey }
  }))

/** Issues a secret key. The answer is the only place the clear key ever appears; the store keeps its hash. */
export const issueSecretKey = (
  organizationId: OrganizationId,
  input: { readonly permissions: ReadonlyArray<Permission>; readonly name?: string | undefined }
): Effect.Effect<IssuedSecretKey, NotFound, IssueRequirements> =>
  // 256 random bits never repeat; a clash would mean a broken random source, which must not be papered over.
  issue(organizationId, input, generateSecretKey()).pipe(Effect.catchTag("SecretKeyHashTaken", Effect.die))

/**
 * Issues a key with a secret the host chose (the demo's DEMO_SECRET_KEY). A secret that was ever issued, even if
 * revoked since, is refused with `SecretKeyHashTaken`: a revoked key is never live again.
 */
export const issueChosenSecretKey = (
  organizationId: OrganizationId,
  input: { readonly permissions: ReadonlyArray<Permission>; readonly name?: string | undefined },
  secretKey: string
): Effect.Effect<IssuedSecretKey, NotFound | SecretKeyHashTaken, IssueRequirements> =>
  isWellFormedSecretKey(secretKey)
    ? issue(organizationId, input, secretKey)
    : Effect.die(new Error("a chosen secret key must be sk_ followed by at least 32 URL-safe characters"))

export const revokeSecretKey = (
  organizationId: OrganizationId,
  keyId: SecretKeyId
): Effect.Effect<SecretKeyView, NotFound, SecretKeyRepository> =>
  Effect.gen(function*() {
    const revoked = yield* (yield* SecretKeyRepository).revoke(organizationId, keyId, yield* now)
    return yield* Option.match(revoked, {
      onNone: () => Effect.fail(NotFound.of("secret key", keyId)),
      onSome: (r) => Effect.succeed(toView(r))
    })
  })

export const listSecretKeys = (
  organizationId: OrganizationId
): Effect.Effect<ReadonlyArray<SecretKeyView>, NotFound, SecretKeyRepository | OrganizationRepository> =>
  Effect.gen(function*() {
    yield* findOrganization(organizationId)
    const keys = yield* (yield* SecretKeyRepository).listForOrganization(organizationId)
    return keys.map(toView)
  })

/** Runs `make` for an existing organization only, so no record is ever orphaned. */
const forOrganization = <A, R>(
  organizationId: OrganizationId,
  make: Effect.Effect<A, never, R>
): Effect.Effect<A, NotFound, R | OrganizationRepository | UnitOfWork> =>
  transactional(Effect.andThen(findOrganization(organizationId), make))

export const createPublishableKey = (organizationId: OrganizationId) =>
  forOrganization(organizationId, Effect.gen(function*() {
    const key: PublishableKey = {
      id: yield* nextId<PublishableKeyId>(),
      key: PUBLISHABLE_KEY_PREFIX + randomBytes(24).toString("base64url"),
      createdAt: yield* now
    }
    yield* (yield* StorefrontRecordRepository).insertPublishableKey({ ...key, organizationId })
    return key
  }))

export const createIntegration = (organizationId: OrganizationId, platform: IntegrationPlatform) =>
  forOrganization(organizationId, Effect.gen(function*() {
    const integration: Integration = { id: yield* nextId<IntegrationId>(), platform, createdAt: yield* now }
    yield* (yield* StorefrontRecordRepository).insertIntegration({ ...integration, organizationId })
    return integration
  }))

export const createLoyaltyProgram = (
  organizationId: OrganizationId,
  input: { readonly siteId?: SiteId | null | undefined; readonly status: LoyaltyProgramStatus }
) =>
  forOrganization(organizationId, Effect.gen(function*() {
    const program: LoyaltyProgram = {
      id: yield* nextId<LoyaltyProgramId>(),
      siteId: input.siteId ?? null,
      status: input.status,
      createdAt: yield* now
    }
    yield* (yield* StorefrontRecordRepository).insertLoyaltyProgram({ ...program, organizationId })
    return program
  }))

export const createWishlist = (
  organizationId: OrganizationId,
  input: { readonly customerId?: CustomerId | null | undefined }
) =>
  forOrganization(organizationId, Effect.gen(function*() {
    const wishlist: Wishlist = {
      id: yield* nextId<WishlistId>(),
      customerId: input.customerId ?? null,
      createdAt: yield* now
    }
    yield* (yield* StorefrontRecordRepository).insertWishlist({ ...wishlist, organizationId })
    return wishlist
  }))
