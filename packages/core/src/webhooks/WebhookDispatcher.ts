/**
 * Webhook delivery (docs/DECISIONS.md §7, spec: Events). The rules live here; the store keeps the state and the adapter
 * supplies the HTTP client (`WebhookTransport`) and DNS (`HostResolver`).
 *
 * A dispatcher runs in the background of a server process, off the request path:
 * 1. **Fan-out**: takes committed outbox events not yet fanned out and, in one unit of work, creates one pending
 *    delivery per (event, webhook subscribed to that exact name, registered when it occurred), each with its own
 *    idempotency key and the exact body to send. The taken events are marked in that same unit of work, so an event
 *    is fanned out once even with several processes, and never lost by a crash (the mark rolls back with it).
 * 2. **Claim**: moves pending deliveries to in-flight for this dispatcher, atomically, before any POST. Several
 *    processes never claim the same delivery.
 * 3. **POST** the stored body, signed when the webhook has a secret, with a timeout and no redirects; record the
 *    outcome (2xx delivered, anything else failed). Never retried. Outcomes that finish together are recorded in
 *    one write, alongside the next claim: one pump records and claims, so under load the store works in batches.
 *    The pump claims a little ahead of the free slots, so a POST that finishes starts the next without waiting
 *    for the store.
 * 4. **Recovery**: dispatchers renew a lease (heartbeat). In-flight deliveries of a dispatcher whose lease lapsed
 *    (it crashed between claim and outcome) become `failed` with error "interrupted": the receiver may or may not
 *    have got them, and resending could deliver a key twice.
 *
 * Bounded: at most `concurrency` POSTs at once per process and, across processes approximately,
 * `perWebhookConcurrency` per webhook and `perOrganizationConcurrency` per organization, claimed organizations in
 * turn, so a slow or dead receiver holds only its own organization's share of the slots (docs/FAIRNESS.md).
 * Shutdown (closing the scope) stops claiming, lets in-flight POSTs finish (each within the timeout), hands the
 * deliveries it claimed ahead but never sent back to pending, then retires the dispatcher's lease.
 */
import { Cause, Clock, Context, Effect, FiberSet, Latch, Result, type Scope } from "effect"
import type { DomainEvent } from "../kernel/EventOutbox.ts"
import type { DomainEventId, OrganizationId, WebhookDeliveryId } from "../kernel/Ids.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import { fromMillis, now, type Timestamp, toMillis } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import { WorkSignals } from "../kernel/WorkSignals.ts"
import { pendingDelivery, type WebhookDeliveryRecord, type WebhookEnvelope, type WebhookRecord } from "./Webhook.ts"
import {
  checkDestination,
  checkDestinationLocally,
  CurrentWebhookSettings,
  type Destination,
  type DestinationRefused,
  HostResolver,
  type WebhookSettings
} from "./WebhookDestination.ts"
import {
  type ClaimedDelivery,
  type CompletedDelivery,
  type DeliveryOutcome,
  WebhookRepository
} from "./WebhookRepository.ts"
import { type DeliveryOutcomeLabel, recordWebhookDeliveries } from "./WebhookMetrics.ts"
import { signWebhookBody, standardWebhookSignature } from "./WebhookSignature.ts"

/** How much of a failed response's body is kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 1024

const WEBHOOK_USER_AGENT = "feedback-webhooks/1.0"

/** The error of a delivery whose dispatcher stopped between claiming it and recording the outcome. */
export const INTERRUPTED = "interrupted"

export interface OutgoingWebhook {
  readonly url: URL
  /** Connect to this (already checked) address instead of resolving the host again; undefined: resolve. */
  readonly address: string | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
}

export type TransportResult =
  | {
    readonly _tag: "Response"
    readonly status: number
    /** The first `RESPONSE_EXCERPT_BYTES` bytes of the body as UTF-8 (read only for non-2xx answers). */
    readonly bodyExcerpt: string
  }
  | { readonly _tag: "NetworkError"; readonly message: string }
  | { readonly _tag: "TimedOut" }

