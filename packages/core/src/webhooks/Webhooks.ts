/**
 * Webhook registration use-cases (docs/DECISIONS.md §7): create, read, list, update, delete, the event catalog and the
 * delivery log. Every change records `webhook.created|updated|deleted` (data: the webhook as the API shows it) in
 * the same unit of work. Input is checked completely before anything is written: a bad request changes nothing.
 *
 * The destination check resolves DNS, so it runs before the unit of work opens (no transaction waits on DNS).
 */
import { Effect, Option, Result } from "effect"
import { type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { type CursorBinding, type CursorIssuer, decodeCursor, encodeCursor, type Sort } from "../kernel/Cursor.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { EVENT_NAMES, type EventName, isEventName } from "./EventCatalog.ts"
import { type EventOutbox, recordEvent } from "../kernel/EventOutbox.ts"
import { type Forbidden, InvalidRequest, NotFound, type RequestIssue } from "../kernel/Errors.ts"
import type { OrganizationId, WebhookId } from "../kernel/Ids.ts"
import { type IdGenerator, nextId } from "../kernel/IdGenerator.ts"
import { matchAll } from "../kernel/Filter.ts"
import { now } from "../kernel/Timestamp.ts"
import { transactional, type UnitOfWork } from "../kernel/UnitOfWork.ts"
import {
  type CreateWebhook,
  HMAC_SECRET_MAX_LENGTH,
  hmacSecretProblem,
  MAX_SUBSCRIBED_EVENTS,
  toWebhook,
  toWebhookDelivery,
  type UpdateWebhook,
  type Webhook,
  type WebhookDeliveryList,
  type WebhookEventList,
  type WebhookList,
  type WebhookRecord
} from "./Webhook.ts"
import { checkDestination, CurrentWebhookSettings, type HostResolver } from "./WebhookDestination.ts"
import { type WebhookListPosition, WebhookRepository } from "./WebhookRepository.ts"

export const MAX_HMAC_SECRET_LENGTH = HMAC_SECRET_MAX_LENGTH

export const webhookListLimits = { defaultLimit: 50, maxLimit: 250 } as const

// --- input rules -------------------------------------------------------------------------------------------------

/** The subscription: at least one name, each from the catalog; repeats are dropped, first occurrence kept. */
export const checkWebhookEvents = (events: ReadonlyArray<string>): Result.Result<ReadonlyArray<EventName>, InvalidRequest> => {
  if (events.length === 0) {
    return Result.fail(InvalidRequest.single("body.events", "list at least one event name; GET /webhook-events lists them"))
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
  if (issues.length > 0) return Result.fail(invalid(issues))
  return Result.succeed([...seen])
}

export const checkWebhookSecret = (secret: string): Result.Result<string, InvalidRequest> => {
  const problem = hmacSecretProblem(secret)
  return problem === undefined ? Result.succeed(secret) : Result.fail(InvalidRequest.single("body.hmacSecret", problem))
}

const invalid = (issues: ReadonlyArray<RequestIssue>): InvalidRequest => InvalidRequest.of(issues)

/** The URL as it will be stored (normalised by the URL parser), or a 400 naming `body.url`. */
const checkUrl = (url: string): Effect.Effect<string, InvalidRequest, HostResolver> =>
  Effect.flatMap(CurrentWebhookSettings, (settings) =>
    checkDestination(url, settings).pipe(
      Effect.map((d) => d.url.href),
      Effect.mapError((e) => new InvalidRequest({ message: e.reason, issues: [{ path: "body.url", message: e.reason }] }))
    ))

// --- pagination --------------------------------------------------------------------------------------------------

export interface WebhookPageQuery {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * Webhook lists page with the cursors of every other list (`Cursor.ts`): newest first by (createdAt, id), bound to
 * the organization and to the list (`scope`), so a cursor of one webhook's delivery log is refused on another's.
 */
const webhookListSort: Sort = { field: "createdAt", direction: "desc", type: "timestamp" }

const webhookListBinding = (scope: string): CursorBinding => ({
  endpoint: scope,
  sort: webhookListSort,
  filter: matchAll,
  search: undefined
})

export const encodeListCursor = (scope: string, position: WebhookListPosition, issuer: CursorIssuer): string =>
  encodeCursor({ value: position.createdAt, id: position.id }, webhookListBinding(scope), issuer)

export const decodeListCursor = (
  scope: string,
  token: string,
  issuer: CursorIssuer
): Result.Result<WebhookListPosition, InvalidRequest> =>
  Result.flatMap(decodeCursor(token, webhookListBinding(scope), issuer), ({ value, id }) =>
    typeof value === "string"
      ? Result.succeed({ createdAt: value as WebhookListPosition["createdAt"], id })
      : Result.fail(InvalidRequest.single("cursor", "is not a cursor of this list; pass `nextCursor` from the previous page unchanged")))

const checkLimit = (limit: number | undefined): Result.Result<number, InvalidRequest> =>
  limit === undefined
    ? Result.succeed(webhookListLimits.defaultLimit)
    : Number.isInteger(limit) && limit >= 1 && limit <= webhookListLimits.maxLimit
    ? Result.succeed(limit)
    : Result.fail(InvalidRequest.single("limit", `must be a whole number from 1 to ${webhookListLimits.maxLimit}`))

const page = <Row extends { readonly createdAt: WebhookListPosition["createdAt"]; readonly id: string }, Out>(
  organizationId: OrganizationId,
  scope: string,
  query: WebhookPageQuery,
  fetch: (request: { after: WebhookListPosition | undefined; limit: number }) => Effect.Effect<ReadonlyArray<Row>>,
  view: (row: Row) => Out
): Effect.Effect<{ data: ReadonlyArray<Out>; nextCursor: string | null }, InvalidRequest, CursorKey> =>
  Effect.gen(function*() {
    const issuer: CursorIssuer = { key: yield* CursorKey, organizationId }
    const limit = yield* Effect.fromResult(checkLimit(query.limit))
    const after = query.cursor === undefined || query.cursor === ""
      ? undefined
      : yield* Effect.fromResult(decodeListCursor(scope, query.cursor, issuer))
    const rows = yield* fetch({ after, limit: limit + 1 })
    const pageRows = rows.slice(0, limit)
    const last = pageRows[pageRows.length - 1]
    return {
      data: pageRows.map(view),
      nextCursor: rows.length > limit && last !== undefined
        ? encodeListCursor(scope, { createdAt: last.createdAt, id: last.id }, issuer)
        : null
    }
  })

// --- use-cases ---------------------------------------------------------------------------------------------------

type Writes = CurrentCaller | WebhookRepository | UnitOfWork | EventOutbox | IdGenerator

const findOwned = (organizationId: OrganizationId, id: WebhookId): Effect.Effect<WebhookRecord, NotFound, WebhookRepository> =>
  WebhookRepository.use((r) => r.findById(organizationId, id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(NotFound.of("webhook", id)),
      onSome: Effect.succeed
    }))
  )

/** `GET /webhook-events`: every event name a webhook can subscribe to. */
export const listWebhookEvents: Effect.Effect<WebhookEventList, Forbidden, CurrentCaller> = Effect.as(
  requirePermission("settings:read"),
  { data: EVENT_NAMES }
)

export const createWebhook = (
  input: CreateWebhook
): Effect.Effect<Webhook, Forbidden | InvalidRequest, Writes | HostResolver> =>
  Effect.gen(function*() {
    const caller = yield* requirePermission("settings:write")
    const events = yield* Effect.fromResult(checkWebhookEvents(input.events))
    const hmacSecret = input.hmacSecret === undefined || input.hmacSecret === null
      ? null
      : yield* Effect.fromResult(checkWebhookSecret(input.hmacSecret))
    const url = yield* checkUrl(input.url)
    return yield* transactional(Effect.gen(function*() {
      const at = yield* now
      const record: WebhookRecord = {
        id: yield* nextId<WebhookId>(),
        organizationId: caller.organizationId,
        url,
        events,
        hmacSecret,
        createdAt: at,
        updatedAt: at
      }
      yield* WebhookRepository.use((r) => r.insert(record))
      const view = toWebhook(record)
      yield* recordEvent(caller.organizationId, "webhook.created", view)
      return view
    }))
  })

export const getWebhook = (id: WebhookId): Effect.Effect<Webhook, Forbidden | NotFound, CurrentCaller | WebhookRepository> =>
  Effect.gen(function*() {
    const caller = yield* requirePermission("settings:read")
    return toWebhook(yield* findOwned(caller.organizationId, id))
  })

export const listWebhooks = (
  query: WebhookPageQuery
): Effect.Effect<WebhookList, Forbidden | InvalidRequest, CurrentCaller | WebhookRepository | CursorKey> =>
  Effect.gen(function*() {
    const caller = yield* requirePermission("settings:read")
    const repo = yield* WebhookRepository
    return yield* page(caller.organizationId, "webhooks", query, (p) => repo.list(caller.organizationId, p), toWebhook)
  })

/** Only sent fields change; a PATCH that changes nothing writes nothing and fires no event. */
export const updateWebhook = (
  id: WebhookId,
  patch: UpdateWebhook
): Effect.Effect<Webhook, Forbidden | InvalidRequest | NotFound, Writes | HostResolver> =>
  Effect.gen(function*() {
    const caller = yield* requirePermission("settings:write")
    const events = patch.events === undefined ? undefined : yield* Effect.fromResult(checkWebhookEvents(patch.events))
    const hmacSecret = patch.hmacSecret === undefined || patch.hmacSecret === null
      ? patch.hmacSecret
      : yield* Effect.fromResult(checkWebhookSecret(patch.hmacSecret))
    // 404 before the (slower) destination check, so a missing webhook is reported as such.
    yield* findOwned(caller.organizationId, id)
    const url = patch.url === undefined ? undefined : yield* checkUrl(patch.url)
    return yield* transactional(Effect.gen(function*() {
      const current = yield* findOwned(caller.organizationId, id)
      const next = {
        ...current,
        ...(url === undefined ? {} : { url }),
        ...(events === undefined ? {} : { events }),
        ...(hmacSecret === undefined ? {} : { hmacSecret })
      }
      const changed = next.url !== current.url || next.hmacSecret !== current.hmacSecret ||
        next.events.length !== current.events.length || next.events.some((e, i) => e !== current.events[i])
      if (!changed) return toWebhook(current)
      const updated: WebhookRecord = { ...next, updatedAt: yield* now }
      yield* WebhookRepository.use((r) => r.update(updated))
      const view = toWebhook(updated)
      yield* recordEvent(caller.organizationId, "webhook.updated", view)
      return view
    }))
  })

/** Deletes the webhook with its delivery log; its pending deliveries are never sent. Returns it as it was. */
export const deleteWebhook = (id: WebhookId): Effect.Effect<Webhook, Forbidden | NotFound, Writes> =>
  Effect.gen(function*() {
    const caller = yield* requirePermission("settings:write")
    return yield* transactional(Effect.gen(function*() {
      const current = yield* findOwned(caller.organizationId, id)
      yield* WebhookRepository.use((r) => r.remove(caller.organizationId, id))
      const view = toWebhook(current)
      yield* recordEvent(caller.organizationId, "webhook.deleted", view)
      return view
    }))
  })

/** `GET /webhooks/{id}/events`: the webhook's deliveries, newest first. */
export const listWebhookDeliveries = (
  id: WebhookId,
  query: WebhookPageQuery
): Effect.Effect<WebhookDeliveryList, Forbidden | InvalidRequest | NotFound, CurrentCaller | WebhookRepository | CursorKey> =>
  Effect.gen(function*() {
    const caller = yield* requirePermission("settings:read")
    yield* findOwned(caller.organizationId, id)
    const repo = yield* WebhookRepository
    return yield* page(
      caller.organizationId,
      `webhooks/${id.toLowerCase()}/events`,
      query,
      (p) => repo.listDeliveries(caller.organizationId, id, p),
      toWebhookDelivery
    )
  })
