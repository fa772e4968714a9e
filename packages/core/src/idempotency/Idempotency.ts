/**
 * Idempotent retries (docs/DECISIONS.md §18): run an operation at most once per organization and key, and answer
 * repeats with the recorded response. The HTTP adapter says what a response is (`recordOf`); this service owns the
 * order of claim, run, record and release, so no adapter can get it half right.
 */
import { Clock, Context, Duration, Effect, Exit, Layer, Schedule } from "effect"
import { Conflict, IdempotencyKeyReused } from "../kernel/Errors.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import { fromMillis } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import type { Redaction } from "../kernel/EventOutbox.ts"
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  redactStoredResponse,
  type StoredResponse
} from "./IdempotencyRules.ts"
import { CurrentErasures, IdempotencyRepository } from "./IdempotencyRepository.ts"

export interface IdempotentRequest {
  readonly organizationId: string
  readonly key: string
  readonly fingerprint: string
}

export interface IdempotentOptions<A, E> {
  /** What to record of an outcome; `undefined` records nothing (the key is released for a retry). */
  readonly recordOf: (exit: Exit.Exit<A, E>) => Effect.Effect<StoredResponse | undefined>
  /**
   * True (the default): the operation runs inside one unit of work that also records its response, so both commit
   * or neither does. False for an operation that must commit before it answers (a webhook ping waits for the
   * dispatcher to send the delivery it committed); its response is recorded right after it.
   */
  readonly atomic?: boolean | undefined
}

export type IdempotentResult<A> =
  | { readonly _tag: "Ran"; readonly value: A }
  | { readonly _tag: "Replayed"; readonly response: StoredResponse }

const conflictInProgress = () =>
  new Conflict({ message: "A request with this Idempotency-Key is still running; retry after it has finished." })

export class Idempotency extends Context.Service<Idempotency, {
  readonly run: <A, E, R>(
    request: IdempotentRequest,
    operation: Effect.Effect<A, E, R>,
    options: IdempotentOptions<A, E>
  ) => Effect.Effect<IdempotentResult<A>, E | Conflict | IdempotencyKeyReused, R>
}>()("feedback/Idempotency") {
  static readonly layer = Layer.effect(
    Idempotency,
    Effect.gen(function*() {
      const store = yield* IdempotencyRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator

      // Uninterruptible from the claim until the finalizer that settles it is in place; only the operation is not.
      const run = <A, E, R>(
        request: IdempotentRequest,
        operation: Effect.Effect<A, E, R>,
        options: IdempotentOptions<A, E>
      ) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const { organizationId, key } = request
            const token = yield* nextIdFrom<string>(ids)
            const millis = yield* Clock.currentTimeMillis
            const outcome = yield* store.claim({
              ...request,
              token,
              now: fromMillis(millis),
              leaseUntil: fromMillis(millis + IDEMPOTENCY_LEASE_MS),
              expiresAt: fromMillis(millis + IDEMPOTENCY_TTL_MS)
            })
            switch (outcome._tag) {
              case "Replay":
                return { _tag: "Replayed", response: outcome.response } as IdempotentResult<A>
              case "InProgress":
                return yield* Effect.fail(conflictInProgress())
              case "Reused":
                return yield* Effect.fail(IdempotencyKeyReused.default())
            }
            // Claimed. A success is recorded with its effects (atomic) or right after them; a failure's effects were
            // rolled back, so recording it separately is exact too. Lost the claim → roll back and answer 409.
            const erasures: Array<Redaction> = []
            const record = (exit: Exit.Exit<A, E>) =>
              Effect.flatMap(options.recordOf(exit), (response) =>
                response === undefined
                  ? Effect.succeed(false)
                  : Effect.flatMap(
                    store.complete(organizationId, key, token, erasures.reduce(redactStoredResponse, response)),
                    (held) => held ? Effect.succeed(true) : Effect.fail(conflictInProgress())
                  ))
            // A success with nothing to record (a status such as 400, a streamed body) frees the key like a failure.
            const recordedSuccess = (value: A) =>
              Effect.flatMap(
                record(Exit.succeed(value)),
                (recorded) =>
                  recorded ? Effect.succeed(value) : Effect.as(store.release(organizationId, key, token), value)
              )
            const observed = Effect.provideService(operation, CurrentErasures, erasures)
            const ran = options.atomic === false
              ? Effect.flatMap(observed, recordedSuccess)
              : uow.transaction(Effect.flatMap(observed, recordedSuccess))
            // On failure the effects were rolled back: record what the operation decided, else free the key. A finalizer,
            // so a client that hangs up mid-request does not leave its key blocked until the lease ends.
            const settle = (exit: Exit.Exit<A, E | Conflict>) =>
              Exit.isSuccess(exit) ? Effect.void : Effect.gen(function*() {
                const recorded = Exit.hasInterrupts(exit)
                  ? false
                  : yield* Effect.exit(record(exit as Exit.Exit<A, E>)).pipe(
                    Effect.map((e) => Exit.isSuccess(e) && e.value)
                  )
                if (!recorded) {
                  yield* store.release(organizationId, key, token)
                }
              })
            const value = yield* Effect.onExit(restore(ran), settle)
            return { _tag: "Ran", value } as IdempotentResult<A>
          })
        ).pipe(Effect.withSpan("Idempotency.run"))

      return Idempotency.of({ run })
    })
  )
}

const PURGE_BATCH = 1_000

/** One pass: deletes expired keys batch by batch (a pause between), until a batch comes back short. */
const purgeExpiredIdempotencyKeys = Effect.gen(function*() {
  const store = yield* IdempotencyRepository
  const before = fromMillis(yield* Clock.currentTimeMillis)
  let total = 0
  for (;;) {
    const purged = yield* store.purgeExpired(before, PURGE_BATCH)
    total += purged
    if (purged < PURGE_BATCH) return total
    yield* Effect.sleep(Duration.millis(100))
  }
})

/**
 * Runs a pass now and then every `every` (an hour by default); a failed pass is logged and retried next time. An
 * expired key is already ignored by claims, so the job only bounds the table's size.
 */
export const idempotencyRetentionJob = (every: Duration.Input = Duration.hours(1)) =>
  purgeExpiredIdempotencyKeys.pipe(
    Effect.catchCause((cause) => Effect.logWarning("idempotency key purge failed", cause)),
    Effect.repeat(Schedule.spaced(every))
  )
