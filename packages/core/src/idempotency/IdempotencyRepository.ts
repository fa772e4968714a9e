/**
 * Where idempotency keys live (docs/DECISIONS.md §18): one record per organization and key, shared by every process
 * on the store, so a repeat is recognised wherever it lands. A store decides a claim exactly as `decideClaim` does,
 * atomically against concurrent claims of the same key.
 */
import { Context, Effect } from "effect"
import type { Redaction } from "../kernel/EventOutbox.ts"
import type { ClaimOutcome, IdempotencyClaim, StoredResponse } from "./IdempotencyRules.ts"

export class IdempotencyRepository extends Context.Service<IdempotencyRepository, {
  /**
   * Claims the key for one attempt (`claim.token`), or says why not. Must run outside the request's transaction
   * and commit at once: a concurrent repeat in another process has to see the claim while the first one runs.
   */
  readonly claim: (claim: IdempotencyClaim) => Effect.Effect<ClaimOutcome>
  /**
   * Records the attempt's response if it still holds the claim; false when it lost the claim (another attempt took
   * it over after the lease). Joins the running unit of work, so the response commits with the operation's effects.
   */
  readonly complete: (
    organizationId: string,
    key: string,
    token: string,
    response: StoredResponse
  ) => Effect.Effect<boolean>
  /** Gives up the attempt's claim, when it has recorded nothing (the outcome is not recorded, or it failed). */
  readonly release: (organizationId: string, key: string, token: string) => Effect.Effect<void>
  /**
   * Erasure: applies `redactStoredResponse` to every response the organization has recorded. Runs in the unit of
   * work of the deletion that erases the record.
   */
  readonly redact: (organizationId: string, redaction: Redaction) => Effect.Effect<void>
  /** Deletes at most `limit` keys that expired before `before`; answers how many. */
  readonly purgeExpired: (before: string, limit: number) => Effect.Effect<number>
}>()("feedback/IdempotencyRepository") {}

/**
 * The erasures of the running operation, so `Idempotency.run` redacts the operation's own response before recording
 * it (the deletion that erases a record answers it as it was; its replay must not keep the erased fields).
 */
export const CurrentErasures = Context.Reference<Array<Redaction> | undefined>("feedback/CurrentErasures", {
  defaultValue: () => undefined
})

/**
 * Erases a record's fields from recorded responses: those recorded so far, and the running request's own. A
 * use-case that erases personal data calls it inside its unit of work.
 */
export const eraseFromRecordedResponses = (
  store: IdempotencyRepository["Service"],
  organizationId: string,
  redaction: Redaction
) =>
  Effect.flatMap(CurrentErasures, (pending) => {
    pending?.push(redaction)
    return store.redact(organizationId, redaction)
  })
