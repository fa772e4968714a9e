/**
 * The API mounted in a host's own server, a line each (docs/EMBEDDING.md). Each mount hands the request below its
 * prefix to the handler, leaves the framework's request where `authenticate` finds it (`HostAuthentication.ts`),
 * and uses a body the host's parser already read (`HostBody.ts`). Typed by shape: this module imports none of the
 * frameworks, which are optional peer dependencies.
 *
 *   app.use("/api", expressMount(api))                             Express 4 or 5 (it strips the mount path)
 *   await app.register(fastifyMount(api), { prefix: "/api" })     Fastify 4 or 5 (disposes the API on close)
 *   app.all("/api/*", honoMount(webApi))                           Hono, any runtime (a fetch-style handler)
 *   createServer((req, res) => mount(req, res) || own(req, res))   node:http, with mount = nodeMount(api, "/api")
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { attachOriginal } from "./HostAuthentication.ts"
import { SPENT_BODY_MESSAGE } from "./HostBody.ts"
import type { NodeHandler } from "./NodeHandler.ts"

/** An Express middleware serving the API; Express strips the path it is mounted at. */
export const expressMount = (api: Pick<NodeHandler, "handler">) => (req: IncomingMessage, res: ServerResponse): void =>
  api.handler(req, res)

/** The part of a Fastify instance the plugin uses. */
export interface FastifyLike {
  readonly prefix: string
  addHook(name: "onClose", hook: () => Promise<void>): unknown
  removeAllContentTypeParsers(): unknown
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: unknown, done: (error: Error | null, body?: unknown) => void) => void
  ): unknown
  all(path: string, handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => void): unknown
}
export interface FastifyRequestLike {
  readonly raw: IncomingMessage
  readonly body?: unknown
}
export interface FastifyReplyLike {
  readonly raw: ServerResponse
  hijack(): unknown
}

/**
 * A Fastify plugin serving the API below the prefix it is registered with. Its content-type parsers (encapsulated
 * to the plugin) leave bodies unread for the API, which reads and limits them itself; Fastify's close disposes the
 * API unless `dispose: false`.
 */
export const fastifyMount =
  (api: NodeHandler, options: { readonly dispose?: boolean } = {}) => async (fastify: FastifyLike): Promise<void> => {
    if (options.dispose !== false) fastify.addHook("onClose", () => api.dispose())
    fastify.removeAllContentTypeParsers()
    fastify.addContentTypeParser("*", (_request, _payload, done) => done(null))
    const prefix = fastify.prefix
    const serve = (request: FastifyRequestLike, reply: FastifyReplyLike) => {
      reply.hijack()
      const url = request.raw.url ?? "/"
      request.raw.url = (url.startsWith(prefix) ? url.slice(prefix.length) : url) || "/"
      if (!request.raw.url.startsWith("/")) request.raw.url = `/${request.raw.url}`
      api.handler(attachOriginal(request.raw, request), reply.raw)
    }
    fastify.all("/", serve)
    fastify.all("/*", serve)
  }

/** The part of Hono's `Context` the mount uses. */
export interface HonoContextLike {
  readonly req: {
    readonly raw: Request
    readonly routePath: string
    arrayBuffer(): Promise<ArrayBuffer>
  }
}

/**
 * A Hono handler serving the API below the route it is given (`/api/*`: the API sees `/…`), over `makeWebHandler`'s
 * handler. A body a host middleware already read (`c.req.json()`) is taken from Hono's cache.
 */
export const honoMount = (
  api: { readonly handler: (request: Request) => Promise<Response> }
) =>
async (c: HonoContextLike): Promise<Response> => {
  const raw = c.req.raw
  const prefix = c.req.routePath.replace(/\/\*$/, "")
  const url = new URL(raw.url)
  if (url.pathname.startsWith(prefix)) url.pathname = url.pathname.slice(prefix.length) || "/"
  let body: ReadableStream<Uint8Array> | ArrayBuffer | null = raw.body
  if (raw.bodyUsed) {
    try {
      body = await c.req.arrayBuffer()
    } catch {
      return Response.json({ error: { code: "INTERNAL", message: SPENT_BODY_MESSAGE } }, { status: 500 })
    }
  }
  const init: RequestInit & { duplex?: "half" } = { method: raw.method, headers: raw.headers, signal: raw.signal }
  if (body !== null && raw.method !== "GET" && raw.method !== "HEAD") {
    init.body = body
    init.duplex = "half"
  }
  return api.handler(attachOriginal(new Request(url, init), c))
}

/**
 * A `node:http` request listener's first step: serves requests below `prefix` (stripping it) and answers true, or
 * answers false and leaves the request to the host.
 */
export const nodeMount = (api: Pick<NodeHandler, "handler">, prefix: string) => {
  const base = prefix.replace(/\/+$/, "")
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? "/"
    if (base !== "" && url !== base && !url.startsWith(`${base}/`) && !url.startsWith(`${base}?`)) return false
    req.url = url.slice(base.length) || "/"
    if (req.url.startsWith("?")) req.url = `/${req.url}`
    api.handler(req, res)
    return true
  }
}
