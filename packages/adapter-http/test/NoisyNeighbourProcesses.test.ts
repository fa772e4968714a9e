/**
 * Noisy neighbours across processes (docs/FAIRNESS.md): two server processes (`src/main.ts`) share one PostgreSQL
 * database and run its webhook dispatchers and job workers; an aggressor organization at its limits and a victim
 * organization whose latency is compared with the same victim alone, in the same run, its requests spread over both
 * processes. The cases are in `NoisyNeighbours.ts`; bounds as in `NoisyNeighbour.test.ts`.
 */
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Effect } from "effect"
import { Agent } from "node:http"
import { afterAll, beforeAll, it } from "vitest"
import {
  describeWithServer,
  dropServerDatabase,
  freshServerDatabase
} from "../../adapter-postgres/test/TestDatabase.ts"
import * as Noisy from "./NoisyNeighbours.ts"
import { callOver, type ServerProcess, startServerProcess } from "./ServerProcess.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { type Receiver, startReceiver } from "./WebhookReceiver.ts"

describeWithServer("noisy neighbours across two server processes (PostgreSQL)", (serverUrl) => {
  let databaseUrl: string | undefined
  let receiver: Receiver
  /** The API side in this process, to provision organizations: no dispatcher and no job worker of its own. */
  let api: TestServer
  const processes: Array<ServerProcess> = []
  const agents = [new Agent({ keepAlive: true, maxSockets: 8 }), new Agent({ keepAlive: true, maxSockets: 8 })]

  beforeAll(async () => {
    databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
    receiver = await startReceiver()
    api = makeTestServer(PgStoreLayer({ _tag: "Server", url: databaseUrl, maxConnections: 4 }), {
      jobs: { worker: false },
      webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: Noisy.TIMEOUT_MS, dispatcher: false }
    })
    await api.provision()
    const env = {
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_INSECURE: "true",
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_TIMEOUT_MS: String(Noisy.TIMEOUT_MS),
      LOG_REQUESTS: "false"
    }
    for (let i = 0; i < 2; i++) processes.push(await startServerProcess(env))
  }, 120_000)

  afterAll(async () => {
    // The receiver first: its held answers end, so the processes' shutdown does not wait for their timeout.
    await receiver?.close()
    for (const agent of agents) agent.destroy()
    await Promise.all(processes.map((p) => p.stop()))
    await api?.dispose()
    if (databaseUrl !== undefined) await dropServerDatabase(serverUrl, databaseUrl)
  }, 60_000)

  /**
   * A request to process `at % 2`, its JSON body parsed. A file (`rawBody`) goes through the API side in this process,
   * into the same database: the processes' workers run the job.
   */
  const request: Noisy.TenantRequest = async (at, method, path, options) => {
    if (options.rawBody !== undefined) return api.request(method, path, options)
    const answer = await callOver(agents[at % 2]!, `${processes[at % 2]!.url}${path}`, {
      method,
      token: options.token,
      body: options.body,
      ...(options.headers === undefined ? {} : { headers: options.headers })
    })
    return { status: answer.status, body: answer.body === "" ? undefined : JSON.parse(answer.body) }
  }
  const hood = (): Noisy.Neighbourhood => ({
    request,
    receiver,
    provision: () => api.provision(),
    processes: 2,
    floorMs: 3_000
  })

  for (const [name, run, timeoutMs] of Noisy.cases) it(name, () => run(hood()), timeoutMs)
})
