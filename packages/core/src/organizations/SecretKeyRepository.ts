/** Storage of secret keys, by hash only. */
import { Context, Data, type Effect, type Option } from "effect"
import type { OrganizationId, SecretKeyId } from "../kernel/Ids.ts"
import type { SecretKeyRecord } from "./SecretKey.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

/**
 * A key whose hash is already stored, revoked or not. Hashes are unique so that a presented key names exactly one
 * record, and so that a revoked secret can never become live again by being issued a second time.
 */
export class SecretKeyHashTaken extends Data.TaggedError("SecretKeyHashTaken")<{}> {}

export class SecretKeyRepository extends Context.Service<SecretKeyRepository, {
  /** Stores the key; refuses a hash that is already stored. */
  readonly insert: (key: SecretKeyRecord) => Effect.Effect<void, SecretKeyHashTaken>
  /** The one key with this hash, revoked or not. */
  readonly findByHash: (keyHash: string) => Effect.Effect<Option.Option<SecretKeyRecord>>
  readonly listForOrganization: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<SecretKeyRecord>>
  /** Marks the key revoked (keeping the first revocation time); none when no such key in the organization. */
  readonly revoke: (
    organizationId: OrganizationId,
    id: SecretKeyId,
    at: Timestamp
  ) => Effect.Effect<Option.Option<SecretKeyRecord>>
}>()("feedback/SecretKeyRepository") {}
