/**
 * The standalone server (`src/main.ts`) as a child process, for tests and benchmarks that need real processes:
 * started with `PORT=0` (or a given port), its URL read from the "Admin API listening on <url>" line, and stopped
 * for sure — SIGTERM, then SIGKILL after a grace period, and SIGKILL if the parent exits first.
 *
 * Its stdout goes to a file rather than a pipe, so a chatty server (LOG_REQUESTS=true under load) costs the parent
 * nothing and never blocks on a full pipe.
 */
import { request as httpRequest } from "node:http"
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

export const mainScript = Path.resolve(import.meta.dirname, "../src/main.ts")
const repoRoot = Path.resolve(import.meta.dirname, "../../..")

export interface ServerProcess {
  readonly url: string
  readonly pid: number
  /** What the server printed so far (stdout and stderr), for failure messages. */
  readonly output: () => string
  /** Stops the process and waits for it to exit. Safe to call more than once. */
  readonly stop: () => Promise<void>
}

const LISTENING = /Admin API listening on (http:\/\/[^\s"]+)/

export const startServerProcess = async (
  env: Readonly<Record<string, string>>,
  options: { readonly script?: string; readonly args?: ReadonlyArray<string>; readonly timeoutMs?: number } = {}
): Promise<ServerProcess> => {
  const dir = mkdtempSync(Path.join(tmpdir(), "fb-server-"))
  const outPath = Path.join(dir, "stdout.log")
  const errPath = Path.join(dir, "stderr.log")
  const out = openSync(outPath, "w")
  const err = openSync(errPath, "w")
  const child: ChildProcess = spawn(process.execPath, [options.script ?? mainScript, ...(options.args ?? [])], {
    cwd: repoRoot,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", out, err]
  })
  closeSync(out)
  closeSync(err)
  const killOnExit = () => child.kill("SIGKILL")
  process.once("exit", killOnExit)

  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8")
    } catch {
      return ""
    }
  }
  const output = () => read(outPath).slice(0, 20_000) + read(errPath).slice(0, 20_000)
  let exited = child.exitCode !== null || child.signalCode !== null
  const exitPromise = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true
      resolve()
    })
  )

  let stopped: Promise<void> | undefined
  const stop = () => {
    stopped ??= (async () => {
      if (!exited) {
        child.kill("SIGTERM")
        const grace = setTimeout(() => child.kill("SIGKILL"), 5_000)
        await exitPromise
        clearTimeout(grace)
      }
      process.removeListener("exit", killOnExit)
      rmSync(dir, { recursive: true, force: true })
    })()
    return stopped
  }

  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  for (;;) {
    // Only the first few lines matter, and they are short.
    const match = LISTENING.exec(read(outPath).slice(0, 4_096))
    if (match !== null) return { url: match[1]!, pid: child.pid!, output, stop }
    if (exited || Date.now() > deadline) {
      const printed = output()
      await stop()
      throw new Error(`server process ${exited ? "exited" : "did not start in time"}; it printed:\n${printed}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** A server process whose stdout is read through a pipe (for tests that read what `npm start` prints). */

export interface RunningServer {
  readonly url: string
  readonly output: () => string
  readonly process: ChildProcess
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export const startServer = (env: Record<string, string>, timeoutMs = 60_000): Promise<RunningServer> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [mainScript], {
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_REQUESTS: "false", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`server did not start in time:\n${out}`))
    }, timeoutMs)
    const stop = (signal: NodeJS.Signals = "SIGTERM") =>
      new Promise<number | null>((done) => {
        if (child.exitCode !== null) return done(child.exitCode)
        const kill = setTimeout(() => child.kill("SIGKILL"), 15_000)
        child.once("exit", (code) => {
          clearTimeout(kill)
          done(code)
        })
        child.kill(signal)
      })
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out)
      if (m && /Try: curl/.test(out)) {
        clearTimeout(timer)
        resolve({ url: m[1]!, output: () => out, process: child, stop })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()))
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${out}`))
    })
  })

export const demoKeyOf = (output: string): string | undefined => /Demo key[^:]*: (sk_[A-Za-z0-9_-]+)/.exec(output)?.[1]

/** An HTTP answer as the process tests read it. */
export interface HttpAnswer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/** One request over `agent` (keep-alive sockets of a test), with a bearer token, an optional JSON body and headers. */
export const callOver = (
  agent: import("node:http").Agent,
  url: string,
  init: {
    readonly method: string
    readonly token: string
    readonly body?: unknown
    readonly headers?: Record<string, string>
  }
) =>
  new Promise<HttpAnswer>((resolve, reject) => {
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body)
    const req = httpRequest(url, {
      agent,
      method: init.method,
      headers: {
        authorization: `Bearer ${init.token}`,
        ...init.headers,
        ...(payload === undefined
          ? {}
          : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
      }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(payload)
  })
