/**
 * The readiness check on a real server (docs/DECISIONS.md §16): it answers while the server does, and once the server
 * is stopped under a running pool it fails as `StoreUnavailable` within its time bound rather than hanging. Needs
 * PostgreSQL's server binaries to start a throwaway server of its own, which a run with TEST_DATABASE_URL has.
 */
import { Kernel } from "@feedback/core"
import { Exit, ManagedRuntime } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll, expect, it } from "vitest"
import { PgStoreLayer } from "../src/PgStore.ts"
import { describeWithServer } from "./TestDatabase.ts"

const script = Path.resolve(import.meta.dirname, "../../../.ci/postgres.sh")

describeWithServer("readiness on a PostgreSQL server of its own", () => {
  const dirs: Array<string> = []
  /** A throwaway server on a free port (a port taken meanwhile, or a start that fails under load, is retried). */
  const startServer = (): string => {
    for (let attempt = 1;; attempt++) {
      const dir = mkdtempSync(Path.join(tmpdir(), "fb-ready-pg-"))
      dirs.push(dir)
      const port = 30_000 + Math.floor(Math.random() * 10_000)
      try {
        return execFileSync("bash", [script, "start", dir, String(port)], { encoding: "utf8" }).trim()
      } catch (error) {
        if (attempt >= 3) throw error
      }
    }
  }
  const stopAll = () => {
    for (const dir of dirs) execFileSync("bash", [script, "stop", dir])
  }
  let runtime: ManagedRuntime.ManagedRuntime<Kernel.StoreHealth, unknown> | undefined
  afterAll(async () => {
    await runtime?.dispose().catch(() => undefined)
    stopAll()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it(
    "answers while the server runs, and is StoreUnavailable within seconds once it stops",
    { timeout: 120_000 },
    async () => {
      const url = startServer()
      runtime = ManagedRuntime.make(PgStoreLayer({ _tag: "Server", url, maxConnections: 2 }))
      const check = () => runtime!.runPromiseExit(Kernel.StoreHealth.use((h) => h.check))
      expect(Exit.isSuccess(await check())).toBe(true)
      stopAll()
      // It fails rather than waits: a generous bound turns a hang into a failure.
      const down = await Promise.race([
        check(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("the health check hung on a stopped server")), 60_000).unref()
        )
      ])
      expect(Exit.isFailure(down) && JSON.stringify(down.cause).includes("StoreUnavailable")).toBe(true)
    }
  )
})
