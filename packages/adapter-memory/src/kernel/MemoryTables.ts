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
 * The webhook deliveries still to send or being sent (`pending`, `in_flight`), kept with every write to the deliveries
 * table and its undo: a claim reads these, not every delivery ever stored, so it does not slow down as history grows.
 */
export class ActiveDeliveries implements RowObserver<WebhookDeliveryRecord> {
  readonly rows = new Map<string, WebhookDeliveryRecord>()
  readonly changed = (before: WebhookDeliveryRecord | undefined, after: WebhookDeliveryRecord | undefined): void => {
    if (before !== undefined) this.rows.delete(before.id)
    if (after !== undefined && (after.status === "pending" || after.status === "in_flight")) this.rows.set(after.id, after)
  }
}

/** The webhook deliveries table, with its `ActiveDeliveries`; every repository that touches deliveries opens it so. */
export const webhookDeliveries = (db: MemoryDatabase["Service"]) =>
  db.table<string, WebhookDeliveryRecord, ActiveDeliveries>("webhook_deliveries", () => new ActiveDeliveries())

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
