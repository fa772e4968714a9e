/**
 * The background worker of import and export jobs (docs/DECISIONS.md §20): claims one job at a time from the store
 * (any process may run it; a claim is exclusive and leased), runs it to its end, and sleeps when none is waiting.
 * Closing the layer interrupts the job in hand; its open batch rolls back and the job is taken up again, by this
 * or another process, from its last committed batch once the lease runs out. Purges expired export files hourly.
 */
import { Jobs, Kernel } from "@feedback/core"
import { Cause, Effect, Layer, Schedule } from "effect"

export interface JobServerOptions {
  /** Run the worker in this process (default true). */
  readonly worker?: boolean | undefined
  /** Lease of a claimed job (`JOB_LEASE_MS`, default 30,000). */
  readonly leaseMs?: number | undefined
  /** Hours an export's file is kept after the job succeeds (`EXPORT_RETENTION_HOURS`, default 168). */
  readonly exportRetentionHours?: number | undefined
  /** Rows per batch (default `DEFAULT_JOB_BATCH_SIZE`, 2,000). */
  readonly batchSize?: number | undefined
  /** How often an idle worker looks for a job (default 1,000 ms), unless the store signals one (`WorkSignals`). */
  readonly pollIntervalMs?: number | undefined
}

const jobSettingsOf = (options: JobServerOptions = {}): Jobs.JobSettingsValues => ({
  leaseMs: options.leaseMs ?? 30_000,
  batchSize: options.batchSize ?? Jobs.DEFAULT_JOB_BATCH_SIZE,
  exportRetentionMs: (options.exportRetentionHours ?? 168) * 3_600_000
})

/** The job settings the `Jobs` service is built with. */
export const jobSettingsLayer = (options: JobServerOptions = {}) =>
  Layer.succeed(Jobs.JobSettings, jobSettingsOf(options))

export const JobWorkerLive = (options: JobServerOptions = {}) =>
  options.worker === false ? Layer.empty : Layer.effectDiscard(Effect.gen(function*() {
    const jobs = yield* Jobs.Jobs
    const owner = yield* Kernel.IdGenerator.use((ids) => ids.next)
    const poll = options.pollIntervalMs ?? 1_000
    const step = jobs.runNext(owner).pipe(
      Effect.flatMap((ran) => ran ? Effect.void : Kernel.WorkSignals.use((signals) => signals.idle("jobs", poll))),
      Effect.catchCause((cause) =>
        Effect.logError("jobs: the worker failed a step; retrying", Cause.pretty(cause)).pipe(
          Effect.andThen(Effect.sleep(poll))
        )
      )
    )
    yield* Effect.forkScoped(Effect.forever(step))
    yield* Effect.forkScoped(
      jobs.purge.pipe(
        Effect.catchCause((cause) => Effect.logError("jobs: purge failed", Cause.pretty(cause))),
        Effect.repeat(Schedule.spaced("1 hour"))
      )
    )
  }))
