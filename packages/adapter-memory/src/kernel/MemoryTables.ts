/**
 * The shared in-memory tables of records that several capabilities read (catalog, reviews): one definition of
 * each table's name, key and row type, so every memory repository sees the same rows. Rows are the core's record
 * types plus the owning organization. Keys are record ids (UUIDs are unique across organizations).
 */
import type { Catalog, Kernel, Orders, Reviews, Webhooks } from "@feedback/core"
import { Option } from "effect"
import type { MemoryDatabase, RowObserver } from "./MemoryDatabase.ts"

type Owned<A> = A & { readonly organizationId: Kernel.OrganizationId }

export type SiteRow = Owned<Catalog.Site>
export type ProductRow = Owned<Catalog.Product>
export type CustomerRow = Owned<Catalog.Customer>
export type OrderRow = Owned<Orders.Order>
export type ReviewRow = Owned<Reviews.ReviewRecord> & {
  readonly importJobId: string | null
  readonly importRow: number | null
}
/** Keyed by review id: a review has at most one reply. */
export type ReviewReplyRow = Owned<Reviews.ReviewReply>
/** Keyed by review id: the review's files in order. */
export type ReviewFilesRow = {
  readonly organizationId: Kernel.OrganizationId
  readonly files: ReadonlyArray<Reviews.ReviewFile>
}
/** Keyed by review id: the review's survey answers in order. */
export type ReviewAnswersRow = {
  readonly organizationId: Kernel.OrganizationId
  readonly answers: ReadonlyArray<Reviews.SurveyAnswer>
}
export type ImportJobRow = Owned<Omit<Reviews.ImportJobRef, "row">>
export type ReviewDeletionRow = {
  readonly organizationId: Kernel.OrganizationId
  readonly reviewId: string
  readonly reason: string
  readonly note: string | null
  readonly actorKeyId: string
  readonly deletedAt: string
}

/**
 * How many reviews of each organization hold each browser fingerprint and IP address (the `collisions` include),
 * kept up to date with every write to the reviews table and its undo, like PostgreSQL's `review_value_counts`.
 */
export class ReviewValueCounts implements RowObserver<ReviewRow> {
  private readonly counts = new Map<string, number>()
  /** Reviews of the organization holding the value. */
  count(organizationId: string, kind: "browserFingerprint" | "ipAddress", value: string): number {
    return this.counts.get(ReviewValueCounts.key(organizationId, kind, value)) ?? 0
  }
  readonly changed = (before: ReviewRow | undefined, after: ReviewRow | undefined): void => {
    if (before !== undefined) this.add(before, -1)
    if (after !== undefined) this.add(after, 1)
  }
  private add(row: ReviewRow, delta: number): void {
    this.bump(row.organizationId, "browserFingerprint", row.browserFingerprint, delta)
    this.bump(row.organizationId, "ipAddress", row.ipAddress, delta)
  }
  private bump(
    organizationId: string,
    kind: "browserFingerprint" | "ipAddress",
    value: string | null,
    delta: number
  ): void {
    if (value === null) return
    const key = ReviewValueCounts.key(organizationId, kind, value)
    const n = (this.counts.get(key) ?? 0) + delta
    if (n === 0) this.counts.delete(key)
    else this.counts.set(key, n)
  }
  private static key(organizationId: string, kind: string, value: string): string {
    return `${organizationId}\u0000${kind}\u0000${value}`
  }
}

/** Oldest first, the order deliveries are claimed in: creation time, then id. */
export const oldestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
  a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/**
 * Indexes of the webhook deliveries, kept with every write to the deliveries table and its undo, so that the
 * dispatcher's work does not slow down as history or a backlog grows: the deliveries still to send or being sent
 * (`active`), the pending ones oldest first (what a claim walks, stopping once it has enough), the deliveries in
 * flight per webhook and per record (what a claim checks), and the (webhook, event) pairs that have their first
 * delivery (what a fan-out skips).
 */
