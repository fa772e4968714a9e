/**
 * What a secret key that authenticated yields: its own module, so that `Organizations` (which answers it) and
 * `AuthenticationCache` (which keeps it) both import it without importing each other.
 */
import type { SecretKeyCaller } from "../kernel/Caller.ts"
import type { Organization } from "./Organization.ts"

/** A secret key that authenticated: the caller it makes and the organization it belongs to. */
export interface Authenticated {
  readonly caller: SecretKeyCaller
  readonly organization: Organization
}
