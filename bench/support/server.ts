/**
 * The admin API server as `src/main.ts` wires it, with one switch for benchmarks: `BENCH_LIMITER=off` replaces the
 * rate-limit store by one whose spend always admits (and still reports the headers), so the difference between
 * `on` and `off` is the limiter's own cost. Store by `DATABASE_URL` as in main.ts (`memory`, `postgres://…`, unset
 * for embedded PGlite in `DATA_DIR`). Prints the same "Admin API listening on <url>" line.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { RateLimits } from "@feedback/core"
import { Effect, Layer, Redacted, Scheduler } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import { ApiRoutes, apiMiddleware } from "../../packages/adapter-http/src/server/ApiServer.ts"
import { chooseStore, storeLayer } from "../../packages/adapter-http/src/server/StoreSelection.ts"
import { TurnScheduler } from "../../packages/adapter-http/src/server/TurnScheduler.ts"

const env = process.env
const limiter = env["BENCH_LIMITER"] ?? "on"
const options = {
  operatorToken: Redacted.make(env["OPERATOR_TOKEN"] ?? "bench-operator-token-of-at-least-32-characters"),
  logRequests: env["LOG_REQUESTS"] === "true"
}

export const AlwaysAdmit = Layer.succeed(
  RateLimits.RateLimitRepository,
  RateLimits.RateLimitRepository.of({
    spend: (_organizationId, buckets, cost) => {
      const limit = buckets[0]?.spec.ceiling ?? 0
      return Effect.succeed({ _tag: "Admitted", cost, limit, remaining: limit, fullInSeconds: 0 })
    }
  })
)

const store = storeLayer(chooseStore(env["DATABASE_URL"], env["DATA_DIR"] ?? "./.data"))
const services = limiter === "off" ? Layer.merge(store, AlwaysAdmit) : store

const Announce = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  yield* Effect.sync(() =>
    process.stdout.write(`Admin API listening on ${HttpServer.formatAddress(server.address)} (limiter ${limiter})\n`)
  )
}))

const App = HttpRouter.serve(ApiRoutes(options), {
  disableLogger: true,
  disableListenLog: true,
  middleware: apiMiddleware(options)
}).pipe(
  Layer.merge(Announce),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(env["PORT"] ?? 0), host: "127.0.0.1" })),
  Layer.provide(services)
)

const launched = Layer.launch(App) as Effect.Effect<never, unknown>
// As main.ts runs it (docs/DECISIONS.md §74); BENCH_SCHEDULER=default measures Effect's own scheduler beside it.
NodeRuntime.runMain(
  process.env.BENCH_SCHEDULER === "default"
    ? launched
    : Effect.provideService(launched, Scheduler.Scheduler, new TurnScheduler())
)
