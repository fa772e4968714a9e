/**
 * How background workers (webhook fan-out and delivery, answer notices) wait for work. Each loop that found nothing
 * calls `idle` with its channel: by default that is a short sleep — polling, which costs nothing with the memory store
 * or the embedded database, whose writers share the process. A store whose writes come from other processes (a
 * PostgreSQL server) provides one that wakes on a notification sent when such work commits, and otherwise sleeps a
 * fallback of seconds, so an idle server asks its database next to nothing (docs/DECISIONS.md §23).
 */
import { Context, Effect, type Scope } from "effect"

/**
 * What a signal announces: new domain events, deliveries that may be claimable, answer notices, import/export jobs,
 * survey steps that became due.
 */
export type WorkChannel = "events" | "deliveries" | "email" | "jobs" | "surveys"

export const workChannels: ReadonlyArray<WorkChannel> = ["events", "deliveries", "email", "jobs", "surveys"]

export interface WorkSignalsService {
  /**
   * Returns when work on `channel` may be waiting, or after `pollMs` if the store cannot tell (or after its own
   * fallback if it can). A signal that arrived while nobody waited is not lost: the next `idle` returns at once.
   * `longestMs`: a worker whose own clock covers the work no write announces (the survey worker knows its next due
   * step) may wait that long instead of the store's fallback (docs/DECISIONS.md §76).
   */
  readonly idle: (channel: WorkChannel, pollMs: number, longestMs?: number) => Effect.Effect<void>
  /**
   * A waiter of one's own on `channel`, for a consumer beside the workers (the in-process event stream): every signal
   * opens every subscriber's latch, so a worker's wake-up never takes one meant for it. Its `wait` returns true when a
   * signal arrived since the last wait returned, false after `pollMs` (or the store's fallback). Absent: polling.
   */
  readonly subscribe?: (
    channel: WorkChannel
  ) => Effect.Effect<(pollMs: number) => Effect.Effect<boolean>, never, Scope.Scope>
}

/** Polling: the default of every store. */
const pollingWorkSignals: WorkSignalsService = { idle: (_channel, pollMs) => Effect.sleep(pollMs) }

export const WorkSignals = Context.Reference<WorkSignalsService>("feedback/WorkSignals", {
  defaultValue: () => pollingWorkSignals
})
