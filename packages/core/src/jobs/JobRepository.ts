/**
 * Storage of import and export jobs: the job records, the staged rows of an import (the file as received, one row
 * each, so the import runs off the request path and resumes after a crash), and the chunks of an export's file.
 *
 * Every method is scoped to an organization except `claim` and `purge`, which serve the background worker of any
 * organization. Writes join the caller's unit of work, so a batch's import and the job's progress commit together.
 */
import { Context, type Effect, type Option } from "effect"
import type { ImportJobId, OrganizationId } from "../kernel/Ids.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import type { JobAction, JobRecord } from "./Job.ts"

/** One row of an import file as received: its 1-based number among the data rows and its JSON text. */
export interface StagedRow {
  readonly row: number
  readonly data: string
}

/** One piece of an export file, in order. */
export interface FileChunk {
  readonly seq: number
  readonly data: string
}

export class JobRepository extends Context.Service<JobRepository, {
  readonly insert: (job: JobRecord) => Effect.Effect<void>
  /** Replaces the stored record of the job (status, progress, lease, position…). */
  readonly save: (job: JobRecord) => Effect.Effect<void>
  /** The job unless it is still receiving or has another action. */
  readonly find: (
    organizationId: OrganizationId,
    id: ImportJobId,
    action: JobAction
  ) => Effect.Effect<Option.Option<JobRecord>>
  /** The job as stored, held against concurrent writers until the unit of work ends. */
  readonly lock: (organizationId: OrganizationId, id: ImportJobId) => Effect.Effect<Option.Option<JobRecord>>
  /** Removes the job with its staged rows and file chunks. */
  readonly remove: (organizationId: OrganizationId, id: ImportJobId) => Effect.Effect<void>
  /**
   * Takes the oldest runnable job for `owner` until `leaseUntil`: a queued one, or a running one whose lease ran out
   * (its process died). Atomic across processes: two callers never take the same job. The answer is the job as
   * stored after the claim (status `running`, `startedAt` set on first start).
   */
  readonly claim: (owner: string, at: Timestamp, leaseUntil: Timestamp) => Effect.Effect<Option.Option<JobRecord>>
  /** Extends the lease while `owner` still holds it; answers whether it does. */
  readonly renewLease: (
    organizationId: OrganizationId,
    id: ImportJobId,
    owner: string,
    leaseUntil: Timestamp
  ) => Effect.Effect<boolean>

  readonly appendRows: (
    organizationId: OrganizationId,
    id: ImportJobId,
    rows: ReadonlyArray<StagedRow>
  ) => Effect.Effect<void>
  /** Staged rows numbered after `afterRow`, in order, at most `limit`. */
  readonly readRows: (
    organizationId: OrganizationId,
    id: ImportJobId,
    afterRow: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<StagedRow>>
  readonly deleteRows: (organizationId: OrganizationId, id: ImportJobId) => Effect.Effect<void>

  readonly appendChunk: (organizationId: OrganizationId, id: ImportJobId, chunk: FileChunk) => Effect.Effect<void>
  /** Chunks from `fromSeq` on, in order, at most `limit`. */
  readonly readChunks: (
    organizationId: OrganizationId,
    id: ImportJobId,
    fromSeq: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<FileChunk>>
  readonly deleteChunks: (organizationId: OrganizationId, id: ImportJobId) => Effect.Effect<void>
  /**
   * The organization's exports that hold or are writing a file at `at` (running, or succeeded and not expired), held
   * against concurrent writers (their workers) until the unit of work ends.
   */
  readonly lockHeldExports: (organizationId: OrganizationId, at: Timestamp) => Effect.Effect<ReadonlyArray<JobRecord>>

  /**
   * Housekeeping: deletes the files of export jobs whose `expiresAt` passed (the job stays, its download is gone),
   * and removes jobs still receiving since before `abandonedBefore` (their request died mid-upload).
   */
  readonly purge: (at: Timestamp, abandonedBefore: Timestamp) => Effect.Effect<void>
}>()("feedback/JobRepository") {}
