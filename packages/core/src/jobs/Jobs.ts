/**
 * Import and export jobs (docs/DECISIONS.md §20; shared DECISIONS §15): the use-cases behind `POST /import-jobs`,
 * `POST /export-jobs`, reading a job and downloading an export, and `runNext`, the step a background worker repeats.
 *
 * An import stores the file's rows as received (staged, one per row), then a worker imports them in batches with the
 * synchronous imports' own use-cases (`ReviewWrites.importBatch`, `Catalogs.importProducts|importCustomers`), so
 * every rule (strict, externalId, customers created, replies, files, events) is the same. Crash safety: a
 * non-strict job commits each batch's import together with the job's progress (`position` = the last row done), so
 * after a crash the job resumes after the last committed batch and no row is imported twice. A strict job runs all
 * of its batches in one unit of work: it commits everything or nothing, and a crash restarts it from the start.
 *
 * Several processes: `claim` hands a job to one worker for a lease that a heartbeat renews; a worker that lost its
 * lease (it stalled past it and another took over) finds out when it next locks the job, and stops.
 */
import { Cause, Context, Effect, Fiber, Layer, Option, Result, Schedule, Stream } from "effect"
import { checkOptOut, Catalogs } from "../catalog/Catalogs.ts"
import type { CustomerCreate, ProductCreate } from "../catalog/CatalogRequests.ts"
import {
  type Caller,
  CurrentCaller,
  DashboardCaller,
  hasPermission,
  requirePermission,
  SecretKeyCaller
} from "../kernel/Caller.ts"
import { Conflict, Forbidden, ImportFailed, InvalidRequest, NotFound, PayloadTooLarge } from "../kernel/Errors.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { ImportJobId } from "../kernel/Ids.ts"
import { parseListMatch } from "../kernel/ListQuery.ts"
import { fromMillis, now, type Timestamp, toMillis } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import type { ReviewImportRow } from "../reviews/ReviewRequests.ts"
import { Reviews } from "../reviews/Reviews.ts"
import { ReviewWriteRepository } from "../reviews/ReviewWriteRepository.ts"
import { ReviewWrites } from "../reviews/ReviewWrites.ts"
import {
  emptyProgress,
  type Job,
  type JobActor,
  type JobError,
  type JobFormat,
  type JobRecord,
  type JobSkippedRow,
  type JobType,
  jobPermission,
  jobView,
  MAX_JOB_BYTES,
  MAX_JOB_ROWS
} from "./Job.ts"
import { JobRepository, type StagedRow } from "./JobRepository.ts"
import {
  advanceProgress,
  decodeStagedRow,
  exportHeader,
  REVIEW_EXPORT_INCLUDES,
  reviewExportLine,
  stageableText
} from "./JobRules.ts"
import { reviewListEndpoint } from "../reviews/ReviewLists.ts"

export interface JobSettingsValues {
  /** How long a claim holds without a heartbeat; a crashed worker's job is taken over after this. */
  readonly leaseMs: number
  /** Rows per batch (one unit of work each for a non-strict import). */
  readonly batchSize: number
  /** How long an export's file is kept after the job succeeds (`EXPORT_RETENTION_HOURS`). */
  readonly exportRetentionMs: number
  /** Rows a job may read or write (the spec's 100,000; lower only in tests). */
  readonly maxRows?: number | undefined
}

/**
 * Rows per batch of an import job unless configured (`JOB_BATCH_SIZE`). Part of a batch's work does not grow with
 * its rows (the job's lock and progress, a lookup and a stats update of every product and customer it names, a dozen
 * round trips), so fewer, larger batches pay it less often; a resume still redoes little (docs/DECISIONS.md §46).
 */
export const DEFAULT_JOB_BATCH_SIZE = 2_000

/**
 * Batches a non-strict import runs per turn: then it hands its lease back and the next claim, organizations in
 * turn, decides who goes on (docs/FAIRNESS.md). A strict job is one transaction and runs to its end.
 */
