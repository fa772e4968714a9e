/**
 * A value a store refused although it passed validation: a database data exception (NUL, an impossible date, a
 * number out of range), a uniqueness clash no use-case expected, a row too large to index (docs/SECURITY.md: no
 * input produces a 5xx). Store interfaces have no error channel, so a store reports it as this defect, carrying the
 * tagged error the client should see; `recoverStoreRejection` turns it back into that error at a boundary.
 */
import { Data, Effect } from "effect"
import type { Conflict, InvalidRequest } from "./Errors.ts"

export class StoreRejection extends Data.TaggedError("StoreRejection")<{
  readonly error: InvalidRequest | Conflict
}> {}

export const isStoreRejection = (u: unknown): u is StoreRejection => u instanceof StoreRejection

/** Fails with the tagged error of a `StoreRejection` defect; every other defect stays a defect. */
export const recoverStoreRejection = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | InvalidRequest | Conflict, R> =>
  Effect.catchDefect(effect, (defect) => isStoreRejection(defect) ? Effect.fail(defect.error) : Effect.die(defect))
