/** Starts `npm start`'s entry point as a real process for tests, and stops it. */
import { spawn, type ChildProcess } from "node:child_process"
import * as Path from "node:path"

export const mainScript = Path.resolve(import.meta.dirname, "../src/main.ts")

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
      const m = /listening on (http:\/\/[^\s]+)/.exec(out)
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
