/**
 * Webhook registration use-cases (docs/DECISIONS.md §7): create, read, list, update, delete, the event catalog and the
 * delivery log. Every change records `webhook.created|updated|deleted` (data: the webhook as the API shows it) in
 * the same unit of work. Input is checked completely before anything is written: a bad request changes nothing.
 *
 * The destination check resolves DNS, so it runs before the unit of work opens (no transaction waits on DNS).
 */
import { Clock, Context, Effect, Layer, Option, Result } from "effect"
import { type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { newestFirstPage, type NewestFirstPageQuery } from "../kernel/NewestFirstPage.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { EVENT_NAMES, type EventName, isEventName } from "./EventCatalog.ts"
import { emittedEventNames, HostEventNames } from "./HostEvents.ts"
import { MAX_WEBHOOKS_PER_ORGANIZATION } from "./FairShare.ts"
import { type EventFeedPage, type EventFeedQuery, feedCursor, parseFeedQuery } from "./EventFeed.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import { type Forbidden, InvalidRequest, NotFound, type RequestIssue } from "../kernel/Errors.ts"
import type { OrganizationId, WebhookDeliveryId, WebhookId } from "../kernel/Ids.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import { fromMillis, now, toMillis } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import {
  type CreateWebhook,
  hmacSecretProblem,
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  MAX_SUBSCRIBED_EVENTS,
  type RotateWebhookSecret,
  type UpdateWebhook
} from "./WebhookRequests.ts"
import {
  pendingDelivery,
  toWebhook,
  toWebhookDelivery,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookDeliveryRecord,
  type WebhookEventList,
  type WebhookList,
  type WebhookRecord
} from "./Webhook.ts"
import { checkDestination, CurrentWebhookSettings, HostResolver, type WebhookSettings } from "./WebhookDestination.ts"
import { WebhookRepository } from "./WebhookRepository.ts"

// --- input rules -------------------------------------------------------------------------------------------------

/** The subscription: at least one name, each from the catalog; repeats are dropped, first occurrence kept. */
const checkWebhookEvents = (events: ReadonlyArray<string>): Result.Result<ReadonlyArray<EventName>, InvalidRequest> => {
  if (events.length === 0) {
    return Result.fail(
      InvalidRequest.single("body.events", "list at least one event name; GET /webhook-events lists them")
    )
  }
  if (events.length > MAX_SUBSCRIBED_EVENTS) {
    return Result.fail(InvalidRequest.single("body.events", `list at most ${MAX_SUBSCRIBED_EVENTS} event names`))
  }
  const issues: Array<RequestIssue> = []
  const seen = new Set<EventName>()
  events.forEach((name, i) => {
    if (isEventName(name)) seen.add(name)
    else {
      issues.push({
        path: `body.events[${i}]`,
        message: `unknown event ${JSON.stringify(name)}; GET /webhook-events lists the valid names`
      })
    }
  })
  if (issues.length > 0) return Result.fail(InvalidRequest.of(issues))
  return Result.succeed([...seen])
}

const checkWebhookSecret = (secret: string): Result.Result<string, InvalidRequest> => {
  const problem = hmacSecretProblem(secret)
  return problem === undefined ? Result.succeed(secret) : Result.fail(InvalidRequest.single("body.hmacSecret", problem))
}

/** The URL as it will be stored (normalised by the URL parser), or a 400 naming `body.url`. */
const checkUrl = (
  url: string,
  settings: WebhookSettings,
  resolver: HostResolver["Service"]
): Effect.Effect<string, InvalidRequest> =>
  checkDestination(url, settings).pipe(
    Effect.provideService(HostResolver, resolver),
    Effect.map((d) => d.url.href),
    // The reason is a whole sentence already, so it is the message as it stands.
    Effect.mapError((e) => new InvalidRequest({ message: e.reason, issues: [{ path: "body.url", message: e.reason }] }))
  )

// --- pagination --------------------------------------------------------------------------------------------------

export type WebhookPageQuery = NewestFirstPageQuery

/** The event name of a test delivery (not in the catalog: nobody subscribes to it, every webhook can be pinged). */
export const PING_EVENT = "webhook.ping"
const PING_POLL_MS = 50
/** Beyond the delivery timeout: time for an idle dispatcher to notice the ping (woken by the store, or polling every 200 ms). */
const PING_MARGIN_MS = 2_000
/** A dispatcher that heart-beat this recently is taken to be running (it beats every 10 s). */
const DISPATCHER_ALIVE_MS = 30_000

// --- the service ---------------------------------------------------------------------------------------------------

