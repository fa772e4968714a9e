/**
 * docs/DECISIONS.md §18: an `Idempotency-Key` is exact across server processes sharing one database. Two real
 * server processes (`src/main.ts`) on one fresh database of the TEST_DATABASE_URL server receive rounds of the same
 * keyed `POST /sites`, split between them and sent at once: each round creates exactly one site, and every other
 * answer is its replay or a 409 while it runs.
 */
import type { Agent } from "node:http"
import { assert, it } from "vitest"
import { describeWithServer } from "../../adapter-postgres/test/TestDatabase.ts"
import { callOver, type ServerProcess } from "./ServerProcess.ts"
import { sharedDatabaseProcesses } from "./SharedDatabaseProcesses.ts"

const OPERATOR_TOKEN = "idempotency-test-operator-token-of-32-chars"
const ROUNDS = 10
const PER_ROUND = 8

const call = (agent: Agent, url: string, init: { method: string; token: string; body?: unknown; key?: string }) =>
  callOver(agent, url, { ...init, ...(init.key === undefined ? {} : { headers: { "idempotency-key": init.key } }) })

describeWithServer("Idempotency-Key across server processes sharing PostgreSQL", (serverUrl) => {
  const { agents, servers } = sharedDatabaseProcesses(serverUrl, {
    operatorToken: OPERATOR_TOKEN,
    maxSockets: PER_ROUND
  })

  it(
    `${ROUNDS} rounds of ${PER_ROUND} identical keyed requests over two processes each create exactly one site`,
    async () => {
      const [a, b] = servers as [ServerProcess, ServerProcess]
      assert.notStrictEqual(a.pid, b.pid)
      const org = await call(agents[0]!, `${a.url}/operator/organizations`, {
        method: "POST",
        token: OPERATOR_TOKEN,
        body: { name: "Retries" }
      })
      assert.strictEqual(org.status, 201, org.body)
      const organizationId = JSON.parse(org.body).id as string
      const issued = await call(agents[1]!, `${b.url}/operator/organizations/${organizationId}/keys`, {
        method: "POST",
        token: OPERATOR_TOKEN,
        body: { permissions: ["settings:read", "settings:write"] }
      })
      assert.strictEqual(issued.status, 201, issued.body)
      const token = JSON.parse(issued.body).secretKey as string

      let replays = 0
      let conflicts = 0
      for (let round = 0; round < ROUNDS; round++) {
        const key = `round-${round}`
        const answers = await Promise.all(
          Array.from({ length: PER_ROUND }, (_, i) =>
            call(agents[i % 2]!, `${servers[i % 2]!.url}/sites`, {
              method: "POST",
              token,
              key,
              body: { name: `Site ${round}`, domain: null }
            }))
        )
        const ran = answers.filter((r) => r.status === 201 && r.headers["idempotent-replayed"] === undefined)
        assert.strictEqual(ran.length, 1, answers.map((r) => `${r.status} ${r.body}`).join("\n"))
        for (const r of answers) {
          if (r.status === 201) {
            assert.strictEqual(r.body, ran[0]!.body)
            if (r !== ran[0]) replays++
          } else {
            assert.strictEqual(r.status, 409, r.body)
            assert.strictEqual(JSON.parse(r.body).error.code, "CONFLICT")
            conflicts++
          }
        }
      }
      console.log(`idempotency across processes: ${ROUNDS} sites, ${replays} replays, ${conflicts} conflicts`)
      const sites = await call(agents[0]!, `${a.url}/sites?limit=100`, { method: "GET", token })
      assert.strictEqual(sites.status, 200, sites.body)
      assert.strictEqual(JSON.parse(sites.body).data.length, ROUNDS)
    },
    60_000
  )
})
