/** Storage of secret keys, by hash only. */
import { Context, type Effect, type Option } from "effect"
import type { OrganizationId, SecretKeyId } from "./Ids.ts"
import type { SecretKeyRecord } from "./SecretKey.ts"
import type { Timestamp } from "./Timestamp.ts"

export class SecretKeyRepository extends Context.Service<SecretKeyRepository, {
  readonly insert: (key: SecretKeyRecord) => Effect.Effect<void>
  readonly findByHash: (keyHash: string) => Effect.Effect<Option.Option<SecretKeyRecord>>
  readonly listForOrganization: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<SecretKeyRecord>>
  /** Marks the key revoked (keeping the first revocation time); none when no such key in the organization. */
  readonly revoke: (
    organizationId: OrganizationId,
    id: SecretKeyId,
    at: Timestamp
  ) => Effect.Effect<Option.Option<SecretKeyRecord>>
}>()("feedback/SecretKeyRepository") {}