export const JOB_TURN_BATCHES = 5

export const JobSettings = Context.Reference<JobSettingsValues>("feedback/JobSettings", {
  defaultValue: () => ({ leaseMs: 30_000, batchSize: DEFAULT_JOB_BATCH_SIZE, exportRetentionMs: 7 * 24 * 3_600_000 })
})

export interface ImportJobOptions {
  readonly type: JobType
  readonly strict: boolean
  readonly format: JobFormat
}

export interface ExportJobRequest {
  readonly type: "reviews"
  readonly format: JobFormat
  /** A filter document (JSON text), as `GET /reviews` takes it. */
  readonly filter?: string | undefined
  readonly search?: string | undefined
}

export interface ExportDownload {
  readonly format: JobFormat
  readonly content: Stream.Stream<string>
}

/** A batch of an import job's staged rows, decoded (`Jobs.decodeStaged`). */
interface DecodedBatch {
  readonly valid: ReadonlyArray<unknown>
  readonly rowNumbers: ReadonlyArray<number>
  readonly skipped: ReadonlyArray<JobSkippedRow>
}

export class Jobs extends Context.Service<Jobs, {
  /**
   * `POST /import-jobs`: stores the rows (each a JSON object's text) as they arrive, then queues the job. More than
   * 100,000 rows is `PayloadTooLarge` and leaves nothing behind; so does any failure of `rows`.
   */
  readonly createImport: <E>(
    options: ImportJobOptions,
    rows: Stream.Stream<string, E>
  ) => Effect.Effect<Job, Forbidden | PayloadTooLarge | E, CurrentCaller>
  readonly getImport: (id: ImportJobId) => Effect.Effect<Job, Forbidden | NotFound, CurrentCaller>
  /** `POST /export-jobs`: checks the filter and search as `GET /reviews` does, then queues the job. */
  readonly createExport: (request: ExportJobRequest) => Effect.Effect<Job, Forbidden | InvalidRequest, CurrentCaller>
  readonly getExport: (id: ImportJobId) => Effect.Effect<Job, Forbidden | NotFound, CurrentCaller>
  /** The file of a succeeded export job, read from the store chunk by chunk. */
  readonly download: (id: ImportJobId) => Effect.Effect<ExportDownload, Forbidden | NotFound | Conflict, CurrentCaller>
  /** Claims one runnable job for `owner` and runs it to its end; answers whether there was one. */
  readonly runNext: (owner: string) => Effect.Effect<boolean>
  /** Deletes expired export files and abandoned uploads. */
  readonly purge: Effect.Effect<void>
}>()("feedback/Jobs") {
  static readonly layer = Layer.effect(
    Jobs,
    Effect.gen(function*() {
      const repo = yield* JobRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const reviewWrites = yield* ReviewWrites
      const reviewStore = yield* ReviewWriteRepository
      const reviews = yield* Reviews
      const catalogs = yield* Catalogs
      const settings = yield* JobSettings
      const maxRows = settings.maxRows ?? MAX_JOB_ROWS

      const newJob = (
        caller: Caller,
        id: ImportJobId,
        at: Timestamp,
        fields: Pick<JobRecord, "type" | "action" | "format" | "strict" | "filter" | "search" | "receiving">
      ): JobRecord => ({
        id,
        organizationId: caller.organizationId,
        status: "queued",
        createdAt: at,
        startedAt: null,
        finishedAt: null,
        progress: emptyProgress,
        skipped: [],
        error: null,
        expiresAt: null,
        actor: actorOf(caller),
        leaseOwner: null,
        leaseExpiresAt: null,
        position: null,
        ...fields
      })

      const createImport = <E>(options: ImportJobOptions, rows: Stream.Stream<string, E>) =>
        Effect.gen(function*() {
          const caller = yield* requirePermission(jobPermission(options.type, "write"))
          const job = newJob(caller, yield* nextIdFrom<ImportJobId>(ids), yield* now, {
            type: options.type,
            action: "import",
            format: options.format,
            strict: options.strict,
            filter: null,
            search: null,
            receiving: true
          })
          yield* repo.insert(job)
          let total = 0
          const staged = rows.pipe(
            Stream.grouped(STAGING_BATCH),
            // The next group is parsed from the upload while this one is written.
            Stream.buffer({ capacity: 1 }),
            Stream.runForEach((group) => {
              if (total + group.length > maxRows) return Effect.fail(rowsTooMany(maxRows))
              const batch: Array<StagedRow> = group.map((data, i) => ({
                row: total + i + 1,
                data: stageableText(data)
              }))
              total += group.length
              return repo.appendRows(job.organizationId, job.id, batch)
            })
          )
          // Rows are written as they arrive, outside any unit of work (an upload may be slow); a job still receiving
          // is invisible and never runs, and one whose upload failed is removed here (or purged if the process died).
          yield* staged.pipe(
            Effect.onExit((exit) => exit._tag === "Failure" ? repo.remove(job.organizationId, job.id) : Effect.void)
          )
          const queued: JobRecord = { ...job, receiving: false, progress: { ...emptyProgress, totalRows: total } }
          yield* repo.save(queued)
          return jobView(queued)
        })

      const readable = (action: "import" | "export") =>
        Effect.fn(`Jobs.get${action === "import" ? "Import" : "Export"}`)(function*(id: ImportJobId) {
          const caller = yield* CurrentCaller
          const found = yield* repo.find(caller.organizationId, id, action)
          if (Option.isNone(found)) return yield* NotFound.of(`${action} job`, id)
          const job = found.value
          // Whoever may create the job may read it; so may whoever may read what it imports or exports.
          if (
            !hasPermission(caller, jobPermission(job.type, "read")) &&
            !hasPermission(caller, jobPermission(job.type, "write"))
          ) {
            return yield* Forbidden.missing(jobPermission(job.type, "read"))
          }
          return job
        })
      const findImport = readable("import")
      const findExport = readable("export")

      const createExport = Effect.fn("Jobs.createExport")(function*(request: ExportJobRequest) {
        const caller = yield* requirePermission("reviews:read")
        yield* Effect.fromResult(parseListMatch(request, reviewListEndpoint))
        const job = newJob(caller, yield* nextIdFrom<ImportJobId>(ids), yield* now, {
          type: request.type,
          action: "export",
          format: request.format,
          strict: false,
          filter: request.filter ?? null,
          search: request.search ?? null,
          receiving: false
        })
        yield* repo.insert(job)
        return jobView(job)
      })

      const download = Effect.fn("Jobs.download")(function*(id: ImportJobId) {
        const job = yield* findExport(id)
        if (job.status !== "succeeded") {
          return yield* new Conflict({
            message: `Export job ${id} is ${job.status}; download its file once it has succeeded.`
          })
        }
        if (job.expiresAt !== null && toMillis(job.expiresAt) <= toMillis(yield* now)) {
          return yield* new NotFound({
            message:
              `The file of export job ${id} is no longer kept (since ${job.expiresAt}: it expired, or a customer's erasure withdrew it); run the export again.`,
            resource: "export file"
          })
        }
        const content = Stream.paginate(
          0,
          (fromSeq: number) =>
            Effect.map(repo.readChunks(job.organizationId, job.id, fromSeq, 16), (chunks) => {
              const last = chunks.at(-1)
              return [
                chunks.map((c) => c.data),
                chunks.length < 16 || last === undefined ? Option.none() : Option.some(last.seq + 1)
              ] as const
            })
        )
        return { format: job.format, content }
      })

      // ---------------------------------------------------------------------------------------------------------------
      // Running

      /** The job as this worker may still write it, or nothing when another worker has taken it over. */
      const ownLocked = (job: JobRecord, owner: string) =>
        Effect.map(
          repo.lock(job.organizationId, job.id),
          Option.filter((current) => current.leaseOwner === owner && current.status === "running")
        )

      const leaseUntil = Effect.map(now, (at) => fromMillis(toMillis(at) + settings.leaseMs))

      /**
       * One batch of staged rows, decoded: the rows to import with their numbers in the file, and the rows skipped
       * (`index` being the 0-based data row). A strict job's first bad row fails it. Pure, so it runs ahead of the write.
       */
      const decodeStaged = (
        job: JobRecord,
        staged: ReadonlyArray<StagedRow>
      ): Result.Result<DecodedBatch, ImportFailed> => {
        const skipped: Array<JobSkippedRow> = []
        const valid: Array<unknown> = []
        const rowNumbers: Array<number> = []
        for (const { row, data } of staged) {
          const decoded = decodeStagedRow(job.type, data)
          let problem = decoded._tag === "Invalid" ? decoded.message : undefined
          if (decoded._tag === "Row" && job.type === "customers") {
            const optOut = checkOptOut(decoded.value as CustomerCreate, "row")
            if (optOut._tag === "Failure") problem = optOut.failure.message
          }
          if (problem === undefined) {
            valid.push((decoded as { readonly value: unknown }).value)
            rowNumbers.push(row)
            continue
          }
          if (job.strict) return Result.fail(new ImportFailed({ index: row - 1, message: rowFailure(row, problem) }))
          skipped.push({ index: row - 1, message: problem })
        }
        return Result.succeed({ valid, rowNumbers, skipped })
      }

      /** Imports a decoded batch; answers what it imported and skipped. */
      const importDecoded = (job: JobRecord, batch: DecodedBatch) =>
        Effect.gen(function*() {
          const { rowNumbers, valid } = batch
          const skipped = [...batch.skipped]
          const fileIndex = (index: number) => (rowNumbers[index] ?? index + 1) - 1
          const remap = (e: ImportFailed) => {
            const index = fileIndex(e.index)
            return new ImportFailed({ index, message: rowFailure(index + 1, innerProblem(e.message)) })
          }
          if (valid.length === 0) return { imported: 0, skipped }
          const result = yield* (job.type === "reviews"
            ? reviewWrites.importBatch(valid as ReadonlyArray<ReviewImportRow>, {
              strict: job.strict,
              job: { id: job.id, type: "reviews", action: "import", createdAt: job.createdAt },
              rowNumbers
            })
            : job.type === "products"
            ? catalogs.importProducts({ data: valid as ReadonlyArray<ProductCreate>, strict: job.strict })
            : catalogs.importCustomers({ data: valid as ReadonlyArray<CustomerCreate>, strict: job.strict })).pipe(
              Effect.mapError((e) => e._tag === "ImportFailed" ? remap(e) : e)
            )
          for (const s of result.skipped) skipped.push({ index: fileIndex(s.index), message: s.message })
          skipped.sort((a, b) => a.index - b.index)
          return { imported: result.imported.length, skipped }
        })

      const finished = (
        job: JobRecord,
        at: Timestamp,
        outcome: { readonly error: JobError | null; readonly expiresAt?: Timestamp }
      ): JobRecord => ({
        ...job,
        status: outcome.error === null ? "succeeded" : "failed",
        finishedAt: at,
        error: outcome.error,
        expiresAt: outcome.expiresAt ?? null,
        leaseOwner: null,
        leaseExpiresAt: null
      })

      /** Ends the job (when this worker still holds it) and removes its staged rows. */
      const end = (job: JobRecord, owner: string, change: (current: JobRecord, at: Timestamp) => JobRecord) =>
        uow.transaction(Effect.gen(function*() {
          const current = yield* ownLocked(job, owner)
          if (Option.isNone(current)) return
          yield* repo.save(change(current.value, yield* now))
          yield* repo.deleteRows(job.organizationId, job.id)
        }))

      /**
       * A batch decoded a step at a time, yielding between steps: it is decoded while the previous batch is written,
       * and decoding a whole batch in one turn of the event loop would hold up that write's next statement instead
       * (docs/DECISIONS.md §46).
       */
      const decodeBatch = (job: JobRecord, staged: ReadonlyArray<StagedRow>) =>
        Effect.gen(function*() {
          const valid: Array<unknown> = []
          const rowNumbers: Array<number> = []
          const skipped: Array<JobSkippedRow> = []
          for (let from = 0; from < staged.length; from += DECODE_STEP) {
            if (from > 0) yield* Effect.yieldNow
            const step = decodeStaged(job, staged.slice(from, from + DECODE_STEP))
            if (Result.isFailure(step)) return step
            valid.push(...step.success.valid)
            rowNumbers.push(...step.success.rowNumbers)
            skipped.push(...step.success.skipped)
          }
          return Result.succeed<DecodedBatch>({ valid, rowNumbers, skipped })
        })

      /** The staged rows after `afterRow`, one batch of them, decoded; nothing when none are left. */
      const readBatch = (job: JobRecord, afterRow: number) =>
        Effect.flatMap(
          repo.readRows(job.organizationId, job.id, afterRow, settings.batchSize),
          (staged) =>
            staged.length === 0
              ? Effect.succeed(undefined)
              : Effect.map(decodeBatch(job, staged), (decoded) => ({ staged, decoded }))
        )

      const runImportBatches = (job: JobRecord, owner: string) =>
        Effect.gen(function*() {
          let current = job
          let batch = yield* readBatch(job, Number(job.position ?? "0"))
          let batches = 0
          while (batch !== undefined) {
            if (!job.strict && batches++ >= JOB_TURN_BATCHES) {
              // Its turn is over: the lease goes back (claimable at once) and the job resumes from its position.
              yield* repo.renewLease(job.organizationId, job.id, owner, yield* now)
              return Option.none<JobRecord>()
            }
            const { decoded, staged } = batch
            const lastRow = staged.at(-1)!.row
            // A non-strict job commits batch by batch: the next batch is read and decoded while this one is written.
            // A strict job's batches share one unit of work, whose connection is not for a read alongside.
            const ahead = job.strict ? undefined : yield* Effect.forkChild(readBatch(job, lastRow))
            const next = yield* uow.transaction(Effect.gen(function*() {
              const locked = yield* ownLocked(job, owner)
              if (Option.isNone(locked)) {
                return Option.none<JobRecord>()
              }
              const outcome = yield* importDecoded(locked.value, yield* Effect.fromResult(decoded))
              const advanced = advanceProgress(locked.value.progress, locked.value.skipped, {
                processed: staged.length,
                imported: outcome.imported,
                skipped: outcome.skipped
              })
              const saved: JobRecord = { ...locked.value, ...advanced, position: String(lastRow) }
              // A strict job saves its progress inside its one unit of work: visible when it commits.
              yield* repo.save(saved)
              return Option.some(saved)
            }))
            if (Option.isNone(next)) {
              if (ahead !== undefined) yield* Fiber.interrupt(ahead)
              return next
            }
            current = next.value
            batch = ahead === undefined ? yield* readBatch(job, lastRow) : yield* Fiber.join(ahead)
          }
          return Option.some(current)
        })

      const runImport = (job: JobRecord, owner: string) =>
        Effect.gen(function*() {
          // A strict job is one unit of work of its organization: on a store whose transactions exclude one another,
          // other organizations' writes still run between its batches (docs/FAIRNESS.md).
          const run = job.strict
            ? uow.organizationTransaction(job.organizationId, runImportBatches(job, owner))
            : runImportBatches(job, owner)
          const outcome = yield* run.pipe(
            Effect.map((done) => ({ done, error: null as JobError | null })),
            Effect.catch((e: ImportFailed | Forbidden | InvalidRequest) =>
              Effect.succeed({
                done: Option.some(job),
                error: { code: errorCodeOf(e), message: e.message } as JobError | null
              })
            )
          )
          if (Option.isNone(outcome.done)) return
          const error = outcome.error
          yield* end(job, owner, (current, at) =>
            finished(
              error === null || !job.strict
                ? current
                : {
                  ...current,
                  progress: { ...current.progress, processedRows: 0, importedRows: 0, skippedRows: 0 },
                  skipped: []
                },
              at,
              { error }
            ))
          const imported = error !== null && job.strict ? 0 : outcome.done.value.progress.importedRows
          if (job.type === "reviews" && imported > 0) yield* reviewStore.bulkLoaded(job.organizationId, imported)
        })

      const exportPage = (job: JobRecord, cursor: string | null) =>
        reviews.list({
          limit: 250,
          cursor: cursor ?? undefined,
          filter: job.filter ?? undefined,
          search: job.search ?? undefined,
          include: REVIEW_EXPORT_INCLUDES
        })

      /**
       * The export's pages from where the job stands, each with its text for the file, in order. Reading, encoding and
       * committing overlap: the next page is read while this one is encoded, and encoded while this one commits (each
       * `buffer` runs what is above it in a fiber of its own), so the worker waits on neither the reads nor the
       * commits. Pages were always separate statements: reading ahead changes nothing a reader sees.
       */
      const exportPages = (job: JobRecord) => {
        let first = job.position === null
        return Stream.paginate(
          job.position,
          (cursor: string | null) =>
            Effect.map(exportPage(job, cursor), (page) => [[page], Option.fromNullOr(page.nextCursor)] as const)
        ).pipe(
          Stream.buffer({ capacity: 1 }),
          Stream.map((page) => {
            const text = (first ? exportHeader(job.format) : "") +
              page.data.map((r) => reviewExportLine(job.format, r)).join("")
            first = false
            return { page, text }
          }),
          Stream.buffer({ capacity: 1 })
        )
      }

      const runExport = (job: JobRecord, owner: string) => {
        let written = job.progress.processedRows
        return Stream.runForEachWhile(exportPages(job), ({ page, text }) =>
          Effect.gen(function*() {
            if (written + page.data.length > maxRows) {
              yield* end(job, owner, (c, at) => finished(c, at, { error: tooManyToExport(maxRows) }))
              yield* repo.deleteChunks(job.organizationId, job.id)
              return false
            }
            // The chunk, the position and (on the last page) the job's end commit together, so a resumed export
            // never writes a page twice.
            const goOn = yield* uow.transaction(Effect.gen(function*() {
              const locked = yield* ownLocked(job, owner)
              if (Option.isNone(locked)) return false
              if (text !== "") yield* repo.appendChunk(job.organizationId, job.id, { seq: written, data: text })
              const processedRows = written + page.data.length
              if (page.nextCursor === null) {
                const at = yield* now
                const expiresAt = fromMillis(toMillis(at) + settings.exportRetentionMs)
                yield* repo.save(
                  finished(
                    {
                      ...locked.value,
                      progress: { ...locked.value.progress, processedRows, totalRows: processedRows }
                    },
                    at,
                    { error: null, expiresAt }
                  )
                )
                return false
              }
              yield* repo.save({
                ...locked.value,
                position: page.nextCursor,
                progress: { ...locked.value.progress, processedRows }
              })
              return true
            }))
            written += page.data.length
            return goOn
          })).pipe(
            Effect.catch((e: InvalidRequest | Forbidden) =>
              end(job, owner, (c, at) => finished(c, at, { error: { code: errorCodeOf(e), message: e.message } }))
            )
          )
      }

      const runNext = Effect.fn("Jobs.runNext")(function*(owner: string) {
        const claimed = yield* repo.claim(owner, yield* now, yield* leaseUntil)
        if (Option.isNone(claimed)) return false
        const job = claimed.value
        const heartbeat = yield* Effect.gen(function*() {
          yield* Effect.sleep(Math.max(10, Math.floor(settings.leaseMs / 3)))
          yield* repo.renewLease(job.organizationId, job.id, owner, yield* leaseUntil)
        }).pipe(Effect.repeat(Schedule.forever), Effect.forkDetach)
        const work = job.action === "import" ? runImport(job, owner) : runExport(job, owner)
        yield* work.pipe(
          Effect.provideService(CurrentCaller, callerOf(job)),
          Effect.catchCause((cause) =>
            // Left running: its lease runs out and a worker takes it up again from its last committed batch.
            Effect.logError(`jobs: job ${job.id} stopped unexpectedly`, Cause.pretty(cause))
          ),
          Effect.ensuring(Fiber.interrupt(heartbeat)),
          // Stopped on purpose (shutdown): the open batch rolls back; hand the lease back so the next worker resumes
          // at once instead of waiting for it to run out.
          Effect.onInterrupt(() => Effect.flatMap(now, (at) => repo.renewLease(job.organizationId, job.id, owner, at)))
        )
        return true
      })

      const purge = Effect.gen(function*() {
        const at = yield* now
        yield* repo.purge(at, fromMillis(toMillis(at) - 24 * 3_600_000))
      }).pipe(Effect.withSpan("Jobs.purge"))

      return Jobs.of({
        createImport,
        getImport: (id) => Effect.map(findImport(id), jobView),
        createExport: (request) => createExport(request),
        getExport: (id) => Effect.map(findExport(id), jobView),
        download: (id) => download(id),
        runNext: (owner) => runNext(owner),
        purge
      })
    })
  )
}

