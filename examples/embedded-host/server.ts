/**
 * Embedding the Admin API inside another Node host: a plain `node:http` server that serves its own routes and hands
 * everything under `/api/` to the Admin API's fetch-style handler, on the in-memory store. Any host that speaks
 * `Request → Response` (Express via an adapter, Fastify, Hono, a serverless runtime) embeds it the same way.
 *
 *   node examples/embedded-host/server.ts    then    curl localhost:4000/api/health
 */
import { IdGenerator, Organizations, permissions } from "@feedback/core"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { makeWebHandler } from "@feedback/adapter-http/server"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

const PREFIX = "/api"

export const startEmbeddedHost = async (port = Number(process.env["PORT"] ?? 4000)) => {
  // One set of store services shared by the host's own code (provisioning) and the API handler.
  const services = Layer.merge(MemoryStoreLayer, IdGenerator.uuidV7)
  const runtime = ManagedRuntime.make(Organizations.layer.pipe(Layer.provideMerge(services)))
  // Sharing the runtime's memo map makes the handler reuse the very same store instead of building another.
  const { handler, dispose } = makeWebHandler(services, {}, runtime.memoMap)

  // The host provisions its tenant directly through the core, no HTTP involved.
  const key = await runtime.runPromise(Effect.gen(function*() {
    const org = yield* Organizations.use((o) => o.createOrganization({ name: "Embedded shop" }))
    return (yield* Organizations.use((o) => o.issueSecretKey(org.id, { permissions }))).secretKey
  }))

  const toRequest = (req: IncomingMessage, body: Buffer) =>
    new Request(`http://${req.headers.host ?? "localhost"}${(req.url ?? "/").slice(PREFIX.length) || "/"}`, {
      method: req.method ?? "GET",
      headers: req.headers as Record<string, string>,
      ...(body.length > 0 ? { body } : {})
    })

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith(PREFIX)) {
      res.writeHead(200, { "content-type": "text/plain" }).end("the host's own page\n")
      return
    }
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const response = await handler(toRequest(req, Buffer.concat(chunks)))
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : port}`
  return {
    url,
    key,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await dispose()
      await runtime.dispose()
    }
  }
}

if (import.meta.main) {
  const host = await startEmbeddedHost()
  console.log(`host on ${host.url}; Admin API under ${host.url}${PREFIX} — key ${host.key}`)
}
