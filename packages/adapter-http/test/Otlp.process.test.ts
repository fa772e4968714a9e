/**
 * OTLP export from the standalone server (docs/DECISIONS.md §19): `src/main.ts` runs as a process with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a collector served by this test, on embedded PGlite. One request with a
 * caller's `traceparent` and `X-Request-Id` must arrive as one trace that continues the caller's: the server span
 * (child of the caller's span, carrying the request id and the route), use-case spans and SQL statement spans. The
 * request metrics arrive too, the access-log line names the trace, and the default protocol is protobuf.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServerProcess, startServerProcess } from "./ServerProcess.ts"
import { eventually } from "./WebhookReceiver.ts"

interface Export {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

interface Collector {
  readonly url: string
  readonly received: Array<Export>
  readonly close: () => Promise<void>
}

/** A stand-in OTLP/HTTP collector: records each export and answers 200 `{}`. */
const startCollector = async (): Promise<Collector> => {
  const received: Array<Export> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        contentType: String(req.headers["content-type"] ?? ""),
        body: Buffer.concat(chunks)
      })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

const spansIn = (exports: ReadonlyArray<Export>): Array<OtlpSpan> =>
  exports.filter((e) => e.path === "/v1/traces").flatMap((e) =>
    (JSON.parse(e.body.toString("utf8")).resourceSpans as Array<any>).flatMap((r) =>
      r.scopeSpans.flatMap((s: any) => s.spans)
    )
  )

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

const DEMO_KEY = "sk_" + "o".repeat(40)
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const CALLER_SPAN_ID = "00f067aa0ba902b7"

describe("OTLP export (OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  let collector: Collector
  let server: ServerProcess
  let dataDir: string
  beforeAll(async () => {
    collector = await startCollector()
    dataDir = mkdtempSync(Path.join(tmpdir(), "fb-otlp-"))
    server = await startServerProcess({
      DATABASE_URL: "",
      DATA_DIR: dataDir,
      DEMO_SECRET_KEY: DEMO_KEY,
      LOG_REQUESTS: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "feedback-otlp-test",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_METRIC_EXPORT_INTERVAL: "500"
    }, { timeoutMs: 90_000 })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    await collector?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it(
    "exports one request as one trace continuing the caller's: server, use-case and SQL spans",
    { timeout: 60_000 },
    async () => {
      const res = await fetch(`${server.url}/reviews?limit=5`, {
        headers: {
          authorization: `Bearer ${DEMO_KEY}`,
          traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`,
          "x-request-id": "otlp-test-request-1"
        }
      })
      expect(res.status).toBe(200)
      const spans = await eventually(
        async () => {
          const inTrace = spansIn(collector.received).filter((s) => s.traceId === TRACE_ID)
          const server = inTrace.find((s) => s.parentSpanId === CALLER_SPAN_ID)
          return server !== undefined &&
              inTrace.some((s) =>
                attribute(s, "db.query.text") !== undefined || /^(SELECT|INSERT|UPDATE|WITH)\b/i.test(s.name)
              )
            ? inTrace
            : undefined
        },
        30_000,
        "the request's spans at the collector"
      )

      const root = spans.find((s) => s.parentSpanId === CALLER_SPAN_ID)!
      expect(root.kind).toBe(2) // SERVER
      expect(root.name).toBe("GET /reviews")
      expect(attribute(root, "http.request.id")).toBe("otlp-test-request-1")
      expect(attribute(root, "http.route")).toBe("/reviews")
      expect(Number(attribute(root, "http.response.status_code"))).toBe(200)

      // Every other span of the trace descends from the server span.
      const byId = new Map(spans.map((s) => [s.spanId, s]))
      const descends = (span: OtlpSpan): boolean => {
        for (
          let p = span.parentSpanId;
          p !== undefined && p !== "";
          p = byId.get(p)?.parentSpanId
        ) if (p === root.spanId) return true
        return false
      }
      const useCases = spans.filter((s) => /^[A-Z][A-Za-z]+\.[a-z][A-Za-z]+$/.test(s.name))
      expect(useCases.length, `use-case spans among ${spans.map((s) => s.name).join(", ")}`).toBeGreaterThan(0)
      expect(useCases.every(descends)).toBe(true)
      const sql = spans.filter((s) =>
        s.kind === 3 &&
        Object.keys(Object.fromEntries(s.attributes.map((a) => [a.key, 1]))).some((k) => k.startsWith("db."))
      )
      expect(sql.length, `SQL spans among ${spans.map((s) => `${s.name} (${s.kind})`).join(", ")}`).toBeGreaterThan(0)
      expect(sql.every(descends)).toBe(true)

      // The resource names the service.
      const resource =
        JSON.parse(collector.received.find((e) => e.path === "/v1/traces")!.body.toString("utf8")).resourceSpans[0]
          .resource
      expect(resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "feedback-otlp-test" } })

      // The access-log line of the request carries the trace, and every line on stdout is JSON.
      const lines = server.output().split("\n").filter((l) => l.trim() !== "")
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
      const access = lines.map((l) => JSON.parse(l)).find((l) =>
        l.requestId === "otlp-test-request-1" && l.status === 200
      )
      expect(access).toMatchObject({ level: "info", method: "GET", route: "/reviews", traceId: TRACE_ID })
    }
  )

  it("exports the request metrics", { timeout: 30_000 }, async () => {
    const metrics = await eventually(
      async () => {
        const found = collector.received.filter((e) => e.path === "/v1/metrics").map((e) => e.body.toString("utf8"))
          .find((body) => body.includes("http_server_requests_total") && body.includes("/reviews"))
        return found
      },
      20_000,
      "request metrics at the collector"
    )
    const names = (JSON.parse(metrics).resourceMetrics as Array<any>).flatMap((r) =>
      r.scopeMetrics.flatMap((s: any) => s.metrics.map((m: any) => m.name))
    )
    expect(names).toEqual(
      expect.arrayContaining([
        "http_server_requests_total",
        "http_server_request_duration_seconds",
        "feedback_rate_limit_decisions_total"
      ])
    )
  })
})

describe("OTLP export over protobuf (the default protocol)", () => {
  it("posts protobuf to /v1/traces", { timeout: 90_000 }, async () => {
    const collector = await startCollector()
    const server = await startServerProcess({
      DATABASE_URL: "memory",
      LOG_REQUESTS: "false",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url + "/",
      OTEL_BSP_SCHEDULE_DELAY: "200"
    }, { timeoutMs: 60_000 })
    try {
      expect((await fetch(`${server.url}/health`)).status).toBe(200)
      const traces = await eventually(
        async () => collector.received.find((e) => e.path === "/v1/traces" && e.body.includes("GET /health")),
        20_000,
        "a protobuf trace export"
      )
      expect(traces.contentType).toBe("application/x-protobuf")
    } finally {
      await server.stop()
      await collector.close()
    }
  })
})
