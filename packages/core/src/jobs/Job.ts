/**
 * Import and export jobs (docs/DECISIONS.md §20; shared DECISIONS §15): the record `GET /import-jobs/{id}` and
 * `GET /export-jobs/{id}` answer, and the record a store keeps, which adds what running the job needs (who asked,
 * the options, the lease of the process running it, where it has got to).
 */
import { Schema } from "effect"
import { ImportJobId, type OrganizationId, type SecretKeyId, type UserId } from "../kernel/Ids.ts"
import type { Permission } from "../kernel/Permission.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const JobType = Schema.Literals(["reviews", "products", "customers"])
export type JobType = typeof JobType.Type
export const JobAction = Schema.Literals(["import", "export"])
export type JobAction = typeof JobAction.Type
export const JobStatus = Schema.Literals(["queued", "running", "succeeded", "failed"])
export type JobStatus = typeof JobStatus.Type
export const JobFormat = Schema.Literals(["csv", "ndjson"])
export type JobFormat = typeof JobFormat.Type

export const JobProgress = Schema.Struct({
  totalRows: Schema.Int,
  processedRows: Schema.Int,
  importedRows: Schema.Int,
  skippedRows: Schema.Int
}).annotate({ identifier: "JobProgress" })
export type JobProgress = typeof JobProgress.Type

export const JobSkippedRow = Schema.Struct({ index: Schema.Int, message: Schema.String })
export type JobSkippedRow = typeof JobSkippedRow.Type

export const JobError = Schema.Struct({ code: Schema.String, message: Schema.String })
export type JobError = typeof JobError.Type

/** A job as the API answers it. */
export const Job = Schema.Struct({
  id: ImportJobId,
  type: JobType,
  action: JobAction,
  format: JobFormat,
  status: JobStatus,
  createdAt: Timestamp,
  startedAt: Schema.NullOr(Timestamp),
  finishedAt: Schema.NullOr(Timestamp),
  progress: JobProgress,
  /** The first 1,000 rows an import skipped; `index` is the 0-based position of the row among the file's data rows. */
  skipped: Schema.Array(JobSkippedRow),
  error: Schema.NullOr(JobError),
  /** Export jobs: when the file is deleted (null before it exists and for imports). */
  expiresAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Job" })
export type Job = typeof Job.Type

/** Whom a job acts for: the caller that created it, with the permissions it had then. */
export type JobActor =
  | { readonly kind: "key"; readonly keyId: SecretKeyId; readonly permissions: ReadonlyArray<Permission> }
  | { readonly kind: "user"; readonly userId: UserId; readonly name: string }

/** A job as a store keeps it. */
export interface JobRecord extends Job {
  readonly organizationId: OrganizationId
  readonly actor: JobActor
  /** Imports: stop at the first row that cannot be imported, importing nothing. */
  readonly strict: boolean
  /** Exports: the list's filter document and search, as sent. */
  readonly filter: string | null
  readonly search: string | null
  /** True while the request that creates an import is still storing its rows: not visible, not runnable. */
  readonly receiving: boolean
  readonly leaseOwner: string | null
  readonly leaseExpiresAt: Timestamp | null
  /** Imports: the last staged row (1-based) whose batch committed. Exports: the list cursor of the next page. */
  readonly position: string | null
}

/** At most this many rows per job (spec: "Import and export jobs read or write up to 100,000 rows"). */
export const MAX_JOB_ROWS = 100_000
/** At most this many bytes of import file. */
export const MAX_JOB_BYTES = 64 * 1024 * 1024
/** Skipped rows a job lists; the count goes on in `progress.skippedRows`. */
export const MAX_LISTED_SKIPPED = 1_000

export const emptyProgress: JobProgress = { totalRows: 0, processedRows: 0, importedRows: 0, skippedRows: 0 }

/** The API's view of a stored job. */
export const jobView = (record: JobRecord): Job => ({
  id: record.id,
  type: record.type,
  action: record.action,
  format: record.format,
  status: record.status,
  createdAt: record.createdAt,
  startedAt: record.startedAt,
  finishedAt: record.finishedAt,
  progress: record.progress,
  skipped: record.skipped,
  error: record.error,
  expiresAt: record.expiresAt
})

/** The permission that creating (import) or reading (both) a job of this type needs. */
export const jobPermission = (type: JobType, access: "read" | "write"): Permission => `${type}:${access}` as Permission
