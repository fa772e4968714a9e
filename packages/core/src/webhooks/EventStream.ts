/**
 * Committed events in process (docs/DECISIONS.md §65): a host consumes every organization's events as an Effect
 * `Stream`, without HTTP or webhooks, with the feed's guarantees (docs/DECISIONS.md §17): events of committed
 * changes only, in the one order of the feed's positions, each exactly once, and resumable after any position it
 * handed out (keep `position` with what the host did with the event, and pass it back as `after`).
 *
 * It reads the store's feed in batches; when it is caught up it waits for the store's signal of new events (LISTEN/
 * NOTIFY on a PostgreSQL server, `WorkSignals.subscribe`) or polls. A signalled event may become visible only once
 * older transactions end (the feed's finality), so after a signal that showed nothing it looks again soon, backing off.
 */
import { Duration, Effect, Option, Stream } from "effect"
import { type DomainEvent, EventOutbox, type FeedPosition } from "../kernel/EventOutbox.ts"
import { WorkSignals } from "../kernel/WorkSignals.ts"
import type { EventName } from "./EventCatalog.ts"

/** An event as the stream hands it out. */
export interface StreamedEvent {
  /** Where the stream stands once this event is handled: pass it as `after` to resume right after it. */
  readonly position: FeedPosition
  readonly event: DomainEvent
}

export interface EventStreamOptions {
  /** Resume after this position (a `position` the stream handed out); absent: from the oldest event kept. */
  readonly after?: FeedPosition | undefined
  /** Only these events; absent: every event. */
  readonly events?: ReadonlyArray<EventName> | undefined
  /** Events read from the store at a time (default 100). */
  readonly batchSize?: number | undefined
  /** How often to look when the store gives no signal of new events (default 250 ms). */
  readonly pollMs?: number | undefined
}

/** Looks after a signal that showed nothing: 25 ms, doubling to 1 s, about 10 s in all. */
const settleDelays = [25, 50, 100, 200, 400, 800, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]

interface Cursor {
  readonly after: FeedPosition | undefined
  /** The next step of the looks after a signal; undefined: wait for the next signal. */
  readonly settling: number | undefined
}

/** Every committed event from `options.after` on, forever (interrupt the stream to stop). */
export const committedEvents = (
  options: EventStreamOptions = {}
): Stream.Stream<StreamedEvent, never, EventOutbox> =>
  Stream.unwrap(Effect.gen(function*() {
    const outbox = yield* EventOutbox
    const signals = yield* WorkSignals
    const pollMs = options.pollMs ?? 250
    const limit = options.batchSize ?? 100
    if (!Number.isInteger(limit) || limit < 1) return yield* Effect.die(new RangeError("batchSize must be at least 1"))
    const events = options.events === undefined ? undefined : [...new Set(options.events)]
    const wait = signals.subscribe === undefined
      ? (ms: number) => Effect.as(Effect.sleep(ms), false)
      : yield* signals.subscribe("events")
    return Stream.paginate<Cursor, StreamedEvent>(
      { after: options.after, settling: undefined },
      (cursor) =>
        Effect.flatMap(outbox.feedAll({ after: cursor.after, limit, events }), (page): Effect.Effect<
          readonly [ReadonlyArray<StreamedEvent>, Option.Option<Cursor>]
        > => {
          if (page.length > 0) {
            const next: Cursor = { after: page[page.length - 1]!.position, settling: undefined }
            return Effect.succeed(
              [page.map((e) => ({ position: e.position, event: e.event })), Option.some(next)] as const
            )
          }
          const delay = cursor.settling === undefined ? undefined : settleDelays[cursor.settling]
          const waited = delay === undefined
            ? Effect.map(
              wait(pollMs),
              (signalled): Cursor => ({ after: cursor.after, settling: signalled ? 0 : undefined })
            )
            : Effect.as(Effect.sleep(Duration.millis(delay)), { after: cursor.after, settling: cursor.settling! + 1 })
          return Effect.map(waited, (next) => [[], Option.some(next)] as const)
        })
    )
  }))
