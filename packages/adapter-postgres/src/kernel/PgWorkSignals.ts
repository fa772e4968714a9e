/**
 * `WorkSignals` on a PostgreSQL server (docs/DECISIONS.md §23): one connection per process, besides the pool, `LISTEN`s on
 * its schema's channel, `<schema>_work` (migrations 93 and 151 send on it when work commits) and opens a latch per channel. A worker with nothing
 * to do waits for its latch or the fallback, whichever comes first; the fallback catches what no write announces
 * (an email retry coming due) and anything a notification could miss. While the listening connection is down, the
 * workers poll as they would without it, and the listener reconnects.
 *
 * The same channel carries `credentials` (migration 101 sends it when a key or an organization changes), and this
 * provides `CredentialChanges`: authenticated keys may be kept while it listens, and every notification,
 * reconnection or lost connection drops them (docs/DECISIONS.md §27).
 *
 * A connection can stall without closing (a dead peer, a half-open network path): it then delivers nothing and
 * reports nothing. So a heartbeat asks the listening connection itself to answer within a deadline whenever it has
 * been quiet; one that misses it is treated as lost at once, and replaced; and closing the listener (a shutdown)
 * waits for its `UNLISTEN` no longer than that deadline (docs/DECISIONS.md §62).
 *
 * Not for embedded PGlite: it has one connection, which a listener would hold for good, and every writer is in
 * this process anyway.
 */
import { PgClient, PgConnection } from "@effect/sql-pg"
import { Kernel, Organizations } from "@feedback/core"
import { Cause, Clock, Context, Deferred, Effect, Fiber, Latch, Layer, Queue, Schedule, Schema, Scope } from "effect"
import { PgStoreSchema } from "./PgSchema.ts"

export interface PgWorkSignalsOptions {
  /** How long an idle worker waits without a notification; default 20 s. */
  readonly fallbackMs?: number | undefined
  /** How long the listening connection may stay quiet before it is asked to answer; default 5 s. */
  readonly heartbeatMs?: number | undefined
  /** How long it then has to answer before it is treated as lost; default 5 s. */
  readonly heartbeatDeadlineMs?: number | undefined
}

/** The listening connection did not answer its heartbeat in time. */
class StalledListener extends Schema.TaggedError<StalledListener>()("StalledListener", {
  deadlineMs: Schema.Number
}) {
  override get message() {
    return `the listening connection did not answer its heartbeat within ${this.deadlineMs} ms`
  }
}

/** The payload on the channel that announces a changed key or organization (not a worker's channel). */
const CREDENTIALS = "credentials"

/**
 * `LISTEN` on a pinned connection whose `UNLISTEN`, when the scope closes, may take at most `closeWithinMs`: on a
 * stalled connection it would never answer, and a shutdown would hang in it. Past the deadline the closing goes on
 * without it, and releasing the pin with the statement outstanding destroys the connection, which fails the statement.
 */
const listenClosingWithin = (
  pinned: PgConnection.PgConnection,
  channel: string,
  closeWithinMs: number
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer((exit) =>
      Scope.close(scope, exit).pipe(
        Effect.forkDetach,
        Effect.flatMap((closing) => Effect.timeoutOption(Fiber.await(closing), closeWithinMs))
      )
    )
    return yield* Scope.provide(scope)(pinned.listen(channel))
  })

/** The system clock, whatever `Clock` is provided: the listener's liveness is a matter of real time. */
const liveClock = Clock.Clock.defaultValue()

