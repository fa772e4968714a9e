/**
 * Authenticated secret keys kept for the hot path, by key hash: a hit skips the key and organization reads (two
 * round trips on a PostgreSQL server). An entry is used only under the `CredentialChanges` version it was read under,
 * and for at most `maxAgeMs`; an answer read while the version moved is not kept at all, so a revocation that
 * commits during a lookup is never cached away. Failures are never kept: a key issued a moment ago works at once.
 */
import type { Authenticated } from "./Authenticated.ts"
import type { CredentialChangesService } from "./CredentialChanges.ts"

export interface AuthenticationCacheOptions {
  /** Entries kept at most (the oldest goes first); default 10,000. */
  readonly maxEntries?: number | undefined
  /** Age after which an entry is read again even without a change; default 60 s. */
  readonly maxAgeMs?: number | undefined
}

interface Entry<A> {
  readonly version: number
  readonly readAtMs: number
  readonly authenticated: A
}

/** Kept answers by key; `A` is a secret key's `Authenticated` or a publishable key's storefront caller. */
export interface AuthenticationCache<A = Authenticated> {
  /** The kept answer for `keyHash`, if still good at `nowMs`. */
  readonly get: (keyHash: string, nowMs: number) => A | undefined
  /** The version to read under, or `undefined` when nothing may be kept. */
  readonly version: () => number | undefined
  /** Keeps `authenticated`, read under `version` (from `version()` before the read), unless the version moved. */
  readonly set: (keyHash: string, version: number | undefined, nowMs: number, authenticated: A) => void
}

export const make = <A = Authenticated>(
  changes: CredentialChangesService,
  options: AuthenticationCacheOptions = {}
): AuthenticationCache<A> => {
  const maxEntries = options.maxEntries ?? 10_000
  const maxAgeMs = options.maxAgeMs ?? 60_000
  const entries = new Map<string, Entry<A>>()
  return {
    version: changes.version,
    get: (keyHash, nowMs) => {
      const entry = entries.get(keyHash)
      if (entry === undefined) return undefined
      if (entry.version === changes.version() && nowMs - entry.readAtMs < maxAgeMs && nowMs >= entry.readAtMs) {
        return entry.authenticated
      }
      entries.delete(keyHash)
      return undefined
    },
    set: (keyHash, version, nowMs, authenticated) => {
      if (version === undefined || version !== changes.version()) return
      entries.delete(keyHash) // re-inserted last: the Map's order is the eviction order
      entries.set(keyHash, { version, readAtMs: nowMs, authenticated })
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
    }
  }
}