/**
 * One HTTP POST. Must not follow redirects, must finish within `timeoutMs` by itself (it runs uninterruptibly so
 * that shutdown waits for it), and reports every failure as a value, never an error.
 */
export class WebhookTransport extends Context.Service<WebhookTransport, {
  readonly post: (request: OutgoingWebhook) => Effect.Effect<TransportResult>
}>()("feedback/WebhookTransport") {}

// --- pure rules --------------------------------------------------------------------------------------------------

/** Webhooks that get `event`: same organization, subscribed to its exact name, registered when it occurred. */
const subscribersOf = (event: DomainEvent, webhooks: ReadonlyArray<WebhookRecord>): ReadonlyArray<WebhookRecord> =>
  webhooks.filter((w) =>
    w.organizationId === event.organizationId && w.events.includes(event.event as never) &&
    w.createdAt <= event.occurredAt
  )

/** The ordering key of an event's deliveries: its resource and record id (`review/0190…`), when it has one. */
const recordKeyOf = (event: Pick<DomainEvent, "event" | "data">): string | null => {
  const id = typeof event.data === "object" && event.data !== null
    ? (event.data as { readonly id?: unknown }).id
    : undefined
  return typeof id === "string" && id !== "" ? `${event.event.slice(0, event.event.indexOf("."))}/${id}` : null
}

/** The exact bytes POSTed: the envelope with its keys in the documented order. */
export const envelopeBody = (event: DomainEvent, idempotencyKey: string): string => {
  const envelope: WebhookEnvelope = {
    event: event.event,
    timestamp: event.occurredAt,
    idempotencyKey,
    eventId: event.id,
    data: event.data
  }
  return JSON.stringify(envelope)
}

/**
 * `envelopeBody` for every delivery of one event: what does not depend on the delivery (the event's name, time, id
 * and data) is serialized once, and each delivery adds its idempotency key. The same bytes as `envelopeBody`.
 */
export const envelopeBodies = (event: DomainEvent): (idempotencyKey: string) => string => {
  const head = `{"event":${JSON.stringify(event.event)},"timestamp":${
    JSON.stringify(event.occurredAt)
  },"idempotencyKey":`
  const data: string | undefined = JSON.stringify(event.data)
  const tail = `,"eventId":${JSON.stringify(event.id)}${data === undefined ? "" : `,"data":${data}`}}`
  return (idempotencyKey) => head + JSON.stringify(idempotencyKey) + tail
}

/**
 * The headers of one attempt: the spec's `X-Webhook-Signature` over the body, and the Standard Webhooks headers
 * (docs/DECISIONS.md §17): `webhook-id` (the delivery's idempotency key), `webhook-timestamp` (Unix seconds of this
 * attempt) and, with a secret, `webhook-signature`.
 */
const requestHeaders = (
  body: string,
  hmacSecret: string | null,
  attempt: {
    readonly webhookId: string
    readonly timestampSeconds: number
    /** A rotation's replaced secret while its overlap lasts: `webhook-signature` then carries both (§17). */
    readonly previousSecret?: string | undefined
  }
): Record<string, string> => {
  const sign = (secret: string) => standardWebhookSignature(attempt.webhookId, attempt.timestampSeconds, body, secret)
  return {
    "content-type": "application/json",
    "user-agent": WEBHOOK_USER_AGENT,
    "webhook-id": attempt.webhookId,
    "webhook-timestamp": String(attempt.timestampSeconds),
    ...(hmacSecret === null ? {} : {
      "x-webhook-signature": signWebhookBody(body, hmacSecret),
      "webhook-signature": attempt.previousSecret === undefined
        ? sign(hmacSecret)
        : `${sign(hmacSecret)} ${sign(attempt.previousSecret)}`
    })
  }
}

