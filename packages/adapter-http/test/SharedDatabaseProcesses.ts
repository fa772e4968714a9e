/**
 * Two server processes (`src/main.ts`) sharing one fresh database on a PostgreSQL server, for the tests of what must
 * hold across processes. Registers vitest's `beforeAll`/`afterAll`: the processes start one after the other (the first
 * applies the migrations and seeds the demo organization; the second finds them), each with its own keep-alive
 * agent; afterwards they stop and the database is dropped.
 */
import { Effect } from "effect"
import { Agent } from "node:http"
import { afterAll, beforeAll } from "vitest"
import { dropServerDatabase, freshServerDatabase } from "../../adapter-postgres/test/TestDatabase.ts"
import { type ServerProcess, startServerProcess } from "./ServerProcess.ts"

export interface SharedDatabaseProcesses {
  /** Filled by `beforeAll`. */
  readonly servers: ReadonlyArray<ServerProcess>
  /** One per server, in the same order. */
  readonly agents: ReadonlyArray<Agent>
}

export const sharedDatabaseProcesses = (serverUrl: string, options: {
  readonly operatorToken: string
  /** Keep-alive sockets per agent. */
  readonly maxSockets: number
  /** Runs first; its result joins both processes' environment (e.g. a Redis URL). */
  readonly prepare?: () => Promise<Record<string, string>>
  /** Runs last. */
  readonly cleanUp?: () => void
}): SharedDatabaseProcesses => {
  const servers: Array<ServerProcess> = []
  const agents = Array.from({ length: 2 }, () => new Agent({ keepAlive: true, maxSockets: options.maxSockets }))
  let databaseUrl: string | undefined

  beforeAll(async () => {
    databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
    const extra = options.prepare === undefined ? {} : await options.prepare()
    const env = {
      DATABASE_URL: databaseUrl,
      OPERATOR_TOKEN: options.operatorToken,
      LOG_REQUESTS: "false",
      PORT: "0",
      ...extra
    }
    for (let i = 0; i < 2; i++) servers.push(await startServerProcess(env))
  }, 60_000)

  afterAll(async () => {
    for (const agent of agents) agent.destroy()
    await Promise.all(servers.map((s) => s.stop()))
    if (databaseUrl !== undefined) await dropServerDatabase(serverUrl, databaseUrl)
    options.cleanUp?.()
  }, 30_000)

  return { servers, agents }
}
