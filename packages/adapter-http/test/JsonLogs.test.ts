/**
 * The one log format (docs/DECISIONS.md §19): Effect's logging through `jsonLogger` gives one JSON object per line,
 * time, level and message first; fields cannot overwrite them; causes, extra parts and secrets are rendered safely;
 * a line logged while a request runs names the request; and with the access log off a request logs nothing.
 */
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { Cause, Effect, Formatter, Logger, Redacted, References } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { describe, expect, it } from "vitest"
import { formatLogLine, jsonLogger, JsonLoggerLayer, logInfoAnnotated } from "../src/server/observability/JsonLogger.ts"
import { makeTestServer } from "./TestServer.ts"

const capture = async (effect: Effect.Effect<void>) => {
  const lines: Array<string> = []
  await Effect.runPromise(effect.pipe(Effect.provide(JsonLoggerLayer((line) => lines.push(line)))))
  return lines.map((line) => {
    expect(line).not.toContain("\n")
    return JSON.parse(line) as Record<string, unknown>
  })
}

/** What two programs log, each run under the same fixed clock and the loggers `loggersOf` makes for its lines. */
const logsOfBoth = async (
  loggersOf: (lines: Array<string>) => ReadonlyArray<Logger.Logger<unknown, unknown>>,
  a: Effect.Effect<void>,
  b: Effect.Effect<void>
) => {
  const run = async (effect: Effect.Effect<void>) => {
    const lines: Array<string> = []
    await Effect.runPromise(effect.pipe(
      Effect.andThen(Effect.void),
      Effect.provide(Logger.layer(loggersOf(lines))),
      Effect.provide(TestClock.layer())
    ))
    return lines
  }
  return [await run(a), await run(b)] as const
}

describe("logInfoAnnotated (the access log's line)", () => {
  const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined))
  const record = fc.dictionary(fc.string(), value, { maxKeys: 6 })

  it("writes exactly the line of Effect.logInfo annotated with the fields, outer annotations and spans included", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), record, record, async (message, outer, fields) => {
        const [direct, viaEffect] = await logsOfBoth(
          (lines) => [jsonLogger((line) => lines.push(line))],
          logInfoAnnotated(message, fields).pipe(Effect.annotateLogs(outer), Effect.withSpan("s")),
          Effect.logInfo(message).pipe(Effect.annotateLogs(fields), Effect.annotateLogs(outer), Effect.withSpan("s"))
        )
        expect(direct).toHaveLength(1)
        expect(direct).toEqual(viaEffect)
      }),
      { numRuns: 200 }
    )
  })

  it("goes through Effect's logging for any other logger, and honours the minimum level", async () => {
    const hostLogger = (lines: Array<string>) =>
      Logger.make(({ fiber, message }) => {
        lines.push(JSON.stringify([message, fiber.getRef(References.CurrentLogAnnotations)]))
      })
    const [direct, viaEffect] = await logsOfBoth(
      (lines) => [hostLogger(lines), jsonLogger((line) => lines.push(line))],
      logInfoAnnotated("GET /x 200", { status: 200 }).pipe(Effect.annotateLogs({ requestId: "r" })),
      Effect.logInfo("GET /x 200").pipe(Effect.annotateLogs({ status: 200 }), Effect.annotateLogs({ requestId: "r" }))
    )
    expect(direct).toHaveLength(2)
    expect(direct).toEqual(viaEffect)
    const [quiet] = await logsOfBoth(
      (lines) => [jsonLogger((line) => lines.push(line))],
      logInfoAnnotated("GET /x 200", { status: 200 }).pipe(Effect.provideService(References.MinimumLogLevel, "Warn")),
      Effect.void
    )
    expect(quiet).toEqual([])
  })
})

describe("stdoutSink", () => {
  it("writes every line once and in order, batched per turn, including those pending when the process exits", () => {
    const script = [
      `import { stdoutSink } from ${
        JSON.stringify(Path.join(import.meta.dirname, "../src/server/observability/JsonLogger.ts"))
      }`,
      "for (let i = 0; i < 3; i++) stdoutSink(`a${i}`)",
      "setImmediate(() => { for (let i = 0; i < 3; i++) stdoutSink(`b${i}`); process.exit(0) })"
    ].join("\n")
    const child = spawnSync(process.execPath, ["--conditions=@feedback/source", "--input-type=module", "-e", script], {
      encoding: "utf8"
    })
    expect(child.stderr).toBe("")
    expect(child.stdout).toBe("a0\na1\na2\nb0\nb1\nb2\n")
  })
})