/** Staged rows decoded between two yields (`decodeBatch`). */
const DECODE_STEP = 25

/** Rows stored per write while an upload arrives (independent of the import's batch size). */
const STAGING_BATCH = 1_000

const rowsTooMany = (maxRows: number) =>
  new PayloadTooLarge({
    message: `An import job takes at most ${
      maxRows.toLocaleString("en-US")
    } rows; split the file into several jobs. Nothing was imported.`,
    limitBytes: MAX_JOB_BYTES
  })

const tooManyToExport = (maxRows: number): JobError => ({
  code: "EXPORT_TOO_LARGE",
  message: `The filter and search match more than ${
    maxRows.toLocaleString("en-US")
  } reviews, and an export writes at most that many; narrow them and export in parts.`
})

const rowFailure = (row: number, problem: string) =>
  `Row ${row} of the file cannot be imported: ${problem}; nothing was imported.`

/** The reason inside a synchronous import's strict failure message ("Row N cannot be imported: …; nothing…"). */
const innerProblem = (message: string) =>
  message.replace(/^Row \d+ cannot be imported: /, "").replace(/; nothing was imported\.$/, "")

const errorCodeOf = (e: { readonly _tag: string }): string =>
  e._tag === "ImportFailed" ? "IMPORT_FAILED" : e._tag === "Forbidden" ? "FORBIDDEN" : "INVALID_REQUEST"

const actorOf = (caller: Caller): JobActor =>
  caller._tag === "SecretKeyCaller"
    ? { kind: "key", keyId: caller.keyId, permissions: [...caller.permissions] }
    : { kind: "user", userId: caller.userId, name: caller.name }

/** The job acts as whoever created it, with the permissions it had then. */
const callerOf = (job: JobRecord): Caller =>
  job.actor.kind === "key"
    ? new SecretKeyCaller({
      organizationId: job.organizationId,
      keyId: job.actor.keyId,
      permissions: new Set(job.actor.permissions)
    })
    : new DashboardCaller({ organizationId: job.organizationId, userId: job.actor.userId, name: job.actor.name })
