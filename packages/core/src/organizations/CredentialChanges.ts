/**
 * Whether, and when, what a secret key authenticates as may have changed: a key revoked, an organization's plan or
 * record updated. `Organizations` keeps authenticated keys for a few seconds only while this can tell it of every
 * such change, from any process, as it commits, so a revocation still takes effect at once (docs/DECISIONS.md §27).
 *
 * `version()` moves on every change; an answer read under one version is good only while the version stays the
 * same. `undefined` means changes made elsewhere cannot be heard right now, and nothing may be kept. That is the
 * default, because a store shared by processes that cannot announce their writes must be asked every time. A
 * PostgreSQL server provides a version moved by `LISTEN/NOTIFY` (`PgWorkSignals`), undefined while not listening.
 */
import { Context } from "effect"

export interface CredentialChangesService {
  /** The current version, or `undefined` while changes cannot all be heard (then nothing is cached). */
  readonly version: () => number | undefined
  /** This process changed a key or an organization; called right after the change, before its answer is sent. */
  readonly announce: () => void
}

/** Nothing is heard: every authentication reads the store. */
export const unheardCredentialChanges: CredentialChangesService = { version: () => undefined, announce: () => {} }

export const CredentialChanges = Context.Reference<CredentialChangesService>("feedback/CredentialChanges", {
  defaultValue: () => unheardCredentialChanges
})

/**
 * A version moved by this process's own announcements and by `heard()` (a notification from the store), good only
 * while `listening()` says no notification can have been missed.
 */
export const makeHeardCredentialChanges = (listening: () => boolean) => {
  let version = 0
  const service: CredentialChangesService = {
    version: () => (listening() ? version : undefined),
    announce: () => {
      version++
    }
  }
  return { service, heard: service.announce }
}