/** 2xx is delivered; any other answer, a network error or a timeout is a failure, recorded as such. */
const outcomeOf = (result: TransportResult, durationMs: number, timeoutMs: number): DeliveryOutcome => {
  switch (result._tag) {
    case "Response": {
      if (result.status >= 200 && result.status < 300) {
        return { status: "delivered", responseStatus: result.status, error: null, durationMs }
      }
      const redirect = result.status >= 300 && result.status < 400 ? " (redirects are not followed)" : ""
      const excerpt = result.bodyExcerpt === "" ? "" : `: ${result.bodyExcerpt}`
      return {
        status: "failed",
        responseStatus: result.status,
        error: `HTTP ${result.status}${redirect}${excerpt}`,
        durationMs
      }
    }
    case "NetworkError":
      return { status: "failed", responseStatus: null, error: result.message, durationMs }
    case "TimedOut":
      return { status: "failed", responseStatus: null, error: `timed out after ${timeoutMs} ms`, durationMs }
  }
}

/** The metric label of an attempt that reached the transport (docs/DECISIONS.md §19). */
const outcomeLabelOf = (result: TransportResult): DeliveryOutcomeLabel =>
  result._tag === "Response"
    ? result.status >= 200 && result.status < 300 ? "delivered" : "http_error"
    : result._tag === "TimedOut"
    ? "timeout"
    : "network_error"

// --- steps -------------------------------------------------------------------------------------------------------

export interface FanOutResult {
  readonly events: number
  readonly deliveries: number
}

/** What the dispatcher's steps work with, captured once when a dispatcher starts. */
interface DispatcherDeps {
  readonly repo: WebhookRepository["Service"]
  readonly uow: UnitOfWork["Service"]
  readonly ids: IdGenerator["Service"]
  readonly transport: WebhookTransport["Service"]
  readonly resolver: HostResolver["Service"]
  readonly settings: WebhookSettings
}

const fanOutWith = (
  deps: Pick<DispatcherDeps, "repo" | "uow" | "ids">,
  batchSize: number
): Effect.Effect<FanOutResult> =>
  deps.uow.transaction(Effect.gen(function*() {
    const { repo, ids } = deps
    const events = yield* repo.takeUndispatchedEvents(batchSize)
    if (events.length === 0) return { events: 0, deliveries: 0 }
    const organizations = [...new Set(events.map((e) => e.organizationId))]
    const webhooks = yield* repo.webhooksOf(organizations)
    const at = yield* now
    const deliveries: Array<WebhookDeliveryRecord> = []
    for (const event of events) {
      const subscribers = subscribersOf(event, webhooks)
      if (subscribers.length === 0) continue
      const bodyWith = envelopeBodies(event)
      const recordKey = recordKeyOf(event)
      for (const webhook of subscribers) {
        const idempotencyKey = yield* nextIdFrom<string>(ids)
        deliveries.push(pendingDelivery({
          id: yield* nextIdFrom<WebhookDeliveryId>(ids),
          organizationId: webhook.organizationId,
          webhookId: webhook.id,
          eventId: event.id as DomainEventId,
          event: event.event,
          idempotencyKey,
          body: bodyWith(idempotencyKey),
          createdAt: at,
          redeliveryOf: null,
          recordKey
        }))
      }
    }
    if (deliveries.length > 0) yield* repo.insertDeliveries(deliveries)
    return { events: events.length, deliveries: deliveries.length }
  }))

/** Fans out up to `batchSize` outbox events in one unit of work (one step of a dispatcher; tests run it alone). */
export const fanOutOnce = (
  batchSize: number
): Effect.Effect<FanOutResult, never, WebhookRepository | UnitOfWork | IdGenerator> =>
  Effect.gen(function*() {
    return yield* fanOutWith(
      { repo: yield* WebhookRepository, uow: yield* UnitOfWork, ids: yield* IdGenerator },
      batchSize
    )
  })

/** One attempt of a claimed delivery, recorded nowhere yet: its outcome and metric label. */
interface Attempt {
  readonly claimed: ClaimedDelivery
  readonly outcome: DeliveryOutcome
  readonly label: DeliveryOutcomeLabel
}

