/**
 * An import file's bytes, as they arrive, to the rows the `Jobs` use-case stores: each row the JSON text of an
 * object of the import's row fields. NDJSON lines are passed on as they are (the core decodes them, so a bad line
 * is a skipped row, not a failed upload); CSV records (RFC 4180, csv-parse) become objects by their header, cells
 * typed by the core's column mapping (`rowOfCsvRecord`). Never more than one row and one chunk in memory: the body
 * is read with backpressure, and bytes are counted so a file over the limit stops at once with 413.
 */
import { Jobs, Kernel } from "@feedback/core"
import { Cause, Effect, Stream } from "effect"
import { type JsonBodyProblem, jsonTextProblem, problemMessage } from "../JsonBodyShape.ts"
import { optionalPackage } from "../OptionalPackage.ts"

/** One row (a line or a record) may be at most this large. */
const MAX_ROW_BYTES = 1024 * 1024

const tooLarge = new Kernel.PayloadTooLarge({
  message: `An import file may be at most ${
    Jobs.MAX_JOB_BYTES / 1024 / 1024
  } MiB; split it into several jobs. Nothing was imported.`,
  limitBytes: Jobs.MAX_JOB_BYTES
})
const rowTooLarge = new Kernel.PayloadTooLarge({
  message: `A row of an import file may be at most ${MAX_ROW_BYTES / 1024 / 1024} MiB. Nothing was imported.`,
  limitBytes: Jobs.MAX_JOB_BYTES
})

/** Fails as soon as more than `MAX_JOB_BYTES` have arrived. */
const bounded = <E>(bytes: Stream.Stream<Uint8Array, E>): Stream.Stream<Uint8Array, E | Kernel.PayloadTooLarge> => {
  let total = 0
  return Stream.mapEffect(bytes, (chunk) => {
    total += chunk.byteLength
    return total > Jobs.MAX_JOB_BYTES ? Effect.fail(tooLarge) : Effect.succeed(chunk)
  })
}

/**
 * A row whose JSON nests too deep or holds too many values is refused like the same value in a request body
 * (`JsonBodyShape`): parsing, writing and decoding it would otherwise recurse past the stack.
 */
const shapeProblem = (row: number, where: string, problem: JsonBodyProblem) =>
  Kernel.InvalidRequest.single("body", `row ${row}${where} ${problemMessage[problem]}; nothing was imported`)

/** NDJSON: one row a line (LF or CRLF); blank lines are ignored. */
const ndjsonRows = <E>(
  bytes: Stream.Stream<Uint8Array, E>
): Stream.Stream<string, E | Kernel.PayloadTooLarge | Kernel.InvalidRequest> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder("utf-8")
    let pending = ""
    let rows = 0
    const linesOf = (
      text: string,
      last: boolean
    ): Effect.Effect<ReadonlyArray<string>, Kernel.PayloadTooLarge | Kernel.InvalidRequest> => {
      pending += text
      const parts = pending.split("\n")
      pending = last ? "" : parts.pop()!
      if (pending.length > MAX_ROW_BYTES) return Effect.fail(rowTooLarge)
      const lines = parts.map((l) => l.endsWith("\r") ? l.slice(0, -1) : l).filter((l) => l.trim() !== "")
      for (const line of lines) {
        rows++
        const problem = jsonTextProblem(line)
        if (problem !== undefined) return Effect.fail(shapeProblem(rows, "", problem))
      }
      return Effect.succeed(lines)
    }
    return bytes.pipe(
      Stream.mapEffect((chunk) => linesOf(decoder.decode(chunk, { stream: true }), false)),
      Stream.concat(Stream.fromEffect(Effect.suspend(() => linesOf(decoder.decode(), true)))),
      Stream.flattenIterable
    )
  })

/** Carries a failure of the body stream through the parser, to be failed with again on the other side. */
class BodyFailed<E> extends Error {
  readonly failure: Cause.Cause<E>
  constructor(failure: Cause.Cause<E>) {
    super("body failed")
    this.failure = failure
  }
}