export class Webhooks extends Context.Service<Webhooks, {
  /** `GET /webhook-events`: every event name a webhook can subscribe to. */
  readonly listEvents: () => Effect.Effect<WebhookEventList, Forbidden, CurrentCaller>
  readonly create: (input: CreateWebhook) => Effect.Effect<Webhook, Forbidden | InvalidRequest, CurrentCaller>
  readonly get: (id: WebhookId) => Effect.Effect<Webhook, Forbidden | NotFound, CurrentCaller>
  readonly list: (query: WebhookPageQuery) => Effect.Effect<WebhookList, Forbidden | InvalidRequest, CurrentCaller>
  /** Only sent fields change; a PATCH that changes nothing writes nothing and fires no event. */
  readonly update: (
    id: WebhookId,
    patch: UpdateWebhook
  ) => Effect.Effect<Webhook, Forbidden | InvalidRequest | NotFound, CurrentCaller>
  /** Deletes the webhook with its delivery log; its pending deliveries are never sent. Returns it as it was. */
  readonly delete: (id: WebhookId) => Effect.Effect<Webhook, Forbidden | NotFound, CurrentCaller>
  /**
   * `POST /webhooks/{id}/rotate-secret`: the new secret signs from now on; the replaced one still signs beside it
   * in `webhook-signature` for `overlapSeconds` (default a day), so receivers can switch without losing a delivery.
   */
  /**
   * `POST /webhooks/{id}/events/{deliveryId}/redeliver`: a new pending delivery of the same event and payload `data`,
   * with a new idempotency key and `redeliveryOf`; the dispatcher sends it like any delivery. Never automatic.
   */
  readonly redeliver: (
    id: WebhookId,
    deliveryId: WebhookDeliveryId
  ) => Effect.Effect<WebhookDelivery, Forbidden | NotFound, CurrentCaller>
  /**
   * `POST /webhooks/{id}/ping`: a `webhook.ping` delivery whose `data` is the webhook, sent by the dispatcher like any
   * delivery and logged; answers the row once it finished (or as it stands after the delivery timeout and a margin).
   */
  readonly ping: (id: WebhookId) => Effect.Effect<WebhookDelivery, Forbidden | NotFound, CurrentCaller>
  /** `GET /events`: the organization's event feed, oldest first (`EventFeed.ts`). */
  readonly feed: (query: EventFeedQuery) => Effect.Effect<EventFeedPage, Forbidden | InvalidRequest, CurrentCaller>
  readonly rotateSecret: (
    id: WebhookId,
    input: RotateWebhookSecret
  ) => Effect.Effect<Webhook, Forbidden | InvalidRequest | NotFound, CurrentCaller>
  /** `GET /webhooks/{id}/events`: the webhook's deliveries, newest first. */
  readonly listDeliveries: (
    id: WebhookId,
    query: WebhookPageQuery
  ) => Effect.Effect<WebhookDeliveryList, Forbidden | InvalidRequest | NotFound, CurrentCaller>
}>()("feedback/Webhooks") {
  /**
   * Captures the store, the DNS resolver and the webhook settings (a reference: the safe defaults unless the host
   * provides its own, docs/DECISIONS.md §7) once.
   */
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      const repo = yield* WebhookRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const cursorKey = yield* CursorKey
      const resolver = yield* HostResolver
      const settings = yield* CurrentWebhookSettings
      const events = makeEventRecorder(yield* EventOutbox, ids)
      const emitted = emittedEventNames(yield* HostEventNames)

      const findOwned = (organizationId: OrganizationId, id: WebhookId): Effect.Effect<WebhookRecord, NotFound> =>
        repo.findById(organizationId, id).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(NotFound.of("webhook", id)),
            onSome: Effect.succeed
          }))
        )

      const listEvents = Effect.fn("Webhooks.listEvents")(function*() {
        yield* requirePermission("settings:read")
        return { data: EVENT_NAMES, emitted } satisfies WebhookEventList
      })

      const create = Effect.fn("Webhooks.create")(function*(input: CreateWebhook) {
        const caller = yield* requirePermission("settings:write")
        const subscribed = yield* Effect.fromResult(checkWebhookEvents(input.events))
        const hmacSecret = input.hmacSecret === undefined || input.hmacSecret === null
          ? null
          : yield* Effect.fromResult(checkWebhookSecret(input.hmacSecret))
        // DNS before the unit of work opens: no transaction waits on it.
        const url = yield* checkUrl(input.url, settings, resolver)
        return yield* uow.transaction(Effect.gen(function*() {
          // Each webhook multiplies every event the organization records into deliveries: the cap bounds its share of
          // the dispatcher (docs/FAIRNESS.md). Two creates racing past it can exceed it by the racers only.
          const existing = yield* repo.list(caller.organizationId, {
            limit: MAX_WEBHOOKS_PER_ORGANIZATION,
            after: undefined
          })
          if (existing.length >= MAX_WEBHOOKS_PER_ORGANIZATION) {
            return yield* InvalidRequest.single(
              "",
              `An organization has at most ${MAX_WEBHOOKS_PER_ORGANIZATION} webhooks; delete one before registering another.`
            )
          }
          const at = yield* now
          const record: WebhookRecord = {
            id: yield* nextIdFrom<WebhookId>(ids),
            organizationId: caller.organizationId,
            url,
            events: subscribed,
            hmacSecret,
            previousHmacSecret: null,
            previousSecretExpiresAt: null,
            createdAt: at,
            updatedAt: at
          }
          yield* repo.insert(record)
          const view = toWebhook(record)
          yield* events.record(caller.organizationId, "webhook.created", view)
          return view
        }))
      })

      const get = Effect.fn("Webhooks.get")(function*(id: WebhookId) {
        const caller = yield* requirePermission("settings:read")
        return toWebhook(yield* findOwned(caller.organizationId, id))
      })

      const list = Effect.fn("Webhooks.list")(function*(query: WebhookPageQuery) {
        const caller = yield* requirePermission("settings:read")
        return yield* newestFirstPage(
          caller.organizationId,
          "webhooks",
          query,
          (p) => repo.list(caller.organizationId, p),
          toWebhook,
          cursorKey
        )
      })

      const update = Effect.fn("Webhooks.update")(function*(id: WebhookId, patch: UpdateWebhook) {
        const caller = yield* requirePermission("settings:write")
        const subscribed = patch.events === undefined
          ? undefined
          : yield* Effect.fromResult(checkWebhookEvents(patch.events))
        const hmacSecret = patch.hmacSecret === undefined || patch.hmacSecret === null
          ? patch.hmacSecret
          : yield* Effect.fromResult(checkWebhookSecret(patch.hmacSecret))
        // 404 before the (slower) destination check, so a missing webhook is reported as such.
        yield* findOwned(caller.organizationId, id)
        const url = patch.url === undefined ? undefined : yield* checkUrl(patch.url, settings, resolver)
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* findOwned(caller.organizationId, id)
          const next = {
            ...current,
            ...(url === undefined ? {} : { url }),
            ...(subscribed === undefined ? {} : { events: subscribed }),
            // A PATCH replaces the secret at once (a rotation with overlap is POST …/rotate-secret).
            ...(hmacSecret === undefined ? {} : { hmacSecret, previousHmacSecret: null, previousSecretExpiresAt: null })
          }
          const changed = next.url !== current.url || next.hmacSecret !== current.hmacSecret ||
            next.events.length !== current.events.length || next.events.some((e, i) => e !== current.events[i])
          if (!changed) return toWebhook(current)
          const updated: WebhookRecord = { ...next, updatedAt: yield* now }
          yield* repo.update(updated)
          const view = toWebhook(updated)
          yield* events.record(caller.organizationId, "webhook.updated", view)
          return view
        }))
      })

      const remove = Effect.fn("Webhooks.delete")(function*(id: WebhookId) {
        const caller = yield* requirePermission("settings:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* findOwned(caller.organizationId, id)
          yield* repo.remove(caller.organizationId, id)
          const view = toWebhook(current)
          yield* events.record(caller.organizationId, "webhook.deleted", view)
          return view
        }))
      })

      const listDeliveries = Effect.fn("Webhooks.listDeliveries")(function*(id: WebhookId, query: WebhookPageQuery) {
        const caller = yield* requirePermission("settings:read")
        yield* findOwned(caller.organizationId, id)
        return yield* newestFirstPage(
          caller.organizationId,
          `webhooks/${id.toLowerCase()}/events`,
          query,
          (p) => repo.listDeliveries(caller.organizationId, id, p),
          toWebhookDelivery,
          cursorKey
        )
      })

      const rotateSecret = Effect.fn("Webhooks.rotateSecret")(function*(id: WebhookId, input: RotateWebhookSecret) {
        const caller = yield* requirePermission("settings:write")
        const secret = yield* Effect.fromResult(checkWebhookSecret(input.hmacSecret))
        const overlapSeconds = input.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* findOwned(caller.organizationId, id)
          const at = yield* now
          const keepsOld = current.hmacSecret !== null && current.hmacSecret !== secret && overlapSeconds > 0
          const updated: WebhookRecord = {
            ...current,
            hmacSecret: secret,
            previousHmacSecret: keepsOld ? current.hmacSecret : null,
            previousSecretExpiresAt: keepsOld ? fromMillis(toMillis(at) + overlapSeconds * 1000) : null,
            updatedAt: at
          }
          yield* repo.update(updated)
          const view = toWebhook(updated)
          yield* events.record(caller.organizationId, "webhook.updated", view)
          return view
        }))
      })

      /** A pending delivery outside the fan-out (a redelivery or a ping), stored in its own unit of work. */
      const extraDelivery = (
        webhook: WebhookRecord,
        fields: { readonly eventId: string; readonly event: string; readonly redeliveryOf: WebhookDeliveryId | null },
        envelope: (idempotencyKey: string) => string
      ) =>
        Effect.gen(function*() {
          const idempotencyKey = yield* nextIdFrom<string>(ids)
          const record = pendingDelivery({
            id: yield* nextIdFrom<WebhookDeliveryId>(ids),
            organizationId: webhook.organizationId,
            webhookId: webhook.id,
            eventId: fields.eventId as WebhookDeliveryRecord["eventId"],
            event: fields.event,
            idempotencyKey,
            body: envelope(idempotencyKey),
            createdAt: yield* now,
            redeliveryOf: fields.redeliveryOf,
            recordKey: null
          })
          yield* repo.insertDeliveries([record])
          return record
        })

      const redeliver = Effect.fn("Webhooks.redeliver")(function*(id: WebhookId, deliveryId: WebhookDeliveryId) {
        const caller = yield* requirePermission("settings:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const webhook = yield* findOwned(caller.organizationId, id)
          const original = yield* repo.findDelivery(caller.organizationId, id, deliveryId).pipe(
            Effect.flatMap(
              Option.match({
                onNone: () => Effect.fail(NotFound.of("webhook delivery", deliveryId)),
                onSome: Effect.succeed
              })
            )
          )
          // The original envelope with a new key: same event, timestamp, eventId and data, key order kept.
          const record = yield* extraDelivery(webhook, {
            eventId: original.eventId,
            event: original.event,
            redeliveryOf: original.id
          }, (key) => JSON.stringify({ ...(JSON.parse(original.body) as object), idempotencyKey: key }))
          return toWebhookDelivery(record)
        }))
      })

      const ping = Effect.fn("Webhooks.ping")(function*(id: WebhookId) {
        const caller = yield* requirePermission("settings:write")
        const record = yield* uow.transaction(Effect.gen(function*() {
          const webhook = yield* findOwned(caller.organizationId, id)
          const eventId = yield* nextIdFrom<string>(ids)
          const at = yield* now
          return yield* extraDelivery(
            webhook,
            { eventId, event: PING_EVENT, redeliveryOf: null },
            (key) =>
              JSON.stringify({
                event: PING_EVENT,
                timestamp: at,
                idempotencyKey: key,
                eventId,
                data: toWebhook(webhook)
              })
          )
        }))
        // Committed: whichever dispatcher claims it sends it; wait for the outcome within the delivery timeout, unless
        // no dispatcher runs at all (a deployment with workers elsewhere, stopped): then answer the queued row at once.
        const finished = (d: WebhookDeliveryRecord) => d.status === "delivered" || d.status === "failed"
        const started = yield* Clock.currentTimeMillis
        if (!(yield* repo.dispatcherAlive(fromMillis(started - DISPATCHER_ALIVE_MS)))) return toWebhookDelivery(record)
        const deadline = started + settings.timeoutMs + PING_MARGIN_MS
        let current = record
        while (!finished(current) && (yield* Clock.currentTimeMillis) < deadline) {
          yield* Effect.sleep(PING_POLL_MS)
          const found = yield* repo.findDelivery(caller.organizationId, id, record.id)
          // Gone with its webhook, deleted meanwhile: nothing more will happen to it.
          if (Option.isNone(found)) break
          current = found.value
        }
        return toWebhookDelivery(current)
      })

      const outbox = yield* EventOutbox
      const feed = Effect.fn("Webhooks.feed")(function*(query: EventFeedQuery) {
        const caller = yield* requirePermission("settings:read")
        const issuer = { key: cursorKey, organizationId: caller.organizationId }
        const parsed = yield* Effect.fromResult(parseFeedQuery(query, issuer))
        const entries = yield* outbox.feed(caller.organizationId, parsed)
        const last = entries[entries.length - 1]
        return {
          data: entries.map(({ event }) => ({
            id: event.id,
            event: event.event,
            timestamp: event.occurredAt,
            data: event.data
          })),
          nextCursor: feedCursor(last === undefined ? parsed.after : last.position, parsed.events, issuer)
        } satisfies EventFeedPage
      })

      return Webhooks.of({
        listEvents,
        create,
        get,
        list,
        update,
        delete: remove,
        listDeliveries,
        rotateSecret,
        redeliver,
        ping,
        feed
      })
    })
  )
}