/** What one dispatcher keeps between attempts: its clock and the destinations it judged without DNS. */
interface AttemptContext {
  readonly clock: Clock.Clock
  /** `checkDestinationLocally`'s answers by raw URL (pure for the dispatcher's settings); bounded. */
  readonly destinations: Map<string, Result.Result<Destination, DestinationRefused>>
}

/** Local destination verdicts a dispatcher keeps; past this many URLs it forgets them all and starts again. */
const DESTINATIONS_KEPT = 1_024

const attemptContext = (clock: Clock.Clock): AttemptContext => ({ clock, destinations: new Map() })

const blocked = (claimed: ClaimedDelivery, refused: DestinationRefused): Attempt => ({
  claimed,
  outcome: { status: "failed", responseStatus: null, error: refused.reason, durationMs: 0 },
  label: "blocked"
})

/** POSTs a claimed delivery to its checked destination: one effect, the transport's. */
const postTo = (
  deps: Pick<DispatcherDeps, "transport" | "settings">,
  context: AttemptContext,
  claimed: ClaimedDelivery,
  destination: Destination
): Effect.Effect<Attempt> => {
  const { delivery } = claimed
  const { timeoutMs } = deps.settings
  const started = performance.now()
  const nowMs = context.clock.currentTimeMillisUnsafe()
  const previous = claimed.previousSecret
  return Effect.map(
    deps.transport.post({
      url: destination.url,
      address: destination.address,
      headers: requestHeaders(delivery.body, claimed.hmacSecret, {
        webhookId: delivery.idempotencyKey,
        timestampSeconds: Math.floor(nowMs / 1000),
        previousSecret: previous !== null && toMillis(previous.expiresAt) > nowMs ? previous.hmacSecret : undefined
      }),
      body: delivery.body,
      timeoutMs
    }),
    (result): Attempt => ({
      claimed,
      outcome: outcomeOf(result, Math.round(performance.now() - started), timeoutMs),
      label: outcomeLabelOf(result)
    })
  )
}

/**
 * One attempt: the destination is checked again (DNS may have changed since registration) and the POST goes to the
 * checked address. A URL judged without DNS (an address literal, or private targets allowed) is judged once per
 * dispatcher; a host name is resolved for every attempt.
 */
const attemptWith = (
  deps: Pick<DispatcherDeps, "transport" | "resolver" | "settings">,
  context: AttemptContext,
  claimed: ClaimedDelivery
): Effect.Effect<Attempt> => {
  const { destinations } = context
  let local = destinations.get(claimed.url)
  if (local === undefined) {
    local = checkDestinationLocally(claimed.url, deps.settings)
    if (local !== undefined) {
      if (destinations.size >= DESTINATIONS_KEPT) destinations.clear()
      destinations.set(claimed.url, local)
    }
  }
  if (local !== undefined) {
    return Result.isFailure(local)
      ? Effect.succeed(blocked(claimed, local.failure))
      : postTo(deps, context, claimed, local.success)
  }
  return checkDestination(claimed.url, deps.settings).pipe(
    Effect.provideService(HostResolver, deps.resolver),
    Effect.matchEffect({
      onFailure: (refused) => Effect.succeed(blocked(claimed, refused)),
      onSuccess: (destination) => postTo(deps, context, claimed, destination)
    })
  )
}

const sendClaimedWith = (
  deps: Pick<DispatcherDeps, "repo" | "transport" | "resolver" | "settings">,
  dispatcherId: string,
  claimed: ClaimedDelivery
): Effect.Effect<DeliveryOutcome> =>
  Effect.gen(function*() {
    const { outcome, label } = yield* attemptWith(deps, attemptContext(yield* Clock.Clock), claimed)
    const { delivery } = claimed
    yield* deps.repo.completeDelivery(dispatcherId, delivery.organizationId, delivery.id, outcome)
    yield* recordWebhookDeliveries(label)
    return outcome
  })

/**
 * Records finished attempts in one write. Should the batch fail (say one outcome the store cannot take), each is
 * tried alone, so one bad row never holds up the others' outcomes.
 */
