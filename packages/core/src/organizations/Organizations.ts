/**
 * Organizations as one service (docs/DECISIONS.md §2): the caller's own organization (`GET /organization`), turning a
 * presented secret key into a caller, and what an operator (or an embedding host) provisions and the admin API
 * cannot: organizations, their secret keys, publishable keys, connected stores, loyalty programs, wishlists and the
 * plan allowance. Provisioning trusts its caller; the HTTP adapter exposes it under `/operator` behind
 * OPERATOR_TOKEN. Built once over the store, like every other use-case service.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { type CurrentCaller, requirePermission, SecretKeyCaller } from "../kernel/Caller.ts"
import { Conflict, type Forbidden, NotFound, Unauthorized } from "../kernel/Errors.ts"
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
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { Permission } from "../kernel/Permission.ts"
import { now } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import {
  applyPlanPatch,
  DEFAULT_API_REQUESTS_PER_MINUTE,
  type Organization,
  type OrganizationPatch,
  Plan,
  type PlanPatch
} from "./Organization.ts"
import { type ExternalIdTaken, OrganizationRepository } from "./OrganizationRepository.ts"
import type { Authenticated, AuthenticatedPublishableKey } from "./Authenticated.ts"
import * as AuthenticationCache from "./AuthenticationCache.ts"
import { CredentialChanges } from "./CredentialChanges.ts"
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
  generatePublishableKey,
  generateSigningSecret,
  type IssuedPublishableKey,
  isWellFormedPublishableKey,
  type PublishableKey,
  type PublishableKeyRecord,
  type Wishlist
} from "./StorefrontRecords.ts"

export interface SecretKeyInput {
  readonly permissions: ReadonlyArray<Permission>
  readonly name?: string | undefined
}

export class Organizations extends Context.Service<Organizations, {
  /** `GET /organization`: the caller's own organization (`settings:read`). */
  readonly current: () => Effect.Effect<Organization, Forbidden | NotFound, CurrentCaller>
  /**
   * Turns a presented secret key into a caller. Every failure (malformed, unknown, revoked, organization gone) is the
   * same Unauthorized, so the answer reveals nothing about which keys exist.
   */
  readonly authenticateSecretKey: (presented: string) => Effect.Effect<Authenticated, Unauthorized>
  /**
   * What `authenticateSecretKey` would answer from the keys it keeps, at `nowMs`, without reading the store:
   * `undefined` when the key is not kept (unknown, revoked, never seen, or nothing may be kept on this store). A
   * server's refusal gate uses it to know the caller before any other work.
   */
  readonly keptAuthentication: (presented: string, nowMs: number) => Authenticated | undefined

  /** Creates an organization; Conflict when another one has the `externalId` given. */
  readonly createOrganization: (input: {
    readonly name: string
    readonly apiRequestsPerMinute?: number | undefined
    readonly externalId?: string | undefined
  }) => Effect.Effect<Organization, Conflict>
  /** The organization, or NotFound. */
  readonly findOrganization: (id: OrganizationId) => Effect.Effect<Organization, NotFound>
  /** The organization the host knows by `externalId` (docs/DECISIONS.md §65), or NotFound. */
  readonly findByExternalId: (externalId: string) => Effect.Effect<Organization, NotFound>
  /**
   * The operator's change (`PATCH /operator/organizations/{id}`): the plan's sent fields and `externalId` (`null`
   * removes it), all or nothing; Conflict when another organization has that `externalId`.
   */
  readonly updateOrganization: (
    id: OrganizationId,
    patch: OrganizationPatch
  ) => Effect.Effect<Organization, NotFound | Conflict>
  readonly setApiRequestsPerMinute: (
    id: OrganizationId,
    apiRequestsPerMinute: number
  ) => Effect.Effect<Organization, NotFound>
  /** The operator's change of plan (`PATCH /operator/organizations/{id}`): only sent fields change. */
  readonly updatePlan: (id: OrganizationId, patch: PlanPatch) => Effect.Effect<Organization, NotFound>

  /** Issues a secret key. The answer is the only place the clear key ever appears; the store keeps its hash. */
  readonly issueSecretKey: (
    organizationId: OrganizationId,
    input: SecretKeyInput
  ) => Effect.Effect<IssuedSecretKey, NotFound>
  /**
   * Issues a key with a secret the host chose (the demo's DEMO_SECRET_KEY). A secret that was ever issued, even if
   * revoked since, is refused with `SecretKeyHashTaken`: a revoked key is never live again.
   */
  readonly issueChosenSecretKey: (
    organizationId: OrganizationId,
    input: SecretKeyInput,
    secretKey: string
  ) => Effect.Effect<IssuedSecretKey, NotFound | SecretKeyHashTaken>
  readonly revokeSecretKey: (
    organizationId: OrganizationId,
    keyId: SecretKeyId
  ) => Effect.Effect<SecretKeyView, NotFound>
  readonly listSecretKeys: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<SecretKeyView>, NotFound>

  /** Issues a publishable key; the answer is the only place its signing secret is shown (docs/DECISIONS.md §55). */
  readonly createPublishableKey: (organizationId: OrganizationId) => Effect.Effect<IssuedPublishableKey, NotFound>
  /** `GET /publishable-keys` (`settings:read`): the caller's keys, revoked ones included, newest first. */
  readonly listOwnPublishableKeys: () => Effect.Effect<ReadonlyArray<PublishableKey>, Forbidden, CurrentCaller>
  /** `POST /publishable-keys` (`settings:write`). */
  readonly createOwnPublishableKey: () => Effect.Effect<IssuedPublishableKey, Forbidden, CurrentCaller>
  /** `DELETE /publishable-keys/{id}` (`settings:write`): revokes it at once, in every process that hears changes. */
  readonly revokeOwnPublishableKey: (
    id: PublishableKeyId
  ) => Effect.Effect<PublishableKey, Forbidden | NotFound, CurrentCaller>
  /**
   * Turns a presented publishable key into a storefront caller. Malformed, unknown, revoked or of a deleted
   * organization are one Unauthorized, as for secret keys.
   */
  readonly authenticatePublishableKey: (presented: string) => Effect.Effect<AuthenticatedPublishableKey, Unauthorized>
  /** `keptAuthentication` for a publishable key: what `authenticatePublishableKey` keeps, without reading the store. */
  readonly keptPublishableKey: (presented: string, nowMs: number) => AuthenticatedPublishableKey | undefined
  readonly createIntegration: (
    organizationId: OrganizationId,
    platform: IntegrationPlatform
  ) => Effect.Effect<Integration, NotFound>
  readonly createLoyaltyProgram: (
    organizationId: OrganizationId,
    input: { readonly siteId?: SiteId | null | undefined; readonly status: LoyaltyProgramStatus }
  ) => Effect.Effect<LoyaltyProgram, NotFound>
  readonly createWishlist: (
    organizationId: OrganizationId,
    input: { readonly customerId?: CustomerId | null | undefined }
  ) => Effect.Effect<Wishlist, NotFound>
}>()("feedback/Organizations") {
  static readonly layer = Layer.effect(
    Organizations,
    Effect.gen(function*() {
      const organizations = yield* OrganizationRepository
      const keys = yield* SecretKeyRepository
      const storefront = yield* StorefrontRecordRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator

      const lookUp = (id: OrganizationId) =>
        Effect.flatMap(
          organizations.findById(id),
          (found) => Option.isNone(found) ? Effect.fail(NotFound.of("organization", id)) : Effect.succeed(found.value)
        )

      const findOrganization = Effect.fn("Organizations.findOrganization")(function*(id: OrganizationId) {
        return yield* lookUp(id)
      })

      const current = Effect.fn("Organizations.current")(function*() {
        const caller = yield* requirePermission("settings:read")
        return yield* lookUp(caller.organizationId)
      })

      // Admission, not a use-case: it runs before every authenticated request, so it opens no span of its own, which
      // every request would pay for (docs/DECISIONS.md §42); the request's use-case span follows it.
      const isPlan = Schema.is(Plan)
      // Kept only while every change to keys and organizations is heard (`CredentialChanges`: the memory store, and
      // PostgreSQL servers by LISTEN/NOTIFY).
      const changes = yield* CredentialChanges
      const cache = AuthenticationCache.make(changes)

      const authenticateSecretKey = Effect.fnUntraced(function*(presented: string) {
        if (!isWellFormedSecretKey(presented)) return yield* Unauthorized.default()
        const keyHash = hashSecretKey(presented)
        // Nothing is kept on stores that cannot hear every change: no clock read or lookup for them.
        const version = cache.version()
        const nowMs = version === undefined ? 0 : yield* Clock.currentTimeMillis
        const kept = version === undefined ? undefined : cache.get(keyHash, nowMs)
        if (kept !== undefined) return kept
        const found = yield* keys.findByHash(keyHash)
        if (Option.isNone(found) || found.value.revokedAt !== null) return yield* Unauthorized.default()
        const key = found.value
        const organization = yield* organizations.findById(key.organizationId)
        if (Option.isNone(organization)) return yield* Unauthorized.default()
        const authenticated: Authenticated = {
          caller: new SecretKeyCaller({
            organizationId: key.organizationId,
            keyId: key.id,
            permissions: new Set(key.permissions)
          }),
          organization: organization.value
        }
        cache.set(keyHash, version, nowMs, authenticated)
        return authenticated
      })

      const keptAuthentication = (presented: string, nowMs: number) =>
        cache.version() === undefined || !isWellFormedSecretKey(presented)
          ? undefined
          : cache.get(hashSecretKey(presented), nowMs)

      // The HTTP contract bounds a plan; a host calling the core directly is trusted, but a plan outside the bounds
      // would fail every later request of the organization (the bucket refuses the ceiling), so it fails here instead.
      const checkedPlan = (plan: Plan) =>
        isPlan(plan)
          ? Effect.succeed(plan)
          : Effect.die(
            new RangeError(
              `a plan's allowances are whole numbers from 1 to 1,000,000 a minute; got ${JSON.stringify(plan)}`
            )
          )

      const externalIdConflict = (e: ExternalIdTaken) =>
        Effect.fail(
          new Conflict({ message: `another organization has externalId ${JSON.stringify(e.externalId.slice(0, 100))}` })
        )

      const createOrganization = Effect.fn("Organizations.createOrganization")(function*(input: {
        readonly name: string
        readonly apiRequestsPerMinute?: number | undefined
        readonly externalId?: string | undefined
      }) {
        const organization: Organization = {
          id: yield* nextIdFrom<OrganizationId>(ids),
          name: input.name,
          ...(input.externalId === undefined ? {} : { externalId: input.externalId }),
          plan: yield* checkedPlan({
            apiRequestsPerMinute: input.apiRequestsPerMinute ?? DEFAULT_API_REQUESTS_PER_MINUTE
          }),
          createdAt: yield* now
        }
        yield* organizations.insert(organization).pipe(Effect.catchTag("ExternalIdTaken", externalIdConflict))
        return organization
      })

      const findByExternalId = Effect.fn("Organizations.findByExternalId")(function*(externalId: string) {
        const found = yield* organizations.findByExternalId(externalId)
        if (Option.isNone(found)) return yield* NotFound.of("organization", externalId.slice(0, 100))
        return found.value
      })

      const updateOrganization = Effect.fn("Organizations.updateOrganization")(
        function*(id: OrganizationId, patch: OrganizationPatch) {
          const { externalId, ...planPatch } = patch
          return yield* uow.transaction(Effect.gen(function*() {
            let updated = yield* updatePlan(id, planPatch)
            if (externalId !== undefined) {
              const set = yield* organizations.setExternalId(id, externalId).pipe(
                Effect.catchTag("ExternalIdTaken", externalIdConflict)
              )
              if (Option.isNone(set)) return yield* NotFound.of("organization", id)
              updated = set.value
            }
            return updated
          }))
        }
      )

      const updatePlan = Effect.fn("Organizations.updatePlan")(function*(id: OrganizationId, patch: PlanPatch) {
        const current = yield* organizations.findById(id)
        if (Option.isNone(current)) return yield* NotFound.of("organization", id)
        const updated = yield* organizations.setPlan(id, yield* checkedPlan(applyPlanPatch(current.value.plan, patch)))
        changes.announce()
        if (Option.isNone(updated)) return yield* NotFound.of("organization", id)
        return updated.value
      })

      const setApiRequestsPerMinute = (id: OrganizationId, apiRequestsPerMinute: number) =>
        updatePlan(id, { apiRequestsPerMinute })

      const issue = (organizationId: OrganizationId, input: SecretKeyInput, secretKey: string) =>
        uow.transaction(Effect.gen(function*() {
          yield* findOrganization(organizationId)
          const record: SecretKeyRecord = {
            id: yield* nextIdFrom<SecretKeyId>(ids),
            organizationId,
            name: input.name ?? "Secret key",
            permissions: [...new Set(input.permissions)],
            keyHash: hashSecretKey(secretKey),
            createdAt: yield* now,
            revokedAt: null
          }
          yield* keys.insert(record)
          return { ...toView(record), secretKey } satisfies IssuedSecretKey
        }))

      const issueSecretKey = Effect.fn("Organizations.issueSecretKey")(
        function*(organizationId: OrganizationId, input: SecretKeyInput) {
          // 256 random bits never repeat; a clash would mean a broken random source, which must not be papered over.
          return yield* issue(organizationId, input, generateSecretKey()).pipe(
            Effect.catchTag("SecretKeyHashTaken", Effect.die)
          )
        }
      )

      const issueChosenSecretKey = Effect.fn("Organizations.issueChosenSecretKey")(
        function*(organizationId: OrganizationId, input: SecretKeyInput, secretKey: string) {
          if (!isWellFormedSecretKey(secretKey)) {
            return yield* Effect.die(
              new Error("a chosen secret key must be sk_ followed by at least 32 URL-safe characters")
            )
          }
          return yield* issue(organizationId, input, secretKey)
        }
      )

      const revokeSecretKey = Effect.fn("Organizations.revokeSecretKey")(
        function*(organizationId: OrganizationId, keyId: SecretKeyId) {
          const revoked = yield* keys.revoke(organizationId, keyId, yield* now)
          changes.announce()
          if (Option.isNone(revoked)) return yield* NotFound.of("secret key", keyId)
          return toView(revoked.value)
        }
      )

      const listSecretKeys = Effect.fn("Organizations.listSecretKeys")(function*(organizationId: OrganizationId) {
        yield* findOrganization(organizationId)
        const listed = yield* keys.listForOrganization(organizationId)
        return listed.map(toView)
      })

      /** Runs `make` for an existing organization only, so no record is ever orphaned. */
      const forOrganization = <A>(organizationId: OrganizationId, make: Effect.Effect<A>): Effect.Effect<A, NotFound> =>
        uow.transaction(Effect.andThen(findOrganization(organizationId), make))

      const createPublishableKey = Effect.fn("Organizations.createPublishableKey")(
        function*(organizationId: OrganizationId) {
          return yield* forOrganization(
            organizationId,
            Effect.gen(function*() {
              const record: PublishableKeyRecord = {
                id: yield* nextIdFrom<PublishableKeyId>(ids),
                key: generatePublishableKey(),
                signingSecret: generateSigningSecret(),
                createdAt: yield* now,
                revokedAt: null
              }
              yield* storefront.insertPublishableKey({ ...record, organizationId })
              return {
                id: record.id,
                key: record.key,
                signingSecret: record.signingSecret!,
                createdAt: record.createdAt
              }
            })
          )
        }
      )

      const listOwnPublishableKeys = Effect.fn("Organizations.listOwnPublishableKeys")(function*() {
        const caller = yield* requirePermission("settings:read")
        return yield* storefront.listPublishableKeys(caller.organizationId)
      })

      const createOwnPublishableKey = Effect.fn("Organizations.createOwnPublishableKey")(function*() {
        const caller = yield* requirePermission("settings:write")
        // The caller's organization exists (it authenticated); its absence would be a broken store, not a 404.
        return yield* createPublishableKey(caller.organizationId).pipe(Effect.catchTag("NotFound", Effect.die))
      })

      const revokeOwnPublishableKey = Effect.fn("Organizations.revokeOwnPublishableKey")(
        function*(id: PublishableKeyId) {
          const caller = yield* requirePermission("settings:write")
          const revoked = yield* storefront.revokePublishableKey(caller.organizationId, id, yield* now)
          changes.announce()
          if (Option.isNone(revoked)) return yield* NotFound.of("publishable key", id)
          return revoked.value
        }
      )

      // Kept like secret keys, under the same change version: a revocation heard from any process drops them all.
      const publishableCache = AuthenticationCache.make<AuthenticatedPublishableKey>(changes)
      const authenticatePublishableKey = Effect.fnUntraced(function*(presented: string) {
        if (!isWellFormedPublishableKey(presented)) return yield* Unauthorized.publishable()
        const version = publishableCache.version()
        const nowMs = version === undefined ? 0 : yield* Clock.currentTimeMillis
        const kept = version === undefined ? undefined : publishableCache.get(presented, nowMs)
        if (kept !== undefined) return kept
        const found = yield* storefront.findPublishableKey(presented)
        if (Option.isNone(found) || found.value.revokedAt !== null) return yield* Unauthorized.publishable()
        const organization = yield* organizations.findById(found.value.organizationId)
        if (Option.isNone(organization)) return yield* Unauthorized.publishable()
        const authenticated: AuthenticatedPublishableKey = {
          keyId: found.value.id,
          key: found.value.key,
          signingSecret: found.value.signingSecret,
          organization: organization.value
        }
        publishableCache.set(presented, version, nowMs, authenticated)
        return authenticated
      })

      const keptPublishableKey = (presented: string, nowMs: number) =>
        publishableCache.version() === undefined || !isWellFormedPublishableKey(presented)
          ? undefined
          : publishableCache.get(presented, nowMs)

      const createIntegration = Effect.fn("Organizations.createIntegration")(
        function*(organizationId: OrganizationId, platform: IntegrationPlatform) {
          return yield* forOrganization(
            organizationId,
            Effect.gen(function*() {
              const integration: Integration = {
                id: yield* nextIdFrom<IntegrationId>(ids),
                platform,
                createdAt: yield* now
              }
              yield* storefront.insertIntegration({ ...integration, organizationId })
              return integration
            })
          )
        }
      )

      const createLoyaltyProgram = Effect.fn("Organizations.createLoyaltyProgram")(function*(
        organizationId: OrganizationId,
        input: { readonly siteId?: SiteId | null | undefined; readonly status: LoyaltyProgramStatus }
      ) {
        return yield* forOrganization(
          organizationId,
          Effect.gen(function*() {
            const program: LoyaltyProgram = {
              id: yield* nextIdFrom<LoyaltyProgramId>(ids),
              siteId: input.siteId ?? null,
              status: input.status,
              createdAt: yield* now
            }
            yield* storefront.insertLoyaltyProgram({ ...program, organizationId })
            return program
          })
        )
      })

      const createWishlist = Effect.fn("Organizations.createWishlist")(function*(
        organizationId: OrganizationId,
        input: { readonly customerId?: CustomerId | null | undefined }
      ) {
        return yield* forOrganization(
          organizationId,
          Effect.gen(function*() {
            const wishlist: Wishlist = {
              id: yield* nextIdFrom<WishlistId>(ids),
              customerId: input.customerId ?? null,
              createdAt: yield* now
            }
            yield* storefront.insertWishlist({ ...wishlist, organizationId })
            return wishlist
          })
        )
      })

      return Organizations.of({
        current,
        authenticateSecretKey,
        keptAuthentication,
        createOrganization,
        findOrganization,
        findByExternalId,
        updateOrganization,
        setApiRequestsPerMinute,
        updatePlan,
        issueSecretKey,
        issueChosenSecretKey,
        revokeSecretKey,
        listSecretKeys,
        createPublishableKey,
        listOwnPublishableKeys,
        createOwnPublishableKey,
        revokeOwnPublishableKey,
        authenticatePublishableKey,
        keptPublishableKey,
        createIntegration,
        createLoyaltyProgram,
        createWishlist
      })
    })
  )
}
