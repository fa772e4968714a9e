/**
 * Turning a presented secret key into a caller. Every failure (malformed, unknown, revoked, organization gone) is
 * the same Unauthorized, so the answer reveals nothing about which keys exist.
 */
import { Effect, Option } from "effect"
import { SecretKeyCaller } from "../kernel/Caller.ts"
import { Unauthorized } from "../kernel/Errors.ts"
import type { Organization } from "./Organization.ts"
import { OrganizationRepository } from "./OrganizationRepository.ts"
import { hashSecretKey, isWellFormedSecretKey } from "./SecretKey.ts"
import { SecretKeyRepository } from "./SecretKeyRepository.ts"

export interface Authenticated {
  readonly caller: SecretKeyCaller
  readonly organization: Organization
}

export const authenticateSecretKey = (
  presented: string
): Effect.Effect<Authenticated, Unauthorized, SecretKeyRepository | OrganizationRepository> =>
  Effect.gen(function*() {
    if (!isWellFormedSecretKey(presented)) return yield* Unauthorized.default()
    const found = yield* (yield* SecretKeyRepository).findByHash(hashSecretKey(presented))
    if (Option.isNone(found) || found.value.revokedAt !== null) return yield* Unauthorized.default()
    const key = found.value
    const organization = yield* (yield* OrganizationRepository).findById(key.organizationId)
    if (Option.isNone(organization)) return yield* Unauthorized.default()
    return {
      caller: new SecretKeyCaller({ organizationId: key.organizationId, keyId: key.id, permissions: new Set(key.permissions) }),
      organization: organization.value
    }
  })
