/**
 * Import and export jobs (spec: "Imports of a CSV are queued with POST /import-jobs"; docs/DECISIONS.md §20): an
 * import file is streamed in, stored, and imported in batches off the request path; an export writes a file that is
 * downloaded once the job has succeeded. Both answer 202 with the job and are read back by id.
 */
import { Jobs, Kernel } from "@feedback/core"
import { Result, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { doc, docGroup } from "../Describe.ts"
import {
  ConflictResponse,
  InvalidRequestResponse,
  NotFoundResponse,
  PayloadTooLargeResponse
} from "../ErrorResponses.ts"
import { flagParam } from "../ListParams.ts"
import { requires, requiresByInput, SecretKeyAuth } from "../Security.ts"

const params = { id: Kernel.ImportJobId }

/** The media types an import file may be sent as. */
const IMPORT_MEDIA_TYPES = ["text/csv", "application/x-ndjson"] as const
/** The media types an export file is downloaded as (per the job's format). */
const EXPORT_MEDIA_TYPES = ["text/csv", "application/x-ndjson"] as const

const strictParam = flagParam(
  "true: the first row that cannot be imported fails the job and nothing is imported. Default false: such rows are skipped and listed.",
  (raw) =>
    raw === "true"
      ? Result.succeed(true)
      : raw === "false"
      ? Result.succeed(false)
      : Result.fail(Kernel.InvalidRequest.single("query.strict", "must be true or false"))
)

/** `POST /export-jobs` body. */
export const ExportJobCreate = Schema.Struct({
  type: Schema.Literal("reviews"),
  format: Jobs.JobFormat,
  /** A filter document, as `GET /reviews` takes it (docs/DECISIONS.md §4). */
  filter: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  search: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200)))
})
export type ExportJobCreate = typeof ExportJobCreate.Type

export class ImportJobsApi extends HttpApiGroup.make("importJobs")
  .add(
    HttpApiEndpoint.post("create", "/import-jobs", {
      query: { type: Jobs.JobType, strict: strictParam },
      payload: HttpApiSchema.StreamUint8Array({ contentType: [...IMPORT_MEDIA_TYPES] }),
      success: Jobs.Job.pipe(HttpApiSchema.status(202)),
      error: [InvalidRequestResponse, PayloadTooLargeResponse]
    })
      .annotateMerge(doc(
        "Queue an import job",
        `Streams a CSV (\`text/csv\`, RFC 4180, a header row naming the import's row fields; lists and objects as JSON in ` +
          `the cell) or NDJSON (\`application/x-ndjson\`, one JSON row a line) file of reviews, products or customers, at most ` +
          `${Jobs.MAX_JOB_ROWS.toLocaleString("en-US")} rows and ${
            Jobs.MAX_JOB_BYTES / 1024 / 1024
          } MiB (more: 413, nothing imported), and answers 202 with the ` +
          "queued job. Rows are validated and imported in batches off the request path with the same rules as the synchronous " +
          "import of the type. Needs `<type>:write`. Costs 10 tokens."
      ))
      .pipe(requiresByInput("<type>:write")),
    HttpApiEndpoint.get("get", "/import-jobs/:id", {
      params,
      success: Jobs.Job,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Get an import job",
        "The job with its status and progress, readable while it runs; `skipped` lists the first 1,000 rows it " +
          "skipped (`index`: the 0-based data row). Needs `<type>:read` or `<type>:write` of the job's type."
      ))
      .pipe(requiresByInput("<type>:read or <type>:write of the job's type"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Import jobs", "Queued imports of up to 100,000 rows from CSV or NDJSON."))
{}

export class ExportJobsApi extends HttpApiGroup.make("exportJobs")
  .add(
    HttpApiEndpoint.post("create", "/export-jobs", {
      payload: ExportJobCreate,
      success: Jobs.Job.pipe(HttpApiSchema.status(202)),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Queue an export job",
        "Exports the reviews matching `filter` AND `search` (as `GET /reviews`) to a CSV or NDJSON file written " +
          "off the request path; every review field of the list, plus the import's fields (product slug, customer email, " +
          `reply, image URLs), so the file imports again. More than ${
            Jobs.MAX_JOB_ROWS.toLocaleString("en-US")
          } matches fails the job. Costs 10 tokens.`
      ))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.get("get", "/export-jobs/:id", {
      params,
      success: Jobs.Job,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Get an export job",
        "The job with its status and progress; `expiresAt` says until when its file can be downloaded."
      ))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.get("download", "/export-jobs/:id/download", {
      params,
      success: HttpApiSchema.StreamUint8Array({ contentType: [...EXPORT_MEDIA_TYPES] }),
      error: [InvalidRequestResponse, NotFoundResponse, ConflictResponse]
    })
      .annotateMerge(doc(
        "Download an export file",
        "Streams the file of a succeeded export job (`text/csv` or `application/x-ndjson`, per its format). " +
          "409 while the job has not succeeded; 404 once the file expired."
      ))
      .pipe(requires("reviews:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Export jobs", "Review exports of up to 100,000 rows as CSV or NDJSON."))
{}