const recordAttempts = (
  repo: WebhookRepository["Service"],
  dispatcherId: string,
  attempts: ReadonlyArray<Attempt>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (attempts.length === 0) return
    const batch = yield* Effect.exit(repo.completeDeliveries(dispatcherId, completedOf(attempts)))
    if (batch._tag === "Failure") {
      yield* Effect.logWarning(
        "webhook dispatcher: recording a batch of outcomes failed; recording them one by one",
        Cause.pretty(batch.cause)
      )
      yield* Effect.forEach(attempts, (a) =>
        repo.completeDelivery(dispatcherId, a.claimed.delivery.organizationId, a.claimed.delivery.id, a.outcome).pipe(
          Effect.catchCause((cause) =>
            Effect.logError("webhook dispatcher: recording an outcome failed", Cause.pretty(cause))
          )
        ), { discard: true })
    }
    yield* countAttempts(attempts)
  })

const completedOf = (attempts: ReadonlyArray<Attempt>): ReadonlyArray<CompletedDelivery> =>
  attempts.map((a) => ({
    organizationId: a.claimed.delivery.organizationId,
    id: a.claimed.delivery.id,
    outcome: a.outcome
  }))

/** The delivery metrics of recorded attempts, one update per outcome label. */
const countAttempts = (attempts: ReadonlyArray<Attempt>): Effect.Effect<void> =>
  Effect.suspend(() => {
    const counts = new Map<DeliveryOutcomeLabel, number>()
    for (const a of attempts) counts.set(a.label, (counts.get(a.label) ?? 0) + 1)
    return Effect.forEach(counts, ([label, n]) => recordWebhookDeliveries(label, n), { discard: true })
  })

/**
 * Sends one claimed delivery and records its outcome. The destination is checked again (DNS may have changed since
 * registration) and the POST goes to the checked address.
 */
export const sendClaimed = (
  dispatcherId: string,
  claimed: ClaimedDelivery
): Effect.Effect<DeliveryOutcome, never, WebhookRepository | WebhookTransport | HostResolver> =>
  Effect.gen(function*() {
    const deps = {
      repo: yield* WebhookRepository,
      transport: yield* WebhookTransport,
      resolver: yield* HostResolver,
      settings: yield* CurrentWebhookSettings
    }
    return yield* sendClaimedWith(deps, dispatcherId, claimed)
  })

const failInterruptedWith = (repo: WebhookRepository["Service"], leaseMs: number): Effect.Effect<number> =>
  Effect.gen(function*() {
    const at = yield* now
    const failed = yield* repo.failInterrupted(fromMillis(toMillis(at) - leaseMs), INTERRUPTED)
    yield* recordWebhookDeliveries("interrupted", failed)
    return failed
  })

/** Fails the in-flight deliveries of dispatchers whose lease lapsed. */
export const failInterruptedDeliveries = (leaseMs: number): Effect.Effect<number, never, WebhookRepository> =>
  WebhookRepository.use((repo) => failInterruptedWith(repo, leaseMs))

// --- the background dispatcher -----------------------------------------------------------------------------------

export interface DispatcherOptions {
  /** POSTs in flight at most in this process. */
  readonly concurrency: number
  /** Deliveries in flight at most per webhook (exact within a process, approximate across processes). */
  readonly perWebhookConcurrency: number
  /**
   * Deliveries in flight at most per organization, across processes (approximately, as per webhook): below
   * `concurrency`, so an organization whose receivers stall leaves the rest of the slots to the others
   * (docs/FAIRNESS.md).
   */
  readonly perOrganizationConcurrency: number
  /** How often to look for work when idle, unless the store signals work (`WorkSignals`). */
  readonly pollIntervalMs: number
  /** Outbox events fanned out per unit of work. */
  readonly fanOutBatchSize: number
  readonly heartbeatIntervalMs: number
  /** A dispatcher silent for this long is taken for dead and its in-flight deliveries fail as interrupted. */
  readonly leaseMs: number
  /** Test hook: runs after a delivery is claimed and before its POST. */
  readonly afterClaim?: ((claimed: ClaimedDelivery) => Effect.Effect<void>) | undefined
}

