/** Handlers of import and export jobs: one call into the `Jobs` service per endpoint. */
import { Jobs } from "@feedback/core"
import { Effect, Stream } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { importFileRows, importFormatOf } from "./ImportFileRows.ts"
import { capturingOnly } from "../HandlerGroups.ts"

const mediaTypes = { csv: "text/csv; charset=utf-8", ndjson: "application/x-ndjson" } as const

export const ImportJobsHandlers = HttpApiBuilder.group(
  AdminApi,
  "importJobs",
  Effect.fn(function*(handlers) {
    const jobs = yield* Jobs.Jobs
    return handlers
      .handle("create", ({ payload, query }) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const format = importFormatOf(request.headers["content-type"])
          return jobs.createImport(
            { type: query.type, strict: query.strict ?? false, format },
            importFileRows(query.type, format, payload)
          )
        }))
      .handle("get", ({ params }) => jobs.getImport(params.id))
  })
).pipe(capturingOnly(Jobs.Jobs))

export const ExportJobsHandlers = HttpApiBuilder.group(
  AdminApi,
  "exportJobs",
  Effect.fn(function*(handlers) {
    const jobs = yield* Jobs.Jobs
    const encoder = new TextEncoder()
    return handlers
      .handle("create", ({ payload }) =>
        jobs.createExport({
          type: payload.type,
          format: payload.format,
          filter: payload.filter === undefined ? undefined : JSON.stringify(payload.filter),
          search: payload.search
        }))
      .handle("get", ({ params }) => jobs.getExport(params.id))
      .handle(
        "download",
        ({ params }) =>
          Effect.map(jobs.download(params.id), (file) =>
            HttpServerResponse.stream(
              Stream.map(file.content, (text) => encoder.encode(text)),
              {
                contentType: mediaTypes[file.format],
                headers: {
                  "content-disposition": `attachment; filename="reviews-${params.id}.${
                    file.format === "csv" ? "csv" : "ndjson"
                  }"`
                }
              }
            ))
      )
  })
).pipe(capturingOnly(Jobs.Jobs))