const makePgWorkSignals = (options: PgWorkSignalsOptions = {}) =>
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const schema = yield* PgStoreSchema
    const fallbackMs = options.fallbackMs ?? 20_000
    const heartbeatMs = options.heartbeatMs ?? 5_000
    const heartbeatDeadlineMs = options.heartbeatDeadlineMs ?? 5_000
    const latches = new Map<Kernel.WorkChannel, Latch.Latch>()
    for (const channel of Kernel.workChannels) latches.set(channel, yield* Latch.make(false))
    let listening = false
    // Subscribers' own latches (`WorkSignals.subscribe`): every signal on a channel opens each of them.
    const subscribers = new Map<Kernel.WorkChannel, Set<Latch.Latch>>()
    for (const channel of Kernel.workChannels) subscribers.set(channel, new Set())
    const openSubscribers = (channel: Kernel.WorkChannel) =>
      Effect.forEach(subscribers.get(channel)!, (latch) => latch.open, { discard: true })
    const credentials = Organizations.makeHeardCredentialChanges(() => listening)
    const started = yield* Deferred.make<void>()
    /** Waiters stop trusting the notifications: each looks once and then polls until the listener is back. */
    const untrust = Effect.suspend(() => {
      listening = false
      credentials.heard()
      return Effect.andThen(
        Effect.forEach(latches.values(), (latch) => latch.open, { discard: true }),
        Effect.forEach(Kernel.workChannels, openSubscribers, { discard: true })
      )
    })

    const listen = Effect.scoped(Effect.gen(function*() {
      // A connection of its own, outside the pool: a pool of one (or a busy one) must not give its connection away.
      const connection = yield* PgConnection.make({
        ...pg.config,
        applicationName: `${pg.config.applicationName ?? "feedback"}-listen`
      })
      // Pinned here, so the heartbeat can query the very connection that listens.
      const pinned = yield* connection.pin
      const notifications = yield* listenClosingWithin(pinned, schema.channel, heartbeatDeadlineMs)
      let heardAt = Date.now()
      // A quiet connection answers a statement before the deadline, or the listener gives up on it: untrusting
      // comes first, so kept keys are dropped at the deadline, not after the stalled statement is abandoned.
      const heartbeat = Effect.gen(function*() {
        while (true) {
          yield* Effect.sleep(Math.max(0, heardAt + heartbeatMs - Date.now()))
          if (Date.now() - heardAt < heartbeatMs) continue
          yield* Effect.raceFirst(
            pinned.query("SELECT 1", [], false),
            Effect.sleep(heartbeatDeadlineMs).pipe(
              Effect.andThen(untrust),
              Effect.andThen(Effect.fail(new StalledListener({ deadlineMs: heartbeatDeadlineMs })))
            )
          )
          heardAt = Date.now()
        }
      })
      // Keys kept before (under an older version) may have changed while nobody listened.
      credentials.heard()
      listening = true
      yield* Deferred.succeed(started, undefined)
      // Work may have committed while nobody listened: every worker looks once.
      for (const latch of latches.values()) yield* latch.open
      for (const channel of Kernel.workChannels) yield* openSubscribers(channel)
      const receive = Effect.gen(function*() {
        while (true) {
          const { payload } = yield* Queue.take(notifications)
          heardAt = Date.now()
          if (payload === CREDENTIALS) credentials.heard()
          const latch = latches.get(payload as Kernel.WorkChannel)
          if (latch !== undefined) {
            yield* latch.open
            yield* openSubscribers(payload as Kernel.WorkChannel)
          }
        }
      })
      return yield* Effect.raceFirst(receive, heartbeat)
    })).pipe(
      Effect.ensuring(untrust),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning(
            "work signals: the LISTEN connection failed or stalled; polling until it is back",
            Cause.pretty(cause)
          )
      ),
      Effect.repeat(Schedule.spaced("1 second")),
      // The heartbeat, its deadline and the reconnection delay measure a real connection in real time (as `Date.now()`
      // does), whatever `Clock` the application runs on: under a test clock moved on by days, they would otherwise
      // wake once per heartbeat period of that span (hundreds of thousands of turns, each one a false stall and a
      // reconnection), and an adjustment that should be instant takes seconds.
      Effect.provideService(Clock.Clock, liveClock)
    )
    yield* Effect.forkScoped(listen)
    // Workers start listening with the store; a database that does not answer LISTEN soon leaves them polling.
    yield* Deferred.await(started).pipe(Effect.timeoutOption("5 seconds"))

    const service: Kernel.WorkSignalsService = {
      idle: (channel, pollMs, longestMs) => {
        const latch = latches.get(channel)!
        return listening
          ? Effect.raceFirst(latch.await, Effect.sleep(Math.max(pollMs, longestMs ?? fallbackMs))).pipe(
            Effect.andThen(latch.close)
          )
          : Effect.sleep(pollMs)
      },
      subscribe: (channel) =>
        Effect.gen(function*() {
          // Open at first: whatever committed before the subscription is looked for at once.
          const latch = yield* Latch.make(true)
          const own = subscribers.get(channel)!
          own.add(latch)
          yield* Effect.addFinalizer(() => Effect.sync(() => own.delete(latch)))
          return (pollMs: number) =>
            listening
              ? Effect.raceFirst(
                Effect.as(latch.await, true),
                Effect.as(Effect.sleep(Math.max(pollMs, fallbackMs)), false)
              ).pipe(Effect.tap(() => latch.close))
              : Effect.as(Effect.sleep(pollMs), false)
        })
    }
    return { workSignals: service, credentialChanges: credentials.service }
  })

export const PgWorkSignals = (
  options?: PgWorkSignalsOptions
): Layer.Layer<never, never, PgClient.PgClient | PgStoreSchema> =>
  Layer.effectContext(
    Effect.map(
      makePgWorkSignals(options),
      ({ credentialChanges, workSignals }) =>
        Context.merge(
          Kernel.WorkSignals.context(workSignals),
          Organizations.CredentialChanges.context(credentialChanges)
        )
    )
  )
