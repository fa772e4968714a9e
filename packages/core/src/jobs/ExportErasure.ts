/**
 * Erasure reaches export files (docs/DECISIONS.md §54): when a customer's request deletes their review, no export
 * file still held for download may keep their words. A file's rows cannot be told apart without reading it back, so
 * every file the organization holds is withdrawn in the deletion's unit of work: a finished export's file is deleted
 * and the job expires at that instant (its download is a 404 saying to run the export again); a running export's
 * pages are deleted and the job is queued again, so a worker writes its file anew, without the deleted review.
 */
import { Effect } from "effect"
import type { OrganizationId } from "../kernel/Ids.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"
import type { JobRecord } from "./Job.ts"
import type { JobRepository } from "./JobRepository.ts"

/** What becomes of an export holding a file when an erasure withdraws it. */
export const withdrawnExport = (job: JobRecord, at: Timestamp): JobRecord =>
  job.status === "running"
    ? {
      ...job,
      status: "queued",
      leaseOwner: null,
      leaseExpiresAt: null,
      position: null,
      progress: { ...job.progress, processedRows: 0, totalRows: 0 }
    }
    : { ...job, expiresAt: at }

export const withdrawHeldExports = (repo: JobRepository["Service"], organizationId: OrganizationId, at: Timestamp) =>
  Effect.flatMap(
    repo.lockHeldExports(organizationId, at),
    (held) =>
      Effect.forEach(
        held,
        (job) => Effect.andThen(repo.deleteChunks(organizationId, job.id), repo.save(withdrawnExport(job, at))),
        {
          discard: true
        }
      )
  )
