/**
 * What a secret key that authenticated yields: its own module, so that `Organizations` (which answers it) and
 * `AuthenticationCache` (which keeps it) both import it without importing each other.
 */
import type { SecretKeyCaller } from "../kernel/Caller.ts"
import type { PublishableKeyId } from "../kernel/Ids.ts"
import type { Organization } from "./Organization.ts"

/** A secret key that authenticated: the caller it makes and the organization it belongs to. */
export interface Authenticated {
  readonly caller: SecretKeyCaller
  readonly organization: Organization
}

/**
 * A publishable key that authenticated (storefront routes only, docs/DECISIONS.md §55): the organization whose
 * published content it reads, the key (its buckets are per key), and its signing secret for signed customer calls.
 */
export interface AuthenticatedPublishableKey {
  readonly keyId: PublishableKeyId
  readonly key: string
  readonly signingSecret: string | null
  readonly organization: Organization
}