export class DeliveryIndexes implements RowObserver<Webhooks.WebhookDeliveryRecord> {
  readonly active = new Map<string, Webhooks.WebhookDeliveryRecord>()
  /** First deliveries (not redeliveries) per `webhook/event` pair: one, as the store writes them. */
  readonly firsts = new Map<string, number>()
  /** In-flight deliveries per webhook id, and per `webhook/recordKey` for those about a record. */
  readonly inFlight = new Map<string, number>()
  readonly recordsInFlight = new Map<string, number>()
  /**
   * Pending deliveries in insertion order, which is oldest first while `pendingInOrder`: a fan-out appends newer
   * rows; a row made pending again (a release, an undo) may not be the newest, and the next walk re-sorts.
   */
  private readonly pending = new Map<string, Webhooks.WebhookDeliveryRecord>()
  /** The same rows per organization, in the same order: a claim takes organizations in turn (docs/FAIRNESS.md). */
  private readonly pendingPerOrganization = new Map<string, Map<string, Webhooks.WebhookDeliveryRecord>>()
  private pendingInOrder = true
  private newestPending: Webhooks.WebhookDeliveryRecord | undefined = undefined
  static firstKey(d: Pick<Webhooks.WebhookDeliveryRecord, "webhookId" | "eventId">): string {
    return `${d.webhookId}/${d.eventId}`
  }
  static recordKey(d: Pick<Webhooks.WebhookDeliveryRecord, "webhookId" | "recordKey">): string | undefined {
    return d.recordKey === null ? undefined : `${d.webhookId}/${d.recordKey}`
  }
  hasFirst(d: Pick<Webhooks.WebhookDeliveryRecord, "webhookId" | "eventId">): boolean {
    return this.firsts.has(DeliveryIndexes.firstKey(d))
  }
  /** The pending deliveries, oldest first. Rows written while walking them are seen or not, as a Map's are. */
  pendingOldestFirst(): IterableIterator<Webhooks.WebhookDeliveryRecord> {
    this.sortPending()
    return this.pending.values()
  }
  /** Each organization's pending deliveries, oldest first; organizations without any are left out. */
  pendingPerOrganizationOldestFirst(): ReadonlyMap<string, ReadonlyMap<string, Webhooks.WebhookDeliveryRecord>> {
    this.sortPending()
    return this.pendingPerOrganization
  }
  private sortPending(): void {
    if (this.pendingInOrder) return
    const sorted = [...this.pending.values()].sort(oldestFirst)
    this.pending.clear()
    this.pendingPerOrganization.clear()
    for (const d of sorted) this.addPending(d)
    this.newestPending = sorted.at(-1)
    this.pendingInOrder = true
  }
  private addPending(d: Webhooks.WebhookDeliveryRecord): void {
    this.pending.set(d.id, d)
    let ofOrganization = this.pendingPerOrganization.get(d.organizationId)
    if (ofOrganization === undefined) {
      ofOrganization = new Map()
      this.pendingPerOrganization.set(d.organizationId, ofOrganization)
    }
    ofOrganization.set(d.id, d)
  }
  private removePending(d: Webhooks.WebhookDeliveryRecord): void {
    this.pending.delete(d.id)
    const ofOrganization = this.pendingPerOrganization.get(d.organizationId)
    if (ofOrganization !== undefined && ofOrganization.delete(d.id) && ofOrganization.size === 0) {
      this.pendingPerOrganization.delete(d.organizationId)
    }
  }
  readonly changed = (
    before: Webhooks.WebhookDeliveryRecord | undefined,
    after: Webhooks.WebhookDeliveryRecord | undefined
  ): void => {
    if (before !== undefined) {
      this.active.delete(before.id)
      if (before.status === "pending") this.removePending(before)
      else if (before.status === "in_flight") this.countInFlight(before, -1)
    }
    if (after !== undefined) {
      if (after.status === "pending") {
        if (this.newestPending !== undefined && oldestFirst(after, this.newestPending) < 0) this.pendingInOrder = false
        else this.newestPending = after
        this.addPending(after)
      } else if (after.status === "in_flight") this.countInFlight(after, 1)
      if (after.status === "pending" || after.status === "in_flight") this.active.set(after.id, after)
    }
    // A status change keeps the row's (webhook, event, first or not): its first-delivery count does not move.
    const sameFirst = before !== undefined && after !== undefined && before.redeliveryOf === after.redeliveryOf &&
      before.webhookId === after.webhookId && before.eventId === after.eventId
    if (!sameFirst) {
      if (before !== undefined && before.redeliveryOf === null) this.countFirst(before, -1)
      if (after !== undefined && after.redeliveryOf === null) this.countFirst(after, 1)
    }
  }
  private countFirst(d: Webhooks.WebhookDeliveryRecord, delta: number): void {
    bump(this.firsts, DeliveryIndexes.firstKey(d), delta)
  }
  private countInFlight(d: Webhooks.WebhookDeliveryRecord, delta: number): void {
    bump(this.inFlight, d.webhookId, delta)
    const record = DeliveryIndexes.recordKey(d)
    if (record !== undefined) bump(this.recordsInFlight, record, delta)
  }
}

