/**
 * The survey worker of a server process (docs/DECISIONS.md §48): sends the due steps of survey flows with the server's
 * mail transport, beside the webhook dispatcher and the asker-notice worker. Any number of processes run it over one
 * store; the store's claims give each due step to one of them (`SurveySending.ts` in the core).
 *
 * Idle, it waits for the earliest due step it knows of or for a signal that one became due, whichever comes first:
 * on a PostgreSQL server the signal is `LISTEN/NOTIFY` (a survey whose next step is due wakes every process), so an
 * idle server with active flows asks its database once per wake-up, not in a loop: at the earliest due step, or at
 * the latest after a tenth of the recovery period (no sooner fallback, docs/DECISIONS.md §76). With the memory store
 * or embedded PGlite (one process) `WorkSignals` polls, as for the other workers.
 */
import { Kernel, Surveys } from "@feedback/core"
import { Cause, Effect, Layer, Option } from "effect"
import { mailerFor, type SmtpSettings, workerIdOfProcess } from "../questions/SmtpMailer.ts"

/** How long to sleep until `next` (a due time), at most `cap` and at least nothing. */
const untilDue = (
  next: Option.Option<Kernel.Timestamp.Timestamp>,
  at: Kernel.Timestamp.Timestamp,
  capMs: number
): number =>
  Option.match(next, {
    onNone: () => capMs,
    onSome: (due) => Math.max(0, Math.min(capMs, Kernel.Timestamp.toMillis(due) - Kernel.Timestamp.toMillis(at)))
  })

/** The worker loop: recover claims of dead workers, run what is due, wait, forever. A failed round is logged. */
export const runSurveyWorker = (settings: Surveys.SurveyWorkerSettings) =>
  Effect.gen(function*() {
    yield* Surveys.failInterruptedSurveySteps(settings)
    yield* Surveys.runDueSurveySteps(settings)
    const next = yield* Surveys.SurveyRepository.use((r) => r.nextDueAt)
    // The longest wait is the recovery period's tenth, so a dead worker's claim is failed in time. Steps that come
    // due with time are the worker's own to wait for, so it needs no store fallback sooner (docs/DECISIONS.md §76).
    const cap = Math.max(settings.pollIntervalMs, Math.floor(settings.interruptedAfterMs / 10))
    const wait = untilDue(next, yield* Kernel.Timestamp.now, cap)
    if (wait > 0) {
      yield* Effect.raceFirst(
        Kernel.WorkSignals.use((signals) => signals.idle("surveys", settings.pollIntervalMs, cap)),
        Effect.sleep(wait)
      )
    }
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.logError("survey worker round failed", Cause.pretty(cause)).pipe(
        Effect.andThen(Effect.sleep(settings.pollIntervalMs))
      )
    ),
    Effect.forever
  )

/** Runs the worker for the lifetime of the layer. */
export const SurveyWorker = (settings: Surveys.SurveyWorkerSettings) =>
  Layer.effectDiscard(Effect.forkScoped(runSurveyWorker(settings)))

/** The worker with the server's mail transport (SMTP when set, the log otherwise). */
export const SurveyWorkerLive = (smtp: SmtpSettings | undefined, settings?: Partial<Surveys.SurveyWorkerSettings>) =>
  SurveyWorker({ ...Surveys.defaultSurveyWorkerSettings(workerIdOfProcess()), ...settings }).pipe(
    Layer.provide(mailerFor(smtp))
  )
