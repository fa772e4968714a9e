/**
 * Shared pieces of the survey benchmarks (`enrol`, `send`, `idle`): a standalone server on a fresh PostgreSQL
 * database, an organization with an active flow triggered on `order.fulfilled`, and orders imported in bulk
 * (`POST /orders/import` starts no survey).
 */
import { type ServerProcess, startServerProcess } from "../../packages/adapter-http/test/ServerProcess.ts"
import { benchDatabaseServer, freshDatabase, OPERATOR_TOKEN, provision } from "./common.ts"
import { type StatementCounter, statementCounter } from "./statement-counter.ts"

export const call = async (base: string, method: string, path: string, key: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`)
  return JSON.parse(text) as any
}

export const requireServer = (): string => {
  if (benchDatabaseServer === undefined) {
    console.error("Set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server")
    process.exit(2)
  }
  return benchDatabaseServer
}

export interface FlowServer {
  readonly server: ServerProcess
  readonly databaseUrl: string
  readonly databaseName: string
  readonly base: string
  readonly key: string
  readonly organizationId: string
  /** The statements the server sent its database (with `countStatements`: it then connects through a proxy). */
  readonly statements: StatementCounter | undefined
  readonly stop: () => Promise<void>
}

/**
 * A server on a fresh database (nothing in it without `flow`); with `flow`, an organization whose guided setup created an active flow that asks
 * `delayDays` after `order.fulfilled` (no reminder), and a product `mug`. With `countStatements` the server reaches
 * its database through `statementCounter`'s proxy, which counts what it sends.
 */
export const flowServer = async (
  env: Record<string, string>,
  flow: { readonly delayDays: number } | undefined,
  options: {
    readonly countStatements?: boolean
    readonly capture?: (text: string, parameters: ReadonlyArray<string | null>) => void
  } = {}
): Promise<FlowServer> => {
  const db = await freshDatabase(requireServer())
  const statements = options.countStatements === true || options.capture !== undefined
    ? await statementCounter(db.url, options.capture)
    : undefined
  const server = await startServerProcess({
    DATABASE_URL: statements?.url ?? db.url,
    OPERATOR_TOKEN,
    LOG_REQUESTS: "false",
    ...env
  })
  const stop = async () => {
    await server.stop()
    await statements?.close()
    await db.drop()
  }
  if (flow === undefined) {
    return {
      server,
      databaseUrl: db.url,
      databaseName: new URL(db.url).pathname.slice(1),
      base: server.url,
      key: "",
      organizationId: "",
      statements,
      stop
    }
  }
  try {
    const { key, organizationId } = await provision(server.url, 1_000_000, [
      "settings:write",
      "settings:read",
      "products:write",
      "orders:write",
      "orders:read",
      "reviews:read",
      "customers:read"
    ])
    await call(server.url, "POST", "/organization/setup/reviews", key, {
      data: { triggerEvent: "order.fulfilled", delayDays: flow.delayDays, reminder: false }
    })
    await call(server.url, "POST", "/products", key, { slug: "mug", title: "Mug" })
    return {
      server,
      databaseUrl: db.url,
      databaseName: new URL(db.url).pathname.slice(1),
      base: server.url,
      key,
      organizationId,
      statements,
      stop
    }
  } catch (e) {
    await stop()
    throw e
  }
}

/** `n` orders of the product `mug`, each by its own customer, imported 10,000 a request with `status`. */
export const importOrders = async (s: FlowServer, n: number, status: "open" | "fulfilled") => {
  for (let done = 0; done < n; done += 10_000) {
    const data = Array.from({ length: Math.min(10_000, n - done) }, (_, i) => ({
      externalId: `bench-${done + i}`,
      customer: `shopper-${done + i}@example.com`,
      lines: [{ productSlug: "mug" }],
      status
    }))
    await call(s.base, "POST", "/orders/import", s.key, { data, strict: true })
  }
}
