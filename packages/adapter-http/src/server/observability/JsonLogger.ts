/**
 * The one log format of the server (docs/OPERATIONS.md, docs/DECISIONS.md §19): every line on stdout is one JSON
 * object, `{"time","level","message", …fields}`, with `requestId` on lines written while a request runs and
 * `traceId`/`spanId` when a span is current, so a line can be joined to its trace. Effect's own logging
 * (`Effect.log*` anywhere, the access log, start-up lines) goes through `jsonLogger`; what Node reports before an
 * Effect request exists (malformed HTTP on the socket) uses the same `formatLogLine`.
 */
import { Cause, Context, Formatter, Layer, Logger, References, Tracer } from "effect"

export type LogLevelName = "trace" | "debug" | "info" | "warn" | "error" | "fatal"

/** Where finished lines go; stdout unless a host or test says otherwise. */
export type LogSink = (line: string) => void

export const stdoutSink: LogSink = (line) => {
  process.stdout.write(line + "\n")
}

const levelNames: Record<string, LogLevelName> = {
  Trace: "trace", Debug: "debug", Info: "info", Warn: "warn", Error: "error", Fatal: "fatal", All: "trace", None: "info"
}

const RESERVED = new Set(["time", "level", "message"])

/**
 * One line: time, level and message first, then the fields (annotations) in the order given. A field cannot
 * overwrite the first three. Values are serialized by Effect's `Formatter.formatJson`, which redacts `Redacted`
 * values and survives cycles and bigints.
 */
export const formatLogLine = (
  level: LogLevelName,
  message: string,
  fields: Readonly<Record<string, unknown>> = {},
  date: Date = new Date()
): string => {
  const record: Record<string, unknown> = { time: date.toISOString(), level, message }
  let plain = true
  for (const key in fields) {
    const value = fields[key]
    if (RESERVED.has(key) || value === undefined) continue
    record[key] = value
    plain &&= value === null || typeof value !== "object" && typeof value !== "bigint"
  }
  // Strings, numbers, booleans and null serialize alike either way; `formatJson` (redaction, cycles, bigints) is
  // for anything else, and cost most of an access-log line.
  return plain ? JSON.stringify(record) : Formatter.formatJson(record)
}

/** An Effect log call's message: the first string part is the message, any further parts are `details`. */
const splitMessage = (message: unknown): { readonly text: string; readonly details: ReadonlyArray<unknown> | undefined } => {
  const parts = Array.isArray(message) ? message : [message]
  if (parts.length === 0) return { text: "", details: undefined }
  const [first, ...rest] = parts
  return typeof first === "string"
    ? { text: first, details: rest.length === 0 ? undefined : rest }
    : { text: "", details: parts }
}

/** Effect's Logger writing `formatLogLine` lines to `sink`. */
export const jsonLogger = (sink: LogSink = stdoutSink): Logger.Logger<unknown, void> =>
  Logger.make(({ cause, date, fiber, logLevel, message }) => {
    const annotations = fiber.getRef(References.CurrentLogAnnotations)
    const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
    const { details, text } = splitMessage(message)
    const fields: Record<string, unknown> = { ...annotations }
    // Only a real tracer's ids lead anywhere: the native tracer's spans are exported by nothing.
    if (span !== undefined && span.sampled && fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer) {
      fields["traceId"] = span.traceId
      fields["spanId"] = span.spanId
    }
    if (details !== undefined) fields["details"] = details
    if (cause.reasons.length > 0) fields["cause"] = Cause.pretty(cause)
    sink(formatLogLine(levelNames[logLevel] ?? "info", text, fields, date))
  })

/** Replaces the current loggers with the JSON logger (the server's only log format). */
export const JsonLoggerLayer = (sink: LogSink = stdoutSink): Layer.Layer<never> => Logger.layer([jsonLogger(sink)])
