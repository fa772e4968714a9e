/**
 * The shared in-memory tables of records that several capabilities read (catalog, reviews): one definition of
 * each table's name, key and row type, so every memory repository sees the same rows. Rows are the core's record
 * types plus the owning organization. Keys are record ids (UUIDs are unique across organizations).
 */
import type {
  Customer,
  ImportJobRef,
  OrganizationId,
  Product,
  ReviewFile,
  ReviewRecord,
  ReviewReply,
  Site,
  SurveyAnswer,
  WebhookDeliveryRecord
} from "@feedback/core"
import { Option } from "effect"
import type { MemoryDatabase, RowObserver } from "./MemoryDatabase.ts"

type Owned<A> = A & { readonly organizationId: OrganizationId }

export type SiteRow = Owned<Site>
export type ProductRow = Owned<Product>
export type CustomerRow = Owned<Customer>
export type ReviewRow = Owned<ReviewRecord> & {
  readonly importJobId: string | null
  readonly importRow: number | null
}
/** Keyed by review id: a review has at most one reply. */
export type ReviewReplyRow = Owned<ReviewReply>
/** Keyed by review id: the review's files in order. */
export type ReviewFilesRow = { readonly organizationId: OrganizationId; readonly files: ReadonlyArray<ReviewFile> }
/** Keyed by review id: the review's survey answers in order. */
export type ReviewAnswersRow = { readonly organizationId: OrganizationId; readonly answers: ReadonlyArray<SurveyAnswer> }
export type ImportJobRow = Owned<Omit<ImportJobRef, "row">>
export type ReviewDeletionRow = {
  readonly organizationId: OrganizationId
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
  private bump(organizationId: string, kind: "browserFingerprint" | "ipAddress", value: string | null, delta: number): void {
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

/**
 * Indexes of the webhook deliveries, kept with every write to the deliveries table and its undo, so that the
 * dispatcher's work does not slow down as history grows: the deliveries still to send or being sent (`pending`,
 * `in_flight`: what a claim reads), and the (webhook, event) pairs that have their first delivery (what a fan-out
 * skips).
 */
export class DeliveryIndexes implements RowObserver<WebhookDeliveryRecord> {
  readonly active = new Map<string, WebhookDeliveryRecord>()
  /** First deliveries (not redeliveries) per `webhook/event` pair: one, as the store writes them. */
  readonly firsts = new Map<string, number>()
  static firstKey(d: Pick<WebhookDeliveryRecord, "webhookId" | "eventId">): string {
    return `${d.webhookId}/${d.eventId}`
  }
  hasFirst(d: Pick<WebhookDeliveryRecord, "webhookId" | "eventId">): boolean {
    return this.firsts.has(DeliveryIndexes.firstKey(d))
  }
  readonly changed = (before: WebhookDeliveryRecord | undefined, after: WebhookDeliveryRecord | undefined): void => {
    if (before !== undefined) {
      this.active.delete(before.id)
      if (before.redeliveryOf === null) this.countFirst(before, -1)
    }
    if (after !== undefined) {
      if (after.status === "pending" || after.status === "in_flight") this.active.set(after.id, after)
      if (after.redeliveryOf === null) this.countFirst(after, 1)
    }
  }
  private countFirst(d: WebhookDeliveryRecord, delta: number): void {
    const key = DeliveryIndexes.firstKey(d)
    const n = (this.firsts.get(key) ?? 0) + delta
    if (n === 0) this.firsts.delete(key)
    else this.firsts.set(key, n)
  }
}

/** The webhook deliveries table, with its `DeliveryIndexes`; every repository that touches deliveries opens it so. */
export const webhookDeliveries = (db: MemoryDatabase["Service"]) =>
  db.table<string, WebhookDeliveryRecord, DeliveryIndexes>("webhook_deliveries", () => new DeliveryIndexes())

export const memoryTables = (db: MemoryDatabase["Service"]) => ({
  sites: db.table<string, SiteRow>("sites"),
  products: db.table<string, ProductRow>("products"),
  customers: db.table<string, CustomerRow>("customers"),
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
export const ownedBy = <R extends { readonly organizationId: string }>(organizationId: string, row: R | undefined): R | undefined =>
  row !== undefined && row.organizationId === organizationId ? row : undefined

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
  organizationId: OrganizationId,
  review: ReviewRecord,
  importJob: { readonly id: string; readonly row: number } | null = null
): ReviewRow => ({ ...review, organizationId, importJobId: importJob?.id ?? null, importRow: importJob?.row ?? null })

/** The review record of a row (without owner and import provenance). */
export const reviewRecordOf = (row: ReviewRow): ReviewRecord => {
  const { organizationId: _, importJobId: _j, importRow: _r, ...record } = row
  return record
}
