/**
 * A host that owns records the Admin API does not (its loyalty program) and still uses its webhooks and rate limits:
 *
 * - `POST /loyalty-events` is the host's own route (the spec's loyalty endpoint with its own bucket). It
 *   authenticates the merchant's secret key through the core, charges the request with `RateLimits` (the
 *   organization bucket and the endpoint's bucket, atomically, sized by the plan), then in one unit of work saves
 *   the order and records `loyaltyTransaction.created` with `HostEvents`, so subscribed webhooks receive it like any event.
 * - Everything under `/api` is the Admin API, which reports `loyaltyTransaction.created` as emitted (`GET /webhook-events`).
 *
 *   node examples/host-events/server.ts
 */
import { type ApiServerOptions, makeNodeHandler, NodeHostResolver } from "@feedback/adapter-http/server"
import { CoreLayer, Kernel, Organizations, RateLimits, Webhooks } from "@feedback/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { openHostStore, urlOf } from "../shared/HostStore.ts"

/** The catalog names this host records for its own records. */
const HOST_EVENTS: ReadonlyArray<Webhooks.EventName> = ["loyaltyTransaction.created"]

interface Order {
  readonly id: string
  readonly status: string
  readonly totalCents: number
}

export const startHostEventsHost = async (
  port = Number(process.env["PORT"] ?? 4000),
  webhooks?: ApiServerOptions["webhooks"]
) => {
  const store = openHostStore()
  // The API first, so the core services it builds (with the webhook settings) are the ones the host shares.
  const api = await makeNodeHandler(store.services, {
    hostEvents: HOST_EVENTS,
    ...(webhooks === undefined ? {} : { webhooks })
  }, store.runtime.memoMap)
  const core = ManagedRuntime.make(
    CoreLayer.pipe(
      Layer.provide(Layer.succeed(Webhooks.HostEventNames, HOST_EVENTS)),
      Layer.provideMerge(Layer.merge(store.services, NodeHostResolver))
    ),
    { memoMap: store.runtime.memoMap }
  )
  const tenant = await store.provisionTenant("Host events shop")

  /** The host's own table of orders (in memory here; in the same database and transaction on PostgreSQL). */
  const orders = new Map<string, Order & { readonly organizationId: Kernel.OrganizationId }>()

  const loyaltyEvent = (token: string, body: { readonly order?: Order }) =>
    Effect.gen(function*() {
      const { caller } = yield* Organizations.Organizations.use((o) => o.authenticateSecretKey(token))
      if (!Kernel.hasPermission(caller, "customers:write")) {
        return { status: 403, body: { error: { code: "FORBIDDEN", message: "needs customers:write" } } }
      }
      const charged = yield* RateLimits.RateLimits.use((r) => r.charge("POST", "/loyalty-events")).pipe(
        Effect.provideService(Kernel.CurrentCaller, caller)
      )
      const order = body.order
      if (order === undefined || typeof order.id !== "string") {
        return { status: 400, body: { error: { code: "INVALID_REQUEST", message: "body.order is required" } } }
      }
      yield* Kernel.UnitOfWork.use((uow) =>
        uow.transaction(Effect.gen(function*() {
          orders.set(order.id, { ...order, organizationId: caller.organizationId })
          yield* Webhooks.HostEvents.use((h) => h.record(caller.organizationId, "loyaltyTransaction.created", order))
        }))
      )
      return {
        status: 202,
        body: { accepted: order.id },
        remaining: charged._tag === "Admitted" ? charged.remaining : undefined
      }
    }).pipe(
      Effect.catchTag(
        "Unauthorized",
        (e) => Effect.succeed({ status: 401, body: { error: { code: "UNAUTHORIZED", message: e.message } } })
      ),
      Effect.catchTag("TooManyRequests", (e) =>
        Effect.succeed({
          status: 429,
          body: { error: { code: "RATE_LIMITED", message: e.message } },
          retryAfter: e.retryAfterSeconds
        })),
      Effect.catchTag("NotFound", (e) =>
        Effect.succeed({ status: 404, body: { error: { code: "NOT_FOUND", message: e.message } } }))
    )

  const readJson = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    try {
      return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")
    } catch {
      return undefined
    }
  }

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/"
    if (url === "/api" || url.startsWith("/api/")) {
      req.url = url.slice(4) || "/"
      return api.handler(req, res)
    }
    if (req.method === "POST" && url === "/loyalty-events") {
      const token = (req.headers.authorization ?? "").replace(/^Bearer\s+/i, "")
      const body = await readJson(req)
      const result = await core.runPromise(loyaltyEvent(token, (body ?? {}) as { order?: Order }))
      const headers: Record<string, string> = { "content-type": "application/json" }
      if ("retryAfter" in result && result.retryAfter !== undefined) headers["retry-after"] = String(result.retryAfter)
      if ("remaining" in result && result.remaining !== undefined) {
        headers["x-ratelimit-remaining"] = String(result.remaining)
      }
      res.writeHead(result.status, headers).end(JSON.stringify(result.body))
      return
    }
    res.writeHead(404, { "content-type": "application/json" }).end(
      JSON.stringify({ error: { code: "NOT_FOUND", message: "no such route" } })
    )
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return {
    url: urlOf(server.address()),
    key: tenant.secretKey,
    organizationId: tenant.organizationId,
    /** Sets the tenant's plan (what an operator does through `PATCH /operator/organizations/{id}`). */
    setPlan: (patch: { readonly loyaltyEventsPerMinute?: number | null }) =>
      core.runPromise(
        Organizations.Organizations.use((o) => o.updatePlan(tenant.organizationId as Kernel.OrganizationId, patch))
      ),
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await api.dispose()
      await core.dispose()
      await store.runtime.dispose()
    }
  }
}

if (import.meta.main) {
  const host = await startHostEventsHost()
  console.log(`host on ${host.url}: POST /loyalty-events (own route), Admin API under /api — key ${host.key}`)
}
