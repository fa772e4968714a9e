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
  SurveyAnswer
} from "@feedback/core"
import type { MemoryDatabase } from "./MemoryDatabase.ts"

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

export const memoryTables = (db: MemoryDatabase["Service"]) => ({
  sites: db.table<string, SiteRow>("sites"),
  products: db.table<string, ProductRow>("products"),
  customers: db.table<string, CustomerRow>("customers"),
  reviews: db.table<string, ReviewRow>("reviews"),
  reviewReplies: db.table<string, ReviewReplyRow>("review_replies"),
  reviewFiles: db.table<string, ReviewFilesRow>("review_files"),
  reviewAnswers: db.table<string, ReviewAnswersRow>("review_answers"),
  importJobs: db.table<string, ImportJobRow>("import_jobs"),
  reviewDeletions: db.table<string, ReviewDeletionRow>("review_deletions")
})
export type MemoryTables = ReturnType<typeof memoryTables>
