/**
 * The caller of a storefront route: a publishable key that authenticated, and the client address its buckets are
 * counted per (docs/DECISIONS.md §55). Not a `Caller`: it holds no permission and reaches only the storefront reads.
 */
import { Context } from "effect"
import type { AuthenticatedPublishableKey } from "../organizations/Authenticated.ts"

export interface StorefrontCaller extends AuthenticatedPublishableKey {
  /** The peer address, or the right-most untrusted `X-Forwarded-For` hop behind a trusted proxy. */
  readonly clientAddress: string
  /**
   * The organization's storefront content version, when the store read it with this request's spend
   * (`RateLimitRepository.spendWithStorefrontVersion`); a read's tag probes it otherwise (docs/DECISIONS.md §70).
   */
  readonly storefrontVersion?: string | undefined
}

export class CurrentStorefrontCaller extends Context.Service<CurrentStorefrontCaller, StorefrontCaller>()(
  "feedback/CurrentStorefrontCaller"
) {}