/** Adds `delta` to a count, dropping it at zero. */
const bump = (counts: Map<string, number>, key: string, delta: number): void => {
  const n = (counts.get(key) ?? 0) + delta
  if (n === 0) counts.delete(key)
  else counts.set(key, n)
}

/** The webhook deliveries table, with its `DeliveryIndexes`; every repository that touches deliveries opens it so. */
export const webhookDeliveries = (db: MemoryDatabase["Service"]) =>
  db.table<string, Webhooks.WebhookDeliveryRecord, DeliveryIndexes>("webhook_deliveries", () => new DeliveryIndexes())

/** An outbox event and its place in recording order. */
export interface RecordedEvent {
  readonly event: Kernel.DomainEvent
  readonly position: number
}

/**
 * The outbox events not yet fanned out, per organization in recording order: kept with every write to the events
 * table and to the fan-out marks, and their undo (it observes both), so that a fan-out reads what waits for it and
 * never walks the history. An event put back by an undo may not be the newest of its organization: the next read
 * re-sorts that organization's events.
 */
export class UndispatchedEvents implements RowObserver<Kernel.DomainEvent, string> {
  private lastPosition = 0
  /** Every event in the table, with its position (taken when it is written, as the table's iteration order). */
  private readonly recorded = new Map<string, RecordedEvent>()
  private readonly marked = new Set<string>()
  private readonly waiting = new Map<string, Map<string, RecordedEvent>>()
  /** Per organization, the newest position it has waited with: an older one put back unsorts it. */
  private readonly newest = new Map<string, number>()
  private readonly unsorted = new Set<string>()

  /** Each organization's events not yet fanned out, in recording order; organizations without any are left out. */
  perOrganization(): ReadonlyMap<string, ReadonlyMap<string, RecordedEvent>> {
    for (const organizationId of this.unsorted) {
      const ofOrganization = this.waiting.get(organizationId)
      if (ofOrganization === undefined) continue
      const sorted = [...ofOrganization.values()].sort((a, b) => a.position - b.position)
      ofOrganization.clear()
      for (const e of sorted) ofOrganization.set(e.event.id, e)
    }
    this.unsorted.clear()
    return this.waiting
  }

  /** Observes the events table (`domain_events`). */
  readonly changed = (before: Kernel.DomainEvent | undefined, after: Kernel.DomainEvent | undefined, id: string) => {
    if (after === undefined) {
      this.recorded.delete(id)
      if (before !== undefined) this.unwait(before.organizationId, id)
      return
    }
    // A rewrite (a redaction) keeps the event's place; a new row, or one an undo puts back, takes the next.
    const entry = { event: after, position: this.recorded.get(id)?.position ?? ++this.lastPosition }
    this.recorded.set(id, entry)
    if (!this.marked.has(id)) this.wait(entry)
  }

  /** Observes the fan-out marks (`webhook_fanned_out_events`). */
  readonly marks: RowObserver<true, string> = {
    changed: (_before, after, id) => {
      const entry = this.recorded.get(id)
      if (after !== undefined) {
        this.marked.add(id)
        if (entry !== undefined) this.unwait(entry.event.organizationId, id)
      } else {
        this.marked.delete(id)
        if (entry !== undefined) this.wait(entry)
      }
    }
  }

