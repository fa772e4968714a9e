/**
 * docs/DECISIONS.md §3: "the same guarantees hold with several server processes sharing one database: no over-admission".
 * Two real server processes (`src/main.ts`) share one fresh database on the TEST_DATABASE_URL server; a burst of
 * 2,400 concurrent requests for one organization is split across them, and the number admitted must lie within the
 * token bucket's exact bound: at least the ceiling, at most the ceiling plus what refilled while the burst ran.
 * Every other answer must be a well-formed 429. The same burst runs again with the limiter on a shared Redis
 * (`RATE_LIMIT_URL`, docs/DECISIONS.md §22), and the buckets it left in Redis show that Redis decided.
 */
import type { Agent } from "node:http"
import { assert, describe, it } from "vitest"
import { describeWithServer } from "../../adapter-postgres/test/TestDatabase.ts"
import { callOver, type HttpAnswer, type ServerProcess } from "./ServerProcess.ts"
import { sharedDatabaseProcesses } from "./SharedDatabaseProcesses.ts"
import { redisAvailable, startRedis } from "../../adapter-redis/test/TestRedis.ts"
import { createClient } from "redis"

const OPERATOR_TOKEN = "processes-test-operator-token-of-32-characters"
const CEILING = 600 // apiRequestsPerMinute: 10 tokens per second
const REQUESTS = 2_400
const SOCKETS_PER_PROCESS = 32

interface Answer extends HttpAnswer {
  readonly process: number
}

const call = (
  agent: Agent,
  url: string,
  init: { method: string; token: string; body?: unknown },
  processIndex: number
) => callOver(agent, url, init).then((answer): Answer => ({ ...answer, process: processIndex }))

type Limiter = "PostgreSQL" | "Redis"

const burstAcrossProcesses = (serverUrl: string, limiter: Limiter) => {
  let redis: Awaited<ReturnType<typeof startRedis>> | undefined
  const { agents, servers } = sharedDatabaseProcesses(serverUrl, {
    operatorToken: OPERATOR_TOKEN,
    maxSockets: SOCKETS_PER_PROCESS,
    prepare: async () => {
      if (limiter !== "Redis") return {}
      redis = await startRedis()
      return { RATE_LIMIT_URL: redis.url }
    },
    cleanUp: () => redis?.stop()
  })

  it(
    `${limiter} limiter: ${REQUESTS} concurrent requests over two processes admit within the exact bound; the rest are well-formed 429s`,
    async () => {
      const [a, b] = servers as [ServerProcess, ServerProcess]
      assert.notStrictEqual(a.pid, b.pid)
      const org = await call(agents[0]!, `${a.url}/operator/organizations`, {
        method: "POST",
        token: OPERATOR_TOKEN,
        body: { name: "Burst", apiRequestsPerMinute: CEILING }
      }, 0)
      assert.strictEqual(org.status, 201, org.body)
      const organizationId = JSON.parse(org.body).id as string
      const key = await call(agents[1]!, `${b.url}/operator/organizations/${organizationId}/keys`, {
        method: "POST",
        token: OPERATOR_TOKEN,
        body: { permissions: ["settings:read"] }
      }, 1)
      assert.strictEqual(key.status, 201, key.body)
      const token = JSON.parse(key.body).secretKey as string

      // Warm both processes' connection pools and key lookups with requests that cost nothing to the bucket under
      // test (another organization's demo key is not known, so: unauthenticated calls, which are never charged).
      await Promise.all(
        servers.flatMap((s, i) =>
          Array.from(
            { length: SOCKETS_PER_PROCESS },
            () => call(agents[i]!, `${s.url}/organization`, { method: "GET", token: "sk_warmup" }, i)
          )
        )
      )

      const started = performance.now()
      const answers = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => {
        const p = i % 2
        return call(agents[p]!, `${servers[p]!.url}/organization`, { method: "GET", token }, p)
      }))
      const elapsedMs = performance.now() - started

      const admitted = answers.filter((r) => r.status === 200)
      const refused = answers.filter((r) => r.status !== 200)
      // Refill is 10 tokens per second, credited per whole millisecond; every decision happened within the window.
      const upperBound = CEILING + Math.floor((elapsedMs * CEILING) / 60_000)
      const summary = `admitted ${admitted.length} of ${REQUESTS} in ${elapsedMs.toFixed(0)} ms ` +
        `(bound ${CEILING}..${upperBound}; process A admitted ${admitted.filter((r) => r.process === 0).length}, ` +
        `process B ${admitted.filter((r) => r.process === 1).length})`
      console.log(summary)
      // Two independent buckets would admit twice the ceiling: the window must be short enough to tell.
      assert.isBelow(upperBound, 2 * CEILING, `the burst took too long to prove anything: ${summary}`)
      assert.isAtLeast(admitted.length, CEILING, summary)
      assert.isAtMost(admitted.length, upperBound, summary)
      // Both processes admitted part of the burst: the bound above is a property of the shared bucket.
      assert.isAbove(admitted.filter((r) => r.process === 0).length, 0, summary)
      assert.isAbove(admitted.filter((r) => r.process === 1).length, 0, summary)

      for (const r of admitted) {
        assert.strictEqual(r.headers["x-rate-limit-cost"], "1")
        assert.strictEqual(r.headers["x-ratelimit-limit"], String(CEILING))
      }
      for (const r of refused) {
        assert.strictEqual(r.status, 429, r.body)
        assert.strictEqual(r.headers["content-type"], "application/json")
        const body = JSON.parse(r.body)
        assert.strictEqual(body.error.code, "TOO_MANY_REQUESTS")
        assert.match(body.error.message, /retry after 1 second\./)
        // At 10 tokens per second the missing token is at most 100 ms away.
        assert.strictEqual(r.headers["retry-after"], "1")
        assert.strictEqual(r.headers["x-rate-limit-cost"], "1")
        assert.strictEqual(r.headers["x-ratelimit-limit"], String(CEILING))
        assert.strictEqual(r.headers["x-ratelimit-remaining"], "0")
      }
      if (redis !== undefined) {
        // The organization's bucket lives in Redis (and nowhere else decided): its level is what the burst left.
        const client = await createClient({ url: redis.url }).connect()
        try {
          const keys = await client.keys(`feedback:rl:{${organizationId}}:*`)
          assert.deepStrictEqual(keys, [`feedback:rl:{${organizationId}}:org`])
        } finally {
          client.destroy()
        }
      }
    },
    120_000
  )
}

describeWithServer("rate limit across server processes sharing PostgreSQL", (serverUrl) => {
  describe("limiter in PostgreSQL", () => burstAcrossProcesses(serverUrl, "PostgreSQL"))
  if (redisAvailable) {
    describe("limiter in a shared Redis (RATE_LIMIT_URL)", () => burstAcrossProcesses(serverUrl, "Redis"))
  } else if (process.env["CI"] === "true") {
    it("runs the Redis limiter across processes", () => assert.fail("CI must provide Redis (TEST_REDIS_URL)"))
  } else {describe.skip("limiter in a shared Redis — skipped: no TEST_REDIS_URL and no redis-server on PATH", () =>
      burstAcrossProcesses(serverUrl, "Redis"))}
})
