/**
 * The one log format of the server (docs/OPERATIONS.md, docs/DECISIONS.md §19): every line on stdout is one JSON
 * object, `{"time","level","message", …fields}`, with `requestId` on lines written while a request runs and
 * `traceId`/`spanId` when a span is current, so a line can be joined to its trace. Effect's own logging
 * (`Effect.log*` anywhere, the access log, start-up lines) goes through `jsonLogger`; what Node reports before an
 * Effect request exists (malformed HTTP on the socket) uses the same `formatLogLine`.
 */
import { writeSync } from "node:fs"
import { Cause, Clock, Context, Effect, Formatter, Layer, Logger, LogLevel, References, Tracer } from "effect"
import type * as Fiber from "effect/Fiber"

export type LogLevelName = "trace" | "debug" | "info" | "warn" | "error" | "fatal"

/** Where finished lines go; stdout unless a host or test says otherwise. */
export type LogSink = (line: string) => void

/**
 * Lines wait for the end of the event-loop turn and go out in one write: a write to a file or pipe is a system call
 * each, and the access log writes a line per request (docs/DECISIONS.md §35).
 * Whatever is pending is written synchronously when the process exits, a crash included.
 */
let pending: Array<string> = []
const flushPending = () => {
  if (pending.length === 0) return
  const text = pending.join("\n") + "\n"
  pending = []
  process.stdout.write(text)
}
let exitHooked = false
export const stdoutSink: LogSink = (line) => {
  if (pending.length === 0) {
    if (!exitHooked) {
      exitHooked = true
      process.once("exit", () => {
        if (pending.length > 0) writeSync(1, pending.join("\n") + "\n")
        pending = []
      })
    }
    setImmediate(flushPending)
  }
  pending.push(line)
}

const levelNames: Record<string, LogLevelName> = {
  Trace: "trace",
  Debug: "debug",
  Info: "info",
  Warn: "warn",
  Error: "error",
  Fatal: "fatal",
  All: "trace",
  None: "info"
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
  // No prototype, so a field named `__proto__` is written like any other rather than silently dropped.
  const record: Record<string, unknown> = Object.create(null)
  record["time"] = date.toISOString()
  record["level"] = level
  record["message"] = message
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
const splitMessage = (
  message: unknown
): { readonly text: string; readonly details: ReadonlyArray<unknown> | undefined } => {
  const parts = Array.isArray(message) ? message : [message]
  if (parts.length === 0) return { text: "", details: undefined }
  const [first, ...rest] = parts
  return typeof first === "string"
    ? { text: first, details: rest.length === 0 ? undefined : rest }
    : { text: "", details: parts }
}

/** A line's fields: the fiber's annotations, then `extra`, then the current span's ids. */
const fieldsOf = (fiber: Fiber.Fiber<unknown, unknown>, extra: Readonly<Record<string, unknown>> | undefined) => {
  const fields: Record<string, unknown> = { ...fiber.getRef(References.CurrentLogAnnotations), ...extra }
  const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
  // Only a real tracer's ids lead anywhere: the native tracer's spans are exported by nothing.
  if (span !== undefined && span.sampled && fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer) {
    fields["traceId"] = span.traceId
    fields["spanId"] = span.spanId
  }
  return fields
}

/** The sink of each logger made by `jsonLogger`, so `logInfoAnnotated` can write to it directly. */
const sinks = new WeakMap<Logger.Logger<unknown, void>, LogSink>()

/** Effect's Logger writing `formatLogLine` lines to `sink`. */
export const jsonLogger = (sink: LogSink = stdoutSink): Logger.Logger<unknown, void> => {
  const logger = Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
    const { details, text } = splitMessage(message)
    const fields = fieldsOf(fiber, undefined)
    if (details !== undefined) fields["details"] = details
    if (cause.reasons.length > 0) fields["cause"] = Cause.pretty(cause)
    sink(formatLogLine(levelNames[logLevel] ?? "info", text, fields, date))
  })
  sinks.set(logger, sink)
  return logger
}

/**
 * `Effect.logInfo(message)` annotated with `fields`, line for line. When the fiber's only logger is a `jsonLogger`
 * the line goes straight to its sink: annotating builds a new fiber context and dispatching walks Effect's logging,
 * work every request would pay for the access log's one line (docs/DECISIONS.md §35).
 */
export const logInfoAnnotated = (message: string, fields: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const loggers = fiber.getRef(Logger.CurrentLoggers)
    const only = loggers.size === 1 ? loggers.values().next().value : undefined
    const sink = only === undefined ? undefined : sinks.get(only)
    if (sink === undefined) return Effect.annotateLogs(Effect.logInfo(message), fields)
    if (!LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), "Info")) {
      sink(
        formatLogLine(
          "info",
          message,
          fieldsOf(fiber, fields),
          new Date(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
        )
      )
    }
    return Effect.void
  })

/** Replaces the current loggers with the JSON logger (the server's only log format). */
export const JsonLoggerLayer = (sink: LogSink = stdoutSink): Layer.Layer<never> => Logger.layer([jsonLogger(sink)])