  private wait(entry: RecordedEvent): void {
    const organizationId = entry.event.organizationId
    let ofOrganization = this.waiting.get(organizationId)
    if (ofOrganization === undefined) {
      ofOrganization = new Map()
      this.waiting.set(organizationId, ofOrganization)
    }
    const newest = this.newest.get(organizationId) ?? 0
    if (entry.position < newest) {
      if (!ofOrganization.has(entry.event.id)) this.unsorted.add(organizationId)
    } else this.newest.set(organizationId, entry.position)
    ofOrganization.set(entry.event.id, entry)
  }

  private unwait(organizationId: string, id: string): void {
    const ofOrganization = this.waiting.get(organizationId)
    if (ofOrganization !== undefined && ofOrganization.delete(id) && ofOrganization.size === 0) {
      this.waiting.delete(organizationId)
      this.newest.delete(organizationId)
    }
  }
}

/** The outbox (`domain_events`), with its `UndispatchedEvents`; every repository that touches events opens it so. */
export const domainEvents = (db: MemoryDatabase["Service"]) =>
  db.table<string, Kernel.DomainEvent, UndispatchedEvents>("domain_events", () => new UndispatchedEvents())

/** The fan-out marks: the events the dispatcher has fanned out, observed by the events' `UndispatchedEvents`. */
export const fanOutMarks = (db: MemoryDatabase["Service"]) => {
  const undispatched = domainEvents(db).observer
  return db.table<string, true, RowObserver<true, string>>("webhook_fanned_out_events", () => undispatched.marks)
}

export const memoryTables = (db: MemoryDatabase["Service"]) => ({
  sites: db.table<string, SiteRow>("sites"),
  products: db.table<string, ProductRow>("products"),
  customers: db.table<string, CustomerRow>("customers"),
  orders: db.table<string, OrderRow>("orders"),
  reviews: db.table<string, ReviewRow, ReviewValueCounts>("reviews", () => new ReviewValueCounts()),
  reviewReplies: db.table<string, ReviewReplyRow>("review_replies"),
  reviewFiles: db.table<string, ReviewFilesRow>("review_files"),
  reviewAnswers: db.table<string, ReviewAnswersRow>("review_answers"),
  importJobs: db.table<string, ImportJobRow>("import_jobs"),
  reviewDeletions: db.table<string, ReviewDeletionRow>("review_deletions")
})
export type MemoryTables = ReturnType<typeof memoryTables>

// ---------------------------------------------------------------------------------------------------------------
// Rows ↔ records: every memory repository (and the test kit) goes through these, so a record is rebuilt one way.

/** The row when it belongs to the organization (another organization's row does not exist). */
export const ownedBy = <R extends { readonly organizationId: string }>(
  organizationId: string,
  row: R | undefined
): R | undefined => row !== undefined && row.organizationId === organizationId ? row : undefined

/** The record without its owner, as the API shows it. */
export const unowned = <A>(row: Owned<A>): A => {
  const { organizationId: _, ...record } = row
  return record as unknown as A
}

/** The organization's record with that id, without its owner. */
export const findOwned = <A>(
  table: { readonly get: (id: string) => Owned<A> | undefined },
  organizationId: string,
  id: string
): Option.Option<A> => Option.map(Option.fromUndefinedOr(ownedBy(organizationId, table.get(id))), unowned)

/** The review as stored, with its import provenance. */
export const reviewRowOf = (
  organizationId: Kernel.OrganizationId,
  review: Reviews.ReviewRecord,
  importJob: { readonly id: string; readonly row: number } | null = null
): ReviewRow => ({ ...review, organizationId, importJobId: importJob?.id ?? null, importRow: importJob?.row ?? null })

/** The review record of a row (without owner and import provenance). */
export const reviewRecordOf = (row: ReviewRow): Reviews.ReviewRecord => {
  const { organizationId: _, importJobId: _j, importRow: _r, ...record } = row
  return record
}