const defaultDispatcherOptions: DispatcherOptions = {
  concurrency: 16,
  perWebhookConcurrency: 4,
  perOrganizationConcurrency: 8,
  pollIntervalMs: 200,
  fanOutBatchSize: 200,
  heartbeatIntervalMs: 10_000,
  leaseMs: 30_000
}

/** What a dispatcher captures when it starts (besides `CurrentWebhookSettings`, a reference with safe defaults). */
export type DispatcherServices = WebhookRepository | UnitOfWork | IdGenerator | WebhookTransport | HostResolver

/** A dispatcher claims ahead at most this many times its `concurrency` (docs/DECISIONS.md §30). */
const AHEAD = 4

/**
 * The size of a claim for `room` free places: the next power of two, at most `max`. A store may plan each size
 * apart (PostgreSQL's claim takes it as a literal), so a few sizes keep a few plans; the few extra deliveries a
 * rounded-up claim takes wait in the queue like any claimed ahead.
 */
export const claimSize = (room: number, max: number): number => {
  let size = 1
  while (size < room) size *= 2
  return Math.min(size, max)
}

/** Repeats `step` forever; a defect is logged and retried after `pauseMs` instead of stopping the loop. */
const resilient = (name: string, step: Effect.Effect<void>, pauseMs: number): Effect.Effect<never> =>
  Effect.forever(step.pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logWarning(`webhook dispatcher: ${name} failed; retrying`, Cause.pretty(cause)).pipe(
          Effect.andThen(Effect.sleep(pauseMs))
        )
    )
  ))

/**
 * Starts a dispatcher in the current scope and returns its id. Closing the scope stops it gracefully: no new claims,
 * in-flight POSTs finish and are recorded, then the lease is retired.
 */