const csvProblem = (error: unknown): Kernel.InvalidRequest => {
  const lines = (error as { readonly lines?: unknown } | null)?.lines
  const line = typeof lines === "number" ? ` at line ${lines}` : ""
  const reason = error instanceof Error ? error.message.replace(/^Invalid [^:]*: /, "") : "unreadable"
  return Kernel.InvalidRequest.single(
    "body",
    `is not a valid CSV file${line} (${reason.slice(0, 200)}); nothing was imported`
  )
}

/** The header row: every column named, no name twice. */
const checkedHeader = (header: ReadonlyArray<string>): Array<string> => {
  const seen = new Set<string>()
  for (const name of header) {
    if (name.trim() === "") throw new Error("Invalid header: a column has no name")
    if (seen.has(name)) throw new Error(`Invalid header: column "${name.slice(0, 100)}" appears twice`)
    seen.add(name)
  }
  return [...header]
}

/** CSV (RFC 4180) with a header row; each record becomes a row object. csv-parse is an optional peer. */
const csvRows = <E>(
  type: Jobs.JobType,
  bytes: Stream.Stream<Uint8Array, E>
): Stream.Stream<string, E | Kernel.PayloadTooLarge | Kernel.InvalidRequest> =>
  Stream.unwrap(Effect.gen(function*() {
    const { CsvError, parse } = yield* optionalPackage(
      "csv-parse",
      "Import files in text/csv",
      () => import("csv-parse")
    )
    const parser = parse({ columns: checkedHeader, bom: true, max_record_size: MAX_ROW_BYTES, skip_empty_lines: true })
    // The body is written into the parser with backpressure by a fiber of this stream's scope; the records are read
    // from it as an async iterable. A failure of the body travels through the parser as `BodyFailed`.
    yield* Stream.runForEach(bytes, (chunk) =>
      Effect.callback<void>((resume) => {
        if (parser.write(chunk)) return resume(Effect.void)
        const drained = () => resume(Effect.void)
        parser.once("drain", drained)
        return Effect.sync(() => parser.off("drain", drained))
      })).pipe(
        Effect.andThen(Effect.sync(() => parser.end())),
        Effect.catchCause((cause) => Effect.sync(() => parser.destroy(new BodyFailed(cause)))),
        Effect.forkScoped
      )
    return Stream.fromAsyncIterable(parser as AsyncIterable<Record<string, string>>, (error) => error).pipe(
      Stream.catch((error: unknown): Stream.Stream<never, E | Kernel.PayloadTooLarge | Kernel.InvalidRequest> => {
        if (error instanceof BodyFailed) {
          return Stream.failCause(error.failure as Cause.Cause<E | Kernel.PayloadTooLarge>)
        }
        if (error instanceof CsvError && error.code === "CSV_MAX_RECORD_SIZE") return Stream.fail(rowTooLarge)
        return Stream.fail(csvProblem(error))
      }),
      Stream.mapAccumEffect(() => 0, (row, record) => {
        for (const [column, cell] of Object.entries(record)) {
          const problem = Jobs.isJsonColumn(type, column) ? jsonTextProblem(cell) : undefined
          if (problem !== undefined) {
            return Effect.fail(shapeProblem(row + 1, `, column ${JSON.stringify(column.slice(0, 100))},`, problem))
          }
        }
        return Effect.succeed([row + 1, [JSON.stringify(Jobs.rowOfCsvRecord(type, record))]] as const)
      })
    )
  }))

/** The rows of an import file of the given format. */
export const importFileRows = <E>(
  type: Jobs.JobType,
  format: Jobs.JobFormat,
  bytes: Stream.Stream<Uint8Array, E>
): Stream.Stream<string, E | Kernel.PayloadTooLarge | Kernel.InvalidRequest> =>
  format === "csv" ? csvRows(type, bounded(bytes)) : ndjsonRows(bounded(bytes))

/** The format of a body by its media type. */
export const importFormatOf = (contentType: string | undefined): Jobs.JobFormat =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase() === "text/csv" ? "csv" : "ndjson"
