/**
 * Import and export jobs in memory: job records, each import's staged rows and each export's file chunks, keyed by
 * organization and job. The memory database's single write lock makes `claim` atomic.
 */
import { Jobs, Kernel } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"

/** Staged rows deleted per step when a job is done with them. */
const ROWS_PER_DELETE = 5_000

const keyOf = (organizationId: Kernel.OrganizationId, id: Kernel.ImportJobId) => `${organizationId}/${id}`

export const MemoryJobRepository = Layer.effect(
  Jobs.JobRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const jobs = db.table<string, Jobs.JobRecord>("jobs")
    // One entry per staged row (key `org/job#row`), so appending and reading a batch cost the batch, not the file.
    const rows = db.table<string, Jobs.StagedRow>("job_rows")
    const rowKey = (organizationId: Kernel.OrganizationId, id: Kernel.ImportJobId, row: number) =>
      `${keyOf(organizationId, id)}#${row}`
    const deleteRowsOf = (organizationId: Kernel.OrganizationId, id: Kernel.ImportJobId) => {
      for (let row = 1; rows.delete(rowKey(organizationId, id, row)); row++) {
        // rows are numbered 1.. without gaps
      }
    }
    /** Deletes rows `from` .. `from + n - 1`; answers whether rows may follow (all of these were there). */
    const deleteRowRun = (organizationId: Kernel.OrganizationId, id: Kernel.ImportJobId, from: number, n: number) => {
      for (let row = from; row < from + n; row++) if (!rows.delete(rowKey(organizationId, id, row))) return false
      return true
    }
    const chunks = db.table<string, ReadonlyArray<Jobs.FileChunk>>("export_chunks")
    // The order of each organization's last claim (a counter, not the clock: claims in one millisecond still take turns).
    const lastClaimed = new Map<string, number>()
    let claimSeq = 0

    const read = (organizationId: Kernel.OrganizationId, id: Kernel.ImportJobId) =>
      Option.fromUndefinedOr(jobs.get(keyOf(organizationId, id)))
    const save = (job: Jobs.JobRecord) => db.mutate(() => jobs.set(keyOf(job.organizationId, job.id), job))

    return Jobs.JobRepository.of({
      insert: save,
      save,
      find: (organizationId, id, action) =>
        Effect.sync(() => Option.filter(read(organizationId, id), (job) => !job.receiving && job.action === action)),
      lock: (organizationId, id) => db.transaction(Effect.sync(() => read(organizationId, id))),
      remove: (organizationId, id) =>
        db.mutate(() => {
          const key = keyOf(organizationId, id)
          jobs.delete(key)
          deleteRowsOf(organizationId, id)
          chunks.delete(key)
        }),
      claim: (owner, at, leaseUntil) =>
        db.mutate(() => {
          // Organizations in turn: the oldest runnable job of the organization whose last claim is oldest (or that
          // never had one), as PostgreSQL's `job_turns` orders them (docs/FAIRNESS.md).
          let chosen: Jobs.JobRecord | undefined
          let chosenTurn = Infinity
          for (const job of jobs.values()) {
            if (job.receiving) continue
            const runnable = job.status === "queued" ||
              (job.status === "running" &&
                (job.leaseExpiresAt === null ||
                  Kernel.Timestamp.toMillis(job.leaseExpiresAt) <= Kernel.Timestamp.toMillis(at)))
            if (!runnable) continue
            const turn = lastClaimed.get(job.organizationId) ?? -Infinity
            if (chosen === undefined || turn < chosenTurn) {
              chosen = job
              chosenTurn = turn
            }
          }
          if (chosen === undefined) return Option.none()
          const job = chosen
          const claimed = Jobs.claimedJob(job, owner, at, leaseUntil)
          jobs.set(keyOf(job.organizationId, job.id), claimed)
          lastClaimed.set(job.organizationId, Math.max(lastClaimed.get(job.organizationId) ?? -Infinity, claimSeq++))
          return Option.some(claimed)
        }),
      renewLease: (organizationId, id, owner, leaseUntil) =>
        db.mutate(() => {
          const job = jobs.get(keyOf(organizationId, id))
          if (job === undefined || job.leaseOwner !== owner || job.status !== "running") return false
          jobs.set(keyOf(organizationId, id), { ...job, leaseExpiresAt: leaseUntil })
          return true
        }),
      appendRows: (organizationId, id, staged) =>
        db.mutate(() => {
          for (const row of staged) rows.set(rowKey(organizationId, id, row.row), row)
        }),
      readRows: (organizationId, id, afterRow, limit) =>
        Effect.sync(() => {
          const found: Array<Jobs.StagedRow> = []
          for (let row = afterRow + 1; found.length < limit; row++) {
            const staged = rows.get(rowKey(organizationId, id, row))
            if (staged === undefined) break
            found.push(staged)
          }
          return found
        }),
      // One transaction, a run of rows at a time: a whole file's rows in one step would hold the event loop
      // (docs/DECISIONS.md §74).
      deleteRows: (organizationId, id) =>
        db.transaction(Effect.gen(function*() {
          for (let from = 1; deleteRowRun(organizationId, id, from, ROWS_PER_DELETE); from += ROWS_PER_DELETE) {
            yield* Effect.yieldNow
          }
        })),
      appendChunk: (organizationId, id, chunk) =>
        db.mutate(() => {
          const key = keyOf(organizationId, id)
          const existing = chunks.get(key) ?? []
          if (!existing.some((c) => c.seq === chunk.seq)) chunks.set(key, [...existing, chunk])
        }),
      readChunks: (organizationId, id, fromSeq, limit) =>
        Effect.sync(() =>
          (chunks.get(keyOf(organizationId, id)) ?? []).filter((c) => c.seq >= fromSeq).slice(0, limit)
        ),
      deleteChunks: (organizationId, id) => db.mutate(() => void chunks.delete(keyOf(organizationId, id))),
      lockHeldExports: (organizationId, at) =>
        db.transaction(
          Effect.sync(() =>
            [...jobs.values()].filter((job) =>
              job.organizationId === organizationId && job.action === "export" && !job.receiving &&
              (job.status === "running" ||
                (job.status === "succeeded" && job.expiresAt !== null &&
                  Kernel.Timestamp.toMillis(job.expiresAt) > Kernel.Timestamp.toMillis(at)))
            )
          )
        ),
      purge: (at, abandonedBefore) =>
        db.mutate(() => {
          for (const [key, job] of [...jobs.rows]) {
            if (
              job.receiving && Kernel.Timestamp.toMillis(job.createdAt) < Kernel.Timestamp.toMillis(abandonedBefore)
            ) {
              jobs.delete(key)
              deleteRowsOf(job.organizationId, job.id)
            } else if (
              job.expiresAt !== null && Kernel.Timestamp.toMillis(job.expiresAt) <= Kernel.Timestamp.toMillis(at)
            ) {
              chunks.delete(key)
            }
          }
        })
    })
  })
)