describe("jsonLogger", () => {
  it("writes time, level and message first, then the annotations", async () => {
    const [line] = await capture(
      Effect.logWarning("disk almost full").pipe(Effect.annotateLogs({ requestId: "r-1", free: 3 }))
    )
    expect(Object.keys(line!).slice(0, 3)).toEqual(["time", "level", "message"])
    expect(line).toMatchObject({ level: "warn", message: "disk almost full", requestId: "r-1", free: 3 })
    expect(new Date(line!["time"] as string).toISOString()).toBe(line!["time"])
  })

  it("maps every level, keeps reserved keys, renders causes and extra parts, redacts secrets", async () => {
    const lines = await capture(Effect.gen(function*() {
      yield* Effect.logError("failed", Cause.fail(new Error("boom")))
      yield* Effect.logInfo("two parts", { n: 1 })
      yield* Effect.logFatal("secret", Redacted.make("hunter2"))
      yield* Effect.logInfo("spoof").pipe(Effect.annotateLogs({ level: "debug", message: "x", time: "never" }))
      yield* Effect.logDebug("hidden below the minimum level")
    }))
    expect(lines.map((l) => l["level"])).toEqual(["error", "info", "fatal", "info"])
    expect(lines[0]!["cause"]).toContain("boom")
    expect(lines[1]!["details"]).toEqual([{ n: 1 }])
    expect(JSON.stringify(lines[2])).not.toContain("hunter2")
    expect(lines[3]).toMatchObject({ level: "info", message: "spoof" })
    expect(lines[3]!["time"]).not.toBe("never")
  })

  it("is Effect's Logger, and the socket-level lines use the same format", () => {
    expect(typeof jsonLogger().log).toBe("function")
    const line = JSON.parse(
      formatLogLine("info", "request refused", { requestId: "req_1", status: 408, skipped: undefined })
    )
    expect(line).toMatchObject({ level: "info", message: "request refused", requestId: "req_1", status: 408 })
    expect("skipped" in line).toBe(false)
  })

  it("writes a line of plain values exactly as Effect's redacting formatter does, and still redacts the rest", () => {
    const date = new Date("2026-11-26T00:00:00.000Z")
    const plain = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined)
    )
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string(), plain), (message, fields) => {
        const kept = Object.fromEntries(
          Object.entries(fields).filter(([k, v]) => !["time", "level", "message"].includes(k) && v !== undefined)
        )
        expect(formatLogLine("info", message, fields, date)).toBe(
          Formatter.formatJson({ time: date.toISOString(), level: "info", message, ...kept })
        )
      }),
      { numRuns: 300 }
    )
    // A field named like Object.prototype's accessor is a field like any other, on both paths.
    expect(formatLogLine("info", "m", JSON.parse(`{"__proto__":0}`), date)).toBe(
      `{"time":"${date.toISOString()}","level":"info","message":"m","__proto__":0}`
    )
    expect(formatLogLine("info", "m", JSON.parse(`{"__proto__":{"a":1}}`), date)).toBe(
      `{"time":"${date.toISOString()}","level":"info","message":"m","__proto__":{"a":1}}`
    )
    const secret = JSON.parse(formatLogLine("info", "m", { key: Redacted.make("sk_live"), n: 1n }))
    expect(secret).toMatchObject({ key: "<redacted>", n: "1n" })
  })
})

describe("request logging", () => {
  const Boom = HttpRouter.add("GET", "/test-boom", Effect.die(new Error("boom")))
  const Chatty = HttpRouter.add(
    "GET",
    "/test-chatty",
    Effect.as(Effect.logInfo("working on it"), HttpServerResponse.text("ok"))
  )

  it("with the access log off, a successful request writes nothing; an error line still names the request", async () => {
    const lines: Array<string> = []
    const server = makeTestServer(undefined, { logRequests: false, log: (line) => lines.push(line), routes: Boom })
    try {
      await server.request("GET", "/health")
      await server.request("GET", "/no-such-route")
      expect(lines).toEqual([])
      const boom = await server.request("GET", "/test-boom", { headers: { "x-request-id": "boom-1" } })
      expect(boom.status).toBe(500)
      const parsed = lines.map((l) => JSON.parse(l))
      expect(parsed).toHaveLength(1)
      expect(parsed[0]).toMatchObject({ level: "error", requestId: "boom-1", path: "/test-boom", status: 500 })
      expect(parsed[0].cause).toContain("boom")
    } finally {
      await server.dispose()
    }
  })

  it("a line a handler logs carries the request id, like the access line", async () => {
    const lines: Array<string> = []
    const server = makeTestServer(undefined, { logRequests: true, log: (line) => lines.push(line), routes: Chatty })
    try {
      await server.request("GET", "/test-chatty", { headers: { "x-request-id": "chatty-1" } })
      const parsed = lines.map((l) => JSON.parse(l))
      expect(parsed.find((l) => l.message === "working on it")).toMatchObject({ level: "info", requestId: "chatty-1" })
      expect(parsed.find((l) => l.status === 200)).toMatchObject({
        requestId: "chatty-1",
        method: "GET",
        path: "/test-chatty",
        message: "GET /test-chatty 200"
      })
    } finally {
      await server.dispose()
    }
  })
})
