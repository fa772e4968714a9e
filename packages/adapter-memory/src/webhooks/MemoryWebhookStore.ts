/**
 * Webhooks, deliveries and dispatcher leases in memory. Every multi-row operation is one synchronous `db.mutate`
 * block, so it is atomic with respect to other fibers; the outbox is the `domain_events` table that
 * `MemoryEventOutbox` writes (insertion order is recording order), and the fan-out mark is a table of its own. A
 * fan-out reads the events not yet fanned out from their index (`UndispatchedEvents`), never the whole history.
 */
import { type Kernel, Webhooks } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import {
  DeliveryIndexes,
  domainEvents,
  fanOutMarks,
  oldestFirst,
  type RecordedEvent,
  webhookDeliveries
} from "../kernel/MemoryTables.ts"

/** Newest first by (createdAt, id). */
const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) => oldestFirst(b, a)

const inRecordingOrder = (a: RecordedEvent, b: RecordedEvent) => a.position - b.position

const olderThan = (after: Webhooks.WebhookListPosition | undefined) => (r: { createdAt: string; id: string }) =>
  after === undefined || r.createdAt < after.createdAt || (r.createdAt === after.createdAt && r.id < after.id)

export const MemoryWebhookRepository = Layer.effect(
  Webhooks.WebhookRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const webhooks = db.table<string, Webhooks.WebhookRecord>("webhooks")
    const deliveries = webhookDeliveries(db)
    const indexes = deliveries.observer
    const active = indexes.active
    const undispatched = domainEvents(db).observer
    const fannedOut = fanOutMarks(db)
    const dispatchers = db.table<string, Kernel.Timestamp.Timestamp>("webhook_dispatchers")

    const owned = (organizationId: Kernel.OrganizationId, id: string) => {
      const w = webhooks.get(id)
      return w !== undefined && w.organizationId === organizationId ? w : undefined
    }

    /** Records outcomes of the dispatcher's own in-flight rows (call inside `db.mutate`); returns the ids recorded. */
    const record = (dispatcherId: string, completed: ReadonlyArray<Webhooks.CompletedDelivery>) => {
      const recorded: Array<Webhooks.WebhookDeliveryRecord["id"]> = []
      for (const { id, organizationId, outcome } of completed) {
        const d = deliveries.get(id)
        if (
          d === undefined || d.organizationId !== organizationId || d.status !== "in_flight" ||
          d.claimedBy !== dispatcherId
        ) {
          continue
        }
        deliveries.set(id, { ...d, ...outcome })
        recorded.push(id)
      }
      return recorded
    }

    return Webhooks.WebhookRepository.of({
      insert: (w) => db.mutate(() => webhooks.set(w.id, w)),
      update: (w) =>
        db.mutate(() => {
          if (owned(w.organizationId, w.id) !== undefined) webhooks.set(w.id, w)
        }),
      remove: (organizationId, id) =>
        db.mutate(() => {
          if (owned(organizationId, id) === undefined) return false
          webhooks.delete(id)
          for (const d of [...deliveries.values()]) if (d.webhookId === id) deliveries.delete(d.id)
          return true
        }),
      findById: (organizationId, id) => Effect.sync(() => Option.fromUndefinedOr(owned(organizationId, id))),
      list: (organizationId, page) =>
        Effect.sync(() =>
          [...webhooks.values()]
            .filter((w) => w.organizationId === organizationId)
            .filter(olderThan(page.after))
            .sort(newestFirst)
            .slice(0, page.limit)
        ),
      listDeliveries: (organizationId, webhookId, page) =>
        Effect.sync(() =>
          [...deliveries.values()]
            .filter((d) => d.organizationId === organizationId && d.webhookId === webhookId)
            .filter(olderThan(page.after))
            .sort(newestFirst)
            .slice(0, page.limit)
        ),

      // Organizations in turn (`fairClaimOrder`), each one's events in recording order. An organization whose
      // queue is full is passed over whole, so its events keep their order and wait in the outbox; the others' go on
      // (MAX_QUEUED_DELIVERIES_PER_ORGANIZATION). So is one with a long transaction open: its events so far may
      // still be undone.
      takeUndispatchedEvents: (limit) =>
        db.mutate(() => {
          const queued = indexes.pendingPerOrganizationOldestFirst()
          const waiting = new Map<string, boolean>()
          const waits = (organizationId: string) => {
            let answer = waiting.get(organizationId)
            if (answer === undefined) {
              answer = db.heldBack(organizationId) ||
                (queued.get(organizationId)?.size ?? 0) >= Webhooks.MAX_QUEUED_DELIVERIES_PER_ORGANIZATION
              waiting.set(organizationId, answer)
            }
            return answer
          }
          // Each organization's first `limit` events not yet fanned out (the index, not the history): a unit never
          // takes more of one.
          const candidates: Array<RecordedEvent> = []
          for (const [organizationId, waitingEvents] of undispatched.perOrganization()) {
            if (waits(organizationId)) continue
            let n = 0
            for (const recorded of waitingEvents.values()) {
              if (n++ >= limit) break
              candidates.push(recorded)
            }
          }
          candidates.sort(inRecordingOrder)
          const taken = Webhooks.fairClaimOrder(candidates, (c) => c.event.organizationId).slice(0, limit)
          for (const { event } of taken) fannedOut.set(event.id, true)
          return taken.sort(inRecordingOrder).map((c) => c.event)
        }),
      webhooksOf: (organizationIds) =>
        Effect.sync(() => {
          const wanted = new Set<string>(organizationIds)
          return [...webhooks.values()].filter((w) => wanted.has(w.organizationId))
        }),
      findDelivery: (organizationId, webhookId, id) =>
        Effect.sync(() => {
          const d = deliveries.get(id)
          return d !== undefined && d.organizationId === organizationId && d.webhookId === webhookId
            ? Option.some(d)
            : Option.none()
        }),
      insertDeliveries: (rows) =>
        db.mutate(() => {
          // One first delivery per (event, webhook); redeliveries are extra rows by design. Each write updates `firsts`.
          for (const d of rows) {
            if ((d.redeliveryOf === null && indexes.hasFirst(d)) || webhooks.get(d.webhookId) === undefined) continue
            deliveries.set(d.id, d)
          }
        }),
      claimDeliveries: ({ at, completed = [], dispatcherId, limit, perOrganizationLimit, perWebhookLimit }) =>
        db.mutate(() => {
          record(dispatcherId, completed)
          // Each organization's pending deliveries oldest first, up to its free slots (docs/FAIRNESS.md); an
          // organization at its limit is skipped whole. Deliveries about one record go out one at a time, in event
          // order (fan-out order here): a record with a delivery in flight, or one already passed over, waits. The
          // candidates are then taken organizations in turn (`fairClaimOrder`), up to `limit`.
          const orgInFlight = new Map<string, number>()
          for (const [webhookId, n] of indexes.inFlight) {
            const organizationId = webhooks.get(webhookId)?.organizationId
            if (organizationId !== undefined) {
              orgInFlight.set(organizationId, (orgInFlight.get(organizationId) ?? 0) + n)
            }
          }
          const webhookTaken = new Map<string, number>()
          const passedOver = new Set<string>()
          const candidates: Array<
            { readonly d: Webhooks.WebhookDeliveryRecord; readonly webhook: Webhooks.WebhookRecord }
          > = []
          for (const [organizationId, pending] of indexes.pendingPerOrganizationOldestFirst()) {
            let room = Math.min(limit, (perOrganizationLimit ?? Infinity) - (orgInFlight.get(organizationId) ?? 0))
            for (const d of pending.values()) {
              if (room <= 0) break
              const webhook = webhooks.get(d.webhookId)
              const record = DeliveryIndexes.recordKey(d)
              if (record !== undefined) {
                if (indexes.recordsInFlight.has(record) || passedOver.has(record)) continue
                passedOver.add(record)
              }
              if (webhook === undefined) continue
              const hookTaken = webhookTaken.get(d.webhookId) ?? 0
              if ((indexes.inFlight.get(d.webhookId) ?? 0) + hookTaken >= perWebhookLimit) continue
              webhookTaken.set(d.webhookId, hookTaken + 1)
              candidates.push({ d, webhook })
              room--
            }
          }
          candidates.sort((a, b) => oldestFirst(a.d, b.d))
          return Webhooks.fairClaimOrder(candidates, (c) => c.d.organizationId).slice(0, limit).map(
            ({ d, webhook }): Webhooks.ClaimedDelivery => {
              const delivery: Webhooks.WebhookDeliveryRecord = {
                ...d,
                status: "in_flight",
                claimedBy: dispatcherId,
                attemptedAt: at
              }
              deliveries.set(d.id, delivery)
              return {
                delivery,
                url: webhook.url,
                hmacSecret: webhook.hmacSecret,
                previousSecret: Webhooks.previousSecretOf(webhook)
              }
            }
          )
        }),
      completeDelivery: (dispatcherId, organizationId, id, outcome) =>
        db.mutate(() => {
          const d = deliveries.get(id)
          if (
            d === undefined || d.organizationId !== organizationId || d.status !== "in_flight" ||
            d.claimedBy !== dispatcherId
          ) {
            return false
          }
          deliveries.set(id, { ...d, ...outcome })
          return true
        }),
      completeDeliveries: (dispatcherId, completed) => db.mutate(() => record(dispatcherId, completed)),
      releaseDeliveries: (dispatcherId, released) =>
        db.mutate(() => {
          let n = 0
          for (const { id, organizationId } of released) {
            const d = deliveries.get(id)
            if (
              d === undefined || d.organizationId !== organizationId || d.status !== "in_flight" ||
              d.claimedBy !== dispatcherId
            ) {
              continue
            }
            deliveries.set(id, { ...d, status: "pending", claimedBy: null, attemptedAt: null })
            n++
          }
          return n
        }),
      heartbeat: (dispatcherId, at) => db.mutate(() => dispatchers.set(dispatcherId, at)),
      dispatcherAlive: (since) => Effect.sync(() => [...dispatchers.values()].some((at) => at >= since)),
      removeDispatcher: (dispatcherId) => db.mutate(() => void dispatchers.delete(dispatcherId)),
      failInterrupted: (staleBefore, error) =>
        db.mutate(() => {
          let n = 0
          for (const d of [...active.values()]) {
            if (d.status !== "in_flight") continue
            const heartbeat = d.claimedBy === null ? undefined : dispatchers.get(d.claimedBy)
            if (heartbeat !== undefined && heartbeat >= staleBefore) continue
            deliveries.set(d.id, { ...d, status: "failed", error, responseStatus: null, durationMs: null })
            n++
          }
          return n
        })
    })
  })
)