export const startDispatcher = (
  overrides: Partial<DispatcherOptions> = {}
): Effect.Effect<string, never, DispatcherServices | Scope.Scope> =>
  Effect.gen(function*() {
    const options: DispatcherOptions = { ...defaultDispatcherOptions, ...overrides }
    // Everything is captured once: the loops below need nothing from the context they run in.
    const deps: DispatcherDeps = {
      repo: yield* WebhookRepository,
      uow: yield* UnitOfWork,
      ids: yield* IdGenerator,
      transport: yield* WebhookTransport,
      resolver: yield* HostResolver,
      settings: yield* CurrentWebhookSettings
    }
    const { repo } = deps
    const dispatcherId = yield* nextIdFrom<string>(deps.ids)

    // Finalizers run in reverse: the lease goes last, after the deliveries below have finished.
    yield* Effect.flatMap(now, (at) => repo.heartbeat(dispatcherId, at))
    yield* Effect.addFinalizer(() => repo.removeDispatcher(dispatcherId))
    yield* resilient(
      "heartbeat",
      Effect.gen(function*() {
        yield* repo.heartbeat(dispatcherId, yield* now)
        yield* failInterruptedWith(repo, options.leaseMs)
        yield* Effect.sleep(options.heartbeatIntervalMs)
      }),
      options.heartbeatIntervalMs
    ).pipe(Effect.forkScoped)

    // Attempts whose POST finished, waiting to be recorded together, and deliveries claimed ahead, waiting for a
    // slot. Closing the scope records what finished and hands the unsent claims back (finalizers run in reverse:
    // this one after the deliveries' fiber set has drained).
    let finished: Array<Attempt> = []
    const takeFinished = () => {
      const batch = finished
      finished = []
      return batch
    }
    const ready: Array<ClaimedDelivery> = []
    /** POSTs under way: fibers of `inFlight`, each sending until `ready` has nothing it may send. */
    let posting = 0
    // An organization's POSTs under way here: at most `perOrganization`, so an organization whose receivers stall
    // leaves the other slots to the others (docs/FAIRNESS.md). Its claimed-ahead deliveries wait in `ready`, and
    // the store holds it to `(1 + AHEAD) * perOrganization` claimed across processes.
    const perOrganization = Math.max(1, Math.min(options.perOrganizationConcurrency, options.concurrency))
    const postingPerOrganization = new Map<string, number>()
    /** The oldest claimed delivery whose organization has a free slot here, taken out of `ready`. */
    const takeReady = (): ClaimedDelivery | undefined => {
      for (let i = 0; i < ready.length; i++) {
        const organizationId = ready[i]!.delivery.organizationId
        const n = postingPerOrganization.get(organizationId) ?? 0
        if (n < perOrganization) {
          postingPerOrganization.set(organizationId, n + 1)
          return ready.splice(i, 1)[0]
        }
      }
      return undefined
    }
    /** Deliveries in `ready` whose organization has a free slot here. */
    const sendable = () => {
      let n = 0
      for (const c of ready) if ((postingPerOrganization.get(c.delivery.organizationId) ?? 0) < perOrganization) n++
      return n
    }
    const postDone = (claimed: ClaimedDelivery) => {
      const organizationId = claimed.delivery.organizationId
      const n = (postingPerOrganization.get(organizationId) ?? 1) - 1
      if (n <= 0) postingPerOrganization.delete(organizationId)
      else postingPerOrganization.set(organizationId, n)
    }
    let stopping = false
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        const unsent = ready.splice(0).map((c) => ({ organizationId: c.delivery.organizationId, id: c.delivery.id }))
        return Effect.andThen(
          recordAttempts(repo, dispatcherId, takeFinished()),
          unsent.length === 0 ? Effect.void : repo.releaseDeliveries(dispatcherId, unsent).pipe(
            Effect.catchCause((cause) =>
              Effect.logWarning(
                "webhook dispatcher: handing back unsent deliveries failed; they fail as interrupted",
                Cause.pretty(cause)
              )
            )
          )
        )
      })
    )

    const inFlight = yield* FiberSet.make<void, never>()
    // Runs before the fiber set's finalizer: a sending fiber finishes its POST, then takes no other.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopping = true
      })
    )
    // Opened by a finished POST or new deliveries; the pump closes it before it looks, so no wake-up is lost.
    const wake = yield* Latch.make(false)
    // Woken by a slot freed here, or by the store's signal that deliveries may be claimable (another process's).
    const signals = yield* WorkSignals
    const idle = Effect.raceFirst(wake.await, signals.idle("deliveries", options.pollIntervalMs))
    // Opened when this process records finished deliveries. A fan-out that took nothing may have passed over an
    // organization at its queue cap (docs/DECISIONS.md §68), whose events wait for those deliveries, not for a signal.
    const drained = yield* Latch.make(false)

    const context = attemptContext(yield* Clock.Clock)
    const recordFinished = (attempt: Attempt) => {
      finished.push(attempt)
      wake.openUnsafe()
    }
    const attemptFailed = (cause: Cause.Cause<never>) =>
      Effect.andThen(
        Effect.logError("webhook dispatcher: a delivery failed unexpectedly", Cause.pretty(cause)),
        wake.open
      )
    // One attempt, then its outcome waits for the pump's next turn; the pump is woken either way.
    const attemptOne = (claimed: ClaimedDelivery): Effect.Effect<void> =>
      Effect.matchCauseEffect(
        options.afterClaim === undefined
          ? attemptWith(deps, context, claimed)
          : Effect.andThen(options.afterClaim(claimed), attemptWith(deps, context, claimed)),
        { onSuccess: (attempt) => Effect.sync(() => recordFinished(attempt)), onFailure: attemptFailed }
      )

    /**
     * One slot: sends `first`, then whatever is claimed and waiting, until nothing is (or the dispatcher stops), so
     * a POST that finishes starts the next at once, without a round trip to the store. Uninterruptible: shutdown
     * waits for the POST under way (bounded by the timeout), and a claimed delivery is sent or handed back.
     */
    const sendFrom = (first: ClaimedDelivery): Effect.Effect<void> => {
      const from = (claimed: ClaimedDelivery): Effect.Effect<void> =>
        Effect.flatMap(attemptOne(claimed), () => {
          postDone(claimed)
          const next = stopping ? undefined : takeReady()
          if (next !== undefined) return from(next)
          posting--
          return wake.open
        })
      return Effect.uninterruptible(from(first))
    }

    const startSending = Effect.gen(function*() {
      while (posting < options.concurrency) {
        const next = takeReady()
        if (next === undefined) break
        posting++
        yield* FiberSet.run(inFlight, sendFrom(next))
      }
    })

    /**
     * One turn of the pump: record the outcomes of the POSTs that finished since the last turn and claim
     * deliveries, in one write (`claimDeliveries` with `completed`): one statement and one round trip per turn.
     * The claim may not yet see those outcomes, which only makes it claim less (a webhook's finished deliveries
     * still count against its slots, a record's next delivery waits), never more; a turn that recorded something
     * and ran out of claims is followed by another at once, which sees them. While the store works, more POSTs
     * finish, so under load the batches grow by themselves.
     *
     * Claiming ahead (docs/DECISIONS.md §30): a turn claims for the free slots plus twice as many deliveries as
     * POSTs finished since the last turn (at most `AHEAD` × `concurrency`), so a slot that frees while the store
     * works finds its next delivery waiting, and the queue grows until it covers a turn. Slots stuck on a slow
     * receiver finish nothing, so nothing is claimed ahead for them.
     */
    const pumpStep = Effect.gen(function*() {
      yield* wake.close
      // Recording and claiming, with handing the claims to fibers, are uninterruptible: shutdown never strands a
      // claim or drops an outcome.
      const turn = yield* Effect.uninterruptible(Effect.gen(function*() {
        const batch = takeFinished()
        // Deliveries of organizations at their slots here wait without filling the room: another organization's
        // are still claimed (each organization's are bounded by the store's limit, docs/FAIRNESS.md).
        const room = options.concurrency + Math.min(AHEAD * options.concurrency, 2 * batch.length) - posting -
          sendable()
        if (room <= 0) {
          yield* recordAttempts(repo, dispatcherId, batch)
          if (batch.length > 0) yield* drained.open
          return "busy" as const
        }
        const size = claimSize(room, (1 + AHEAD) * options.concurrency)
        // The outcomes go with the claim, one statement; should it fail, they are recorded on their own (one by one
        // if need be) before the turn fails.
        const claim = yield* Effect.exit(repo.claimDeliveries({
          dispatcherId,
          at: yield* now,
          limit: size,
          perWebhookLimit: options.perWebhookConcurrency,
          perOrganizationLimit: (1 + AHEAD) * perOrganization,
          completed: completedOf(batch)
        }))
        if (claim._tag === "Failure") {
          yield* recordAttempts(repo, dispatcherId, batch)
          return yield* Effect.failCause(claim.cause)
        }
        yield* countAttempts(batch)
        if (batch.length > 0) yield* drained.open
        const claimed = claim.value
        for (const c of claimed) ready.push(c)
        yield* startSending
        return claimed.length < size ? (batch.length > 0 ? "recheck" as const : "drained" as const) : "full" as const
      }))
      if (turn === "busy") yield* wake.await // every slot is busy and enough is waiting: wait for a POST to finish
      else if (turn === "drained") yield* idle // nothing more to claim: wait for a POST, new work or a signal
    })

    const fanOutStep = Effect.gen(function*() {
      yield* drained.close
      const result = yield* fanOutWith(deps, options.fanOutBatchSize)
      if (result.deliveries > 0) yield* wake.open
      if (result.events === 0) yield* Effect.raceFirst(signals.idle("events", options.pollIntervalMs), drained.await)
    })

    yield* resilient("claim", pumpStep, options.pollIntervalMs).pipe(Effect.forkScoped)
    yield* resilient("fan-out", fanOutStep, options.pollIntervalMs).pipe(Effect.forkScoped)
    return dispatcherId
  })
