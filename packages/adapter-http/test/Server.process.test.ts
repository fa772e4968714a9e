/**
 * `npm start` as a newcomer runs it: a real process on a port, on each kind of store, stopped and started again.
 */
import { Effect } from "effect"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { AdminClient, AdminClientLayer } from "@feedback/client/effect"
import { freshServerDatabase, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { demoKeyOf, startServer } from "./ServerProcess.ts"

const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

const getOrganization = (url: string, key: string) =>
  fetch(`${url}/organization`, { headers: { authorization: `Bearer ${key}` } })

describe("npm start", () => {
  // Two starts on a fresh embedded database (every migration, then the demo organization with its storefront): on a
  // loaded machine this takes over a minute.
  it(
    "on embedded PGlite: prints URL, docs and a demo key; data and key survive a restart",
    { timeout: 240_000 },
    async () => {
      const dataDir = mkdtempSync(Path.join(tmpdir(), "fb-start-"))
      dirs.push(dataDir)
      const first = await startServer({ DATA_DIR: dataDir }, 180_000)
      try {
        expect(first.output()).toContain(`${first.url}/docs`)
        const key = demoKeyOf(first.output())
        expect(key).toMatch(/^sk_/)
        // One format on stdout (docs/DECISIONS.md §19): every line JSON, the start-up facts as fields too.
        const lines = first.output().split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
        expect(lines.find((l) => l.url === first.url)).toMatchObject({ level: "info", docs: `${first.url}/docs` })
        expect(lines.find((l) => l.demoKey !== undefined)?.demoKey).toBe(key)
        const res = await getOrganization(first.url, key!)
        expect(res.status).toBe(200)
        const org = await res.json() as { id: string; name: string }
        expect(org.name).toBe("Demo organization")
        expect((await fetch(`${first.url}/docs`)).status).toBe(200)
        // The embedded database is reachable only by this user: its directory is private.
        expect(statSync(dataDir).mode & 0o077).toBe(0)
        expect(await first.stop("SIGTERM")).toBe(0)

        const second = await startServer({ DATA_DIR: dataDir }, 180_000)
        try {
          expect(demoKeyOf(second.output())).toBeUndefined()
          expect(second.output()).not.toContain(key!)
          const again = await getOrganization(second.url, key!)
          expect(again.status).toBe(200)
          expect(((await again.json()) as { id: string }).id).toBe(org.id)
        } finally {
          await second.stop()
        }
      } finally {
        await first.stop()
      }
    }
  )

  it("DATABASE_URL=memory works the same, and the typed client calls it", async () => {
    const server = await startServer({ DATABASE_URL: "memory", DEMO_SECRET_KEY: "sk_" + "d".repeat(40) })
    try {
      expect(demoKeyOf(server.output())).toBe("sk_" + "d".repeat(40))
      const org = await Effect.runPromise(
        Effect.gen(function*() {
          const client = yield* AdminClient
          return yield* client.organization.get()
        }).pipe(Effect.provide(AdminClientLayer({ baseUrl: server.url, secretKey: "sk_" + "d".repeat(40) })))
      )
      expect(org.name).toBe("Demo organization")
      const error = await Effect.runPromise(
        Effect.gen(function*() {
          const client = yield* AdminClient
          return yield* Effect.flip(client.organization.get())
        }).pipe(Effect.provide(AdminClientLayer({ baseUrl: server.url, secretKey: "sk_" + "x".repeat(40) })))
      )
      expect(error._tag).toBe("Unauthorized")
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it.skipIf(serverUrl === undefined)(
    "DATABASE_URL=postgres://… with DEMO=true works the same (needs TEST_DATABASE_URL)",
    async () => {
      const url = await Effect.runPromise(freshServerDatabase(serverUrl!))
      const server = await startServer({ DATABASE_URL: url, DEMO: "true" })
      try {
        const key = demoKeyOf(server.output())!
        expect((await getOrganization(server.url, key)).status).toBe(200)
      } finally {
        expect(await server.stop()).toBe(0)
      }
    }
  )
})
