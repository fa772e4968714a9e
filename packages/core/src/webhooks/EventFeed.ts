/**
 * The event feed (`GET /events`, docs/DECISIONS.md §17): every event of the organization, oldest first, whether or
 * not a webhook subscribed, resumable from a cursor that is never null (it is where to continue later), optionally
 * only some event names. A consumer that missed deliveries catches up here, deduplicating on the event `id` (the
 * deliveries' `eventId`).
 */
import { Result, Schema } from "effect"
import { type CursorBinding, type CursorIssuer, decodeCursor, encodeCursor, type Sort } from "../kernel/Cursor.ts"
import { InvalidRequest, type RequestIssue } from "../kernel/Errors.ts"
import type { FeedPosition } from "../kernel/EventOutbox.ts"
import { matchAll } from "../kernel/Filter.ts"
import { Uuid } from "../kernel/Ids.ts"
import { newestFirstLimits } from "../kernel/NewestFirstPage.ts"
import { Timestamp } from "../kernel/Timestamp.ts"
import { isEventName } from "./EventCatalog.ts"

export const FeedEvent = Schema.Struct({
  id: Uuid,
  event: Schema.String,
  timestamp: Timestamp,
  data: Schema.Unknown
})
export type FeedEvent = typeof FeedEvent.Type

export const EventFeedPage = Schema.Struct({
  data: Schema.Array(FeedEvent),
  /** Where to continue: pass it back later to get what happened since. Never null. */
  nextCursor: Schema.String
}).annotate({ identifier: "EventFeedPage" })
export type EventFeedPage = typeof EventFeedPage.Type

export interface EventFeedQuery {
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
  /** Event names, as a list or comma-separated; absent: every event. */
  readonly events?: string | ReadonlyArray<string> | undefined
}

export interface ParsedFeedQuery {
  readonly after: FeedPosition | undefined
  readonly limit: number
  readonly events: ReadonlyArray<string> | undefined
}

const feedOrder: Sort = { field: "position", direction: "asc", type: "string" }

/** A cursor is bound to the organization and to the event names asked for (in any order). */
const bindingOf = (events: ReadonlyArray<string> | undefined): CursorBinding => ({
  endpoint: "events",
  sort: feedOrder,
  filter: matchAll,
  search: events === undefined ? undefined : [...events].sort().join(",")
})

export const parseFeedQuery = (
  query: EventFeedQuery,
  issuer: CursorIssuer
): Result.Result<ParsedFeedQuery, InvalidRequest> => {
  const issues: Array<RequestIssue> = []
  const limit = query.limit ?? newestFirstLimits.defaultLimit
  if (!Number.isInteger(limit) || limit < 1 || limit > newestFirstLimits.maxLimit) {
    issues.push({ path: "limit", message: `must be a whole number from 1 to ${newestFirstLimits.maxLimit}` })
  }
  const raw = query.events === undefined
    ? undefined
    : typeof query.events === "string"
    ? query.events.split(",")
    : [...query.events]
  const names = raw === undefined ? undefined : [...new Set(raw.map((n) => n.trim()).filter((n) => n !== ""))]
  if (names !== undefined) {
    if (names.length === 0 || names.length > 100) {
      issues.push({ path: "events", message: "list 1 to 100 event names, comma-separated" })
    }
    names.slice(0, 20).forEach((n, i) => {
      if (!isEventName(n)) {
        issues.push({
          path: `events[${i}]`,
          message: `unknown event ${JSON.stringify(n.slice(0, 100))}; GET /webhook-events lists them`
        })
      }
    })
  }
  let after: FeedPosition | undefined
  if (query.cursor !== undefined && query.cursor !== "") {
    const decoded = decodeCursor(query.cursor, bindingOf(names), issuer)
    if (Result.isFailure(decoded)) issues.push(...decoded.failure.issues)
    else {after = typeof decoded.success.value === "string" && decoded.success.value !== ""
        ? decoded.success.value
        : undefined}
  }
  return issues.length > 0 ? Result.fail(InvalidRequest.of(issues)) : Result.succeed({ after, limit, events: names })
}

/** The id a cursor carries beside the position (cursors name a record; the start of the feed has none). */
const NO_EVENT = "00000000-0000-0000-0000-000000000000"

/** The cursor of a feed position (the start of the feed when none). */
export const feedCursor = (
  position: FeedPosition | undefined,
  events: ReadonlyArray<string> | undefined,
  issuer: CursorIssuer
): string => encodeCursor({ value: position ?? "", id: NO_EVENT }, bindingOf(events), issuer)
