/**
 * A pure read need not wait for its rate-limit spend (docs/DECISIONS.md §28): on a store whose spend is a round
 * trip, the read starts while the spend is in flight, and the request costs the longer of the two instead of their
 * sum. Nothing else changes: the decision is taken exactly as before, and a refusal answers the same 429 with the
 * read interrupted and its result, success or error, discarded, so nothing is admitted beyond what the bucket allows.
 * A spend that answers at once (the memory store, a refusal this process already knows) runs alone, as before, so a
 * refused request never starts the read.
 *
 * Only endpoints that read and write nothing qualify, listed by key: a write, or a read whose handler may write
 * (a download, a feed with a cursor), must never run before it is admitted.
 */
import type { RateLimits } from "@feedback/core"
import { Effect, Fiber } from "effect"

export const readsAlongsideSpend: ReadonlySet<string> = new Set([
  "GET /reviews",
  "GET /reviews/{id}",
  "GET /products",
  "GET /products/{id}",
  "GET /customers",
  "GET /customers/{id}",
  "GET /sites",
  "GET /sites/{id}",
  "GET /product-questions",
  "GET /product-questions/{id}"
])

/**
 * Runs `spend`, then `admit` with its decision (a response to answer with, or undefined to go on), then `read`; for
 * a key of `readsAlongsideSpend` whose spend did not answer at once, `read` runs meanwhile.
 */
export const spendThenRead = <B, A, E, R, E2, R2>(
  key: string,
  spend: Effect.Effect<RateLimits.SpendDecision>,
  admit: (decision: RateLimits.SpendDecision) => Effect.Effect<B | undefined, E2, R2>,
  read: Effect.Effect<A, E, R>
): Effect.Effect<A | B, E | E2, R | R2> =>
  readsAlongsideSpend.has(key)
    ? spendAlongsideRead(spend, admit, read)
    : Effect.gen(function*() {
      const answer = yield* admit(yield* spend)
      return answer !== undefined ? answer : yield* read
    })

/**
 * `spendThenRead` for a read known to be pure (a storefront read, docs/DECISIONS.md §55): `read` runs while a spend
 * that did not answer at once is in flight; the decision still comes first.
 */
export const spendAlongsideRead = <B, A, E, R, E2, R2>(
  spend: Effect.Effect<RateLimits.SpendDecision>,
  admit: (decision: RateLimits.SpendDecision) => Effect.Effect<B | undefined, E2, R2>,
  read: Effect.Effect<A, E, R>
): Effect.Effect<A | B, E | E2, R | R2> =>
  Effect.gen(function*() {
    const spending = yield* Effect.forkChild(spend, { startImmediately: true })
    if (spending.pollUnsafe() !== undefined) {
      const answer = yield* admit(yield* Fiber.join(spending))
      return answer !== undefined ? answer : yield* read
    }
    const reading = yield* Effect.forkChild(Effect.exit(read), { startImmediately: true })
    const answer = yield* admit(yield* Fiber.join(spending))
    if (answer !== undefined) {
      yield* Fiber.interrupt(reading)
      return answer
    }
    return yield* yield* Fiber.join(reading)
  })
