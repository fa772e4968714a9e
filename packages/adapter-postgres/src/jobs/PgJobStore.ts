/**
 * Import and export jobs over PostgreSQL (schema: `migrations/0086_jobs.ts`, `0142_job_turns.ts`). `claim` takes the
 * runnable job of the organization served longest ago, with `FOR UPDATE SKIP LOCKED` in its own transaction (or the
 * caller's), so two processes never take the same job; an idle worker's look is one read, the transaction opening
 * only once a job is runnable. `lock` holds a job row for the caller's unit of work, which is how a batch checks that
 * its worker still owns the job in the same transaction that commits the batch.
 */
import { Jobs, type Kernel } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../kernel/SqlErrors.ts"

const parse = (record: string): Jobs.JobRecord => JSON.parse(record) as Jobs.JobRecord

export const PgJobRepository = Layer.effect(
  Jobs.JobRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const save = (job: Jobs.JobRecord) =>
      sql`UPDATE jobs SET status = ${job.status}, receiving = ${job.receiving}, lease_owner = ${job.leaseOwner},
        lease_expires_at = ${job.leaseExpiresAt}, expires_at = ${job.expiresAt}, record = ${JSON.stringify(job)}
        WHERE organization_id = ${job.organizationId} AND id = ${job.id}`.pipe(Effect.asVoid, orDie)

    const readOne = (rows: ReadonlyArray<{ readonly record: string }>) =>
      Option.map(Option.fromUndefinedOr(rows[0]), (r) => parse(r.record))

    /** The claim proper: the runnable job to take in turn, locked, its organization's turn and the job saved. */
    const claimRunnable = (owner: string, at: Kernel.Timestamp.Timestamp, leaseUntil: Kernel.Timestamp.Timestamp) =>
      sql.withTransaction(Effect.gen(function*() {
        // Organizations in turn: the runnable job of the organization whose last claim is oldest (or that never had
        // one), then the oldest job (docs/FAIRNESS.md).
        const rows = yield* sql<{ record: string }>`SELECT j.record FROM jobs j
          LEFT JOIN job_turns t ON t.organization_id = j.organization_id
          WHERE j.status IN ('queued', 'running') AND NOT j.receiving
            AND (j.status = 'queued' OR j.lease_expires_at IS NULL OR j.lease_expires_at <= ${at})
          ORDER BY t.last_claim ASC NULLS FIRST, j.created_at, j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED`
        const found = readOne(rows)
        if (Option.isNone(found)) return found
        const job = found.value
        yield* sql`INSERT INTO job_turns (organization_id, last_claim) VALUES (${job.organizationId}, nextval('job_turn_seq'))
          ON CONFLICT (organization_id) DO UPDATE SET last_claim = excluded.last_claim`
        const claimed = Jobs.claimedJob(job, owner, at, leaseUntil)
        yield* save(claimed)
        return Option.some(claimed)
      }))

    return Jobs.JobRepository.of({
      insert: (job) =>
        sql`INSERT INTO jobs (organization_id, id, action, status, receiving, lease_owner, lease_expires_at, created_at, expires_at, record)
          VALUES (${job.organizationId}, ${job.id}, ${job.action}, ${job.status}, ${job.receiving}, ${job.leaseOwner},
            ${job.leaseExpiresAt}, ${job.createdAt}, ${job.expiresAt}, ${JSON.stringify(job)})`.pipe(
          Effect.asVoid,
          orDie
        ),
      save,
      find: (organizationId, id, action) =>
        sql<{ record: string }>`SELECT record FROM jobs
          WHERE organization_id = ${organizationId} AND id = ${id} AND action = ${action} AND NOT receiving`.pipe(
          Effect.map(readOne),
          orDie
        ),
      lock: (organizationId, id) =>
        sql<
          { record: string }
        >`SELECT record FROM jobs WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`.pipe(
          Effect.map(readOne),
          orDie
        ),
      remove: (organizationId, id) =>
        sql`DELETE FROM jobs WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(Effect.asVoid, orDie),
      // An idle worker's look is one statement: the transaction that claims opens only once a job is runnable.
      claim: (owner, at, leaseUntil) =>
        sql<{ runnable: boolean }>`SELECT EXISTS (SELECT 1 FROM jobs j
            WHERE j.status IN ('queued', 'running') AND NOT j.receiving
              AND (j.status = 'queued' OR j.lease_expires_at IS NULL OR j.lease_expires_at <= ${at})) AS runnable`.pipe(
          Effect.flatMap(([probe]) =>
            probe?.runnable === true ? claimRunnable(owner, at, leaseUntil) : Effect.succeedNone
          ),
          orDie
        ),
      renewLease: (organizationId, id, owner, leaseUntil) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ record: string }>`SELECT record FROM jobs
            WHERE organization_id = ${organizationId} AND id = ${id} AND lease_owner = ${owner} AND status = 'running' FOR UPDATE`
          const found = readOne(rows)
          if (Option.isNone(found)) return false
          yield* save({ ...found.value, leaseExpiresAt: leaseUntil })
          return true
        })).pipe(orDie),
      // Two array parameters rather than four per row: the statement is the same whatever the batch's size, and
      // Node binds two arrays for less than a value per cell (docs/DECISIONS.md §39).
      appendRows: (organizationId, id, staged) =>
        staged.length === 0 ? Effect.void : sql.unsafe(
          `INSERT INTO job_rows (organization_id, job_id, row_number, data)
         SELECT $1, $2, s.row_number, s.data FROM unnest($3::integer[], $4::text[]) AS s (row_number, data)`,
          [organizationId, id, staged.map((r: Jobs.StagedRow) => r.row), staged.map((r: Jobs.StagedRow) => r.data)]
        ).pipe(Effect.asVoid, orDie),
      readRows: (organizationId, id, afterRow, limit) =>
        sql<{ rowNumber: number; data: string }>`SELECT row_number, data FROM job_rows
          WHERE organization_id = ${organizationId} AND job_id = ${id} AND row_number > ${afterRow}
          ORDER BY row_number LIMIT ${limit}`.pipe(
          Effect.map((rows) => rows.map((r): Jobs.StagedRow => ({ row: Number(r.rowNumber), data: r.data }))),
          orDie
        ),
      deleteRows: (organizationId, id) =>
        sql`DELETE FROM job_rows WHERE organization_id = ${organizationId} AND job_id = ${id}`.pipe(
          Effect.asVoid,
          orDie
        ),
      appendChunk: (organizationId, id, chunk) =>
        sql`INSERT INTO export_chunks (organization_id, job_id, seq, data) VALUES (${organizationId}, ${id}, ${chunk.seq}, ${chunk.data})
          ON CONFLICT DO NOTHING`.pipe(Effect.asVoid, orDie),
      readChunks: (organizationId, id, fromSeq, limit) =>
        sql<{ seq: number; data: string }>`SELECT seq, data FROM export_chunks
          WHERE organization_id = ${organizationId} AND job_id = ${id} AND seq >= ${fromSeq}
          ORDER BY seq LIMIT ${limit}`.pipe(
          Effect.map((rows) => rows.map((r): Jobs.FileChunk => ({ seq: Number(r.seq), data: r.data }))),
          orDie
        ),
      deleteChunks: (organizationId, id) =>
        sql`DELETE FROM export_chunks WHERE organization_id = ${organizationId} AND job_id = ${id}`.pipe(
          Effect.asVoid,
          orDie
        ),
      lockHeldExports: (organizationId, at) =>
        sql<{ record: string }>`SELECT record FROM jobs
          WHERE organization_id = ${organizationId} AND action = 'export' AND NOT receiving
            AND (status = 'running' OR (status = 'succeeded' AND expires_at > ${at}))
          ORDER BY id FOR UPDATE`.pipe(Effect.map((rows) => rows.map((r) => parse(r.record))), orDie),
      purge: (at, abandonedBefore) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM jobs WHERE receiving AND created_at < ${abandonedBefore}`
          yield* sql`DELETE FROM export_chunks c USING jobs j
            WHERE j.organization_id = c.organization_id AND j.id = c.job_id AND j.expires_at <= ${at}`
        }).pipe(orDie)
    })
  })
)
