/**
 * `GET /ready` (docs/DECISIONS.md §16): 200 while the store answers, 503 `SERVICE_UNAVAILABLE` in the envelope when it
 * does not, no key needed; `/health` never touches the store. The PostgreSQL check itself is proven against a server
 * that is stopped under it (`packages/adapter-postgres/test/PgStoreHealth.test.ts`).
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Kernel } from "@feedback/core"
import { Effect, Layer } from "effect"
import { afterAll, expect, it } from "vitest"
import { makeTestServer } from "./TestServer.ts"

const healthy = makeTestServer()
const broken = makeTestServer(
  Layer.merge(
    MemoryStoreLayer,
    Layer.succeed(
      Kernel.StoreHealth,
      Kernel.StoreHealth.of({
        check: Effect.fail(new Kernel.StoreUnavailable({ message: "The database does not answer; retry shortly." })),
        poolUsage: Effect.undefined
      })
    )
  )
)
afterAll(async () => {
  await healthy.dispose()
  await broken.dispose()
})

it("answers 200 while the store answers", async () => {
  const res = await healthy.request("GET", "/ready")
  expect(res.status).toBe(200)
  expect(res.body).toEqual({ status: "ok" })
  expect(res.headers.get("x-request-id")).toMatch(/^req_/)
})

it("answers 503 in the error envelope when the store does not, while /health stays 200", async () => {
  const res = await broken.request("GET", "/ready")
  expect(res.status).toBe(503)
  expect(res.body).toEqual({
    error: { code: "SERVICE_UNAVAILABLE", message: "The database does not answer; retry shortly." }
  })
  expect((await broken.request("GET", "/health")).status).toBe(200)
})
