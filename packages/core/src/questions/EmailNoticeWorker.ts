/**
 * Sends the email outbox (`EmailOutbox.ts`) after commit, in the background of a server process.
 *
 * Guarantees:
 * - A notice committed with its answer is sent even if the process crashes right after the commit: it stays
 *   `pending` and the next worker (after a restart, or another process) sends it.
 * - Never twice: a worker claims a notice (`pending` → `sending`, committed) immediately before calling the
 *   transport, so concurrent workers and processes never send the same notice.
 * - The one uncertain window is a crash between the transport accepting the message and the outcome being
 *   recorded. There we choose at most once: a claim older than `interruptedAfterMs` (far longer than a send can
 *   take) is marked `failed` with "interrupted", never resent; an asker may miss that one email but never gets
 *   two. The window is a few milliseconds per message; a transport that answers "certainly not accepted"
 *   (`NotSent`, not permanent) is retried with back-off, one that cannot tell (`Uncertain`) is not.
 * - Shutdown (closing the worker's scope) never cuts a claimed notice short: claim, send and record run
 *   uninterruptibly, and the transport must finish within its own timeouts.
 */
import { WorkSignals } from "../kernel/WorkSignals.ts"
import { Cause, Effect, Layer, Option } from "effect"
import { EmailOutboxRepository, type EmailNotice, type NoticeCompletion } from "./EmailOutbox.ts"
import { Mailer, type MailerResult } from "./Mailer.ts"
import { ProductQuestionRepository } from "./ProductQuestionRepository.ts"
import { fromMillis, now, type Timestamp, toMillis } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"

export interface EmailWorkerSettings {
  /** Names this worker's claims; unique per process. */
  readonly workerId: string
  /** Pause between looks at the outbox when it is empty. */
  readonly pollIntervalMs: number
  /** A claim older than this is from a worker that died: its notice is failed as interrupted, not resent. */
  readonly interruptedAfterMs: number
  /** Transport calls per notice before a retryable failure becomes final. */
  readonly maxAttempts: number
  /** Back-off after the first retryable failure; doubles per attempt, capped at an hour. */
  readonly retryBaseMs: number
}

export const defaultEmailWorkerSettings = (workerId: string): EmailWorkerSettings => ({
  workerId,
  pollIntervalMs: 1_000,
  interruptedAfterMs: 10 * 60_000,
  maxAttempts: 5,
  retryBaseMs: 30_000
})

export const INTERRUPTED_ERROR = "interrupted: the sending worker stopped before recording the outcome; not resent"

type WorkerServices = EmailOutboxRepository | ProductQuestionRepository | Mailer | UnitOfWork

/** What to record after the transport answered `result` for the `attempts`-th time. Pure. */
export const completionFor = (
  result: MailerResult,
  attempts: number,
  at: Timestamp,
  settings: Pick<EmailWorkerSettings, "maxAttempts" | "retryBaseMs">
): NoticeCompletion => {
  switch (result._tag) {
    case "Sent":
      return { status: "sent", error: null, at }
    case "Logged":
      return { status: "logged", error: null, at }
    case "Uncertain":
      return { status: "failed", error: `uncertain, not retried: ${result.error}`, at }
    case "NotSent": {
      if (result.permanent) return { status: "failed", error: `refused: ${result.error}`, at }
      if (attempts >= settings.maxAttempts) {
        return { status: "failed", error: `gave up after ${attempts} attempts: ${result.error}`, at }
      }
      const delay = Math.min(settings.retryBaseMs * 2 ** Math.max(0, attempts - 1), 3_600_000)
      return { status: "pending", error: result.error, at, nextAttemptAt: fromMillis(toMillis(at) + delay) }
    }
  }
}

const sendSafely = (notice: EmailNotice): Effect.Effect<MailerResult, never, Mailer> =>
  Mailer.use((m) => m.send({ id: notice.id, to: notice.recipient, subject: notice.subject, text: notice.text })).pipe(
    Effect.catchCause((cause) =>
      Effect.succeed<MailerResult>({
        _tag: "Uncertain",
        error: `transport defect: ${Cause.pretty(cause).split("\n")[0]}`
      })
    )
  )

/**
 * Claims the oldest due notice, sends it and records the outcome (setting the question's `notifiedAt` when sent).
 * False when nothing was due.
 */
export const deliverNextNotice = (
  settings: EmailWorkerSettings
): Effect.Effect<boolean, never, WorkerServices> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const outbox = yield* EmailOutboxRepository
    const uow = yield* UnitOfWork
    const claimed = yield* outbox.claimNext(settings.workerId, yield* now)
    if (Option.isNone(claimed)) return false
    const notice = claimed.value
    const result = yield* sendSafely(notice)
    const completion = completionFor(result, notice.attempts, yield* now, settings)
    yield* uow.transaction(Effect.gen(function*() {
      const applied = yield* outbox.complete(notice.organizationId, notice.id, settings.workerId, completion)
      if (applied && completion.status === "sent") {
        yield* ProductQuestionRepository.use((r) =>
          r.markNotified(notice.organizationId, notice.productQuestionId, completion.at)
        )
      }
    }))
    return true
  }))

/** Fails the notices of workers that died between claim and outcome (see the module comment). */
export const failInterruptedNotices = (
  settings: Pick<EmailWorkerSettings, "interruptedAfterMs">
): Effect.Effect<number, never, EmailOutboxRepository> =>
  Effect.gen(function*() {
    const at = yield* now
    return yield* EmailOutboxRepository.use((o) =>
      o.failInterrupted(fromMillis(toMillis(at) - settings.interruptedAfterMs), at, INTERRUPTED_ERROR)
    )
  })

/** Sends every due notice, up to `max`; returns how many were handled. */
export const deliverDueNotices = (
  settings: EmailWorkerSettings,
  max = 100
): Effect.Effect<number, never, WorkerServices> =>
  Effect.gen(function*() {
    let handled = 0
    while (handled < max && (yield* deliverNextNotice(settings))) handled++
    return handled
  })

/** The worker loop: recover, send what is due, wait, forever. A defect in one round is logged, not fatal. */
const runEmailNoticeWorker = (settings: EmailWorkerSettings): Effect.Effect<never, never, WorkerServices> =>
  Effect.gen(function*() {
    yield* failInterruptedNotices(settings)
    yield* deliverDueNotices(settings)
  }).pipe(
    Effect.catchCause((cause) => Effect.logError("email notice worker round failed", Cause.pretty(cause))),
    Effect.andThen(WorkSignals.use((signals) => signals.idle("email", settings.pollIntervalMs))),
    Effect.forever
  )

/** Runs the worker for the lifetime of the layer (a server process). */
export const EmailNoticeWorker = (
  settings: EmailWorkerSettings
): Layer.Layer<never, never, WorkerServices> => Layer.effectDiscard(Effect.forkScoped(runEmailNoticeWorker(settings)))
